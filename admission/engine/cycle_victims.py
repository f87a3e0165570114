"""The cycle's victim searches (PURE): a mixin of the admission cycle.

Whether a search could find anyone, the search itself (quota, and where the flavors have
nodes, placement), and what a failed one is remembered by: most pending workloads in a
full cohort repeat a few shapes, and a failure stands until the slots it read change.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from admission.engine.candidates import FailedSearches
from admission.engine.capacity import Capacity, demands
from admission.engine.cycle_memo import CycleMemo
from admission.engine.flavors import Plan
from admission.engine.fungible import slots_stamp
from admission.engine.hierarchy import hierarchical_victims
from admission.engine.preemption import Search, Victim, Wanted, can_preempt, find_victims
from admission.engine.types import Snapshot
from admission.engine.workload import Holdings
from quota.core.model import ClusterQueue
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload


class VictimSearches:
    """What ``_Cycle`` searches victims with; the cycle sets the attributes."""

    snapshot: Snapshot
    tree: QuotaTree
    holdings: Holdings
    capacity: Capacity | None
    memo: CycleMemo
    search: Search
    failed: FailedSearches
    open_holders: dict[str, int]  # per pool, the holders not yet protected
    # (queue, shape, pool version) -> (priority, victims min-runtime kept) of a failure
    held_back: dict[tuple[str, int, int], tuple[int, dict[str, datetime]]]

    def _may_search(self, root: str) -> bool:
        """Whether a victim search in the pool could find anyone not yet protected."""
        return bool(self.open_holders.get(root))

    def _searchable(self, cq: ClusterQueue) -> bool:
        """Whether a victim search for ``cq`` could find anyone at all."""
        return self._may_search(self.tree.root(cq.name)) and (
            can_preempt(cq) or self._any_evicting(cq))

    def _victims(self, cq: ClusterQueue, workload: Workload,
                 usage: Mapping[FlavorResource, int], shape_id: int,
                 partial: Plan | None = None) -> tuple[Victim, ...] | None:
        """The victims whose eviction lets ``workload`` be admitted (and, where its flavors
        have nodes, placed), or None; ``partial``: at that plan's fewer pods. Failures are
        cached by shape and pool state: in a full cohort most pending workloads repeat a
        few shapes, and nothing changes."""
        shape = shape_id if partial is None else None  # fewer pods: not the shape's answer
        if self.search.held_back:
            self.search.held_back.clear()
        if not self._searchable(cq):
            return None
        # Known failures first, by the verdict's usage (a plan's differs only in FIT mode,
        # which no failure of quota alone can cover): most searches end here.
        if self.failed.known(cq, workload, usage, shape, stamp=self._stamp(cq, usage)):
            if self.held_back:  # what min-runtime kept from an equal search keeps from this one
                held = self.held_back.get((cq.name, shape_id, self.tree.version(cq.name)))
                if held is not None and held[0] == workload.priority:
                    self.search.held_back.update(held[1])
            return None
        wanted, capacity = Wanted(cq.name, usage), self.capacity
        if capacity is not None:
            plan = partial or self.memo.plan(cq, workload, shape_id)
            pods = demands(workload, plan.pod_sets)
            if any(capacity.limits(names) for _, _, names in pods):
                wanted = Wanted(cq.name, plan.usage,
                                lambda keys: capacity.places_without(keys, pods))
        flat = self.snapshot.fair_sharing or self.tree.pool_height(cq.name) < 2
        victims = (find_victims if flat else hierarchical_victims)(self.search, cq, workload,
                                                                   wanted)
        if not victims:
            # A failure to place proves nothing about other shapes of equal quota.
            self.failed.add(cq, workload, wanted.usage, shape,
                            by_amount=wanted.placeable is None,
                            stamp=self._stamp(cq, wanted.usage))
            if self.search.held_back:
                state = (cq.name, shape_id, self.tree.version(cq.name))
                self.held_back[state] = (workload.priority, dict(self.search.held_back))
        return victims

    def _stamp(self, cq: ClusterQueue, usage: Mapping[FlavorResource, int]) -> object:
        """What a failed search for ``usage`` is remembered by (``slots_stamp``); with
        nodes, the pool version: the nodes' state is not in the slots'."""
        if self.capacity is not None:
            return None
        return slots_stamp(self.search, cq.name, sorted(usage))

    def _any_evicting(self, cq: ClusterQueue) -> bool:
        return any(self.holdings.evicting.get(name) for name in self.tree.members(cq.name))
