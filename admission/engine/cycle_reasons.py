"""What a cycle says of the workloads it leaves waiting (PURE), and the caches for it.

Most waiting workloads get their reasons after the admission pass, against the final
state (that is the state they wait in), shared per (queue, shape, pool version): in a
full cohort tens of thousands of them repeat a few shapes. ``WaitReasons`` owns those
caches; each names what it is keyed by, and the pool version in a key is what
invalidates it. ``ExceedsNodeCapacity`` is kept per (queue, shape) for the whole cycle:
nodes do not grow during one.
"""

from __future__ import annotations

from collections.abc import Mapping

from admission.engine import reasons
from admission.engine.capacity import Capacity, demands
from admission.engine.cycle_memo import CycleMemo
from admission.engine.flavors import Assigner, Mode, Plan
from admission.engine.node_limits import HoldsMemo, oversized
from admission.engine.reservations import Reservations
from admission.engine.statuses import Waiting
from admission.engine.types import Reason
from admission.engine.workload import Holdings
from quota.core.model import ClusterQueue, ReclaimWithinCohort
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload

Usage = Mapping[FlavorResource, int]


class WaitReasons:
    """Reasons and hints for one cycle's waiting workloads."""

    def __init__(self, queues: Mapping[str, ClusterQueue], tree: QuotaTree,
                 holdings: Holdings, memo: CycleMemo, assigner: Assigner,
                 capacity: Capacity | None, reservations: Reservations) -> None:
        self.queues = queues
        self.reservations = reservations
        self.tree = tree
        self.holdings = holdings
        self.memo = memo
        self.assigner = assigner
        self.capacity = capacity
        # (pool root, slot, pool version) -> the top holders of the slot
        self.holder_cache: dict[tuple[str, FlavorResource, int], list[str]] = {}
        # (queue, shape, final pool version) -> the reasons and hints of a parked workload
        self.parked: dict[tuple[str, int, int], tuple[list[Reason], list[str]]] = {}
        self.reason_memo: dict[object, Reason] = {}
        self.hint_memo: dict[object, list[str]] = {}
        # (queue, shape) -> ExceedsNodeCapacity, or None where some node can hold its pods
        self.too_big: dict[tuple[str, int], Reason | None] = {}
        self.holds: HoldsMemo = {}  # (flavors, one pod's requests) -> some node holds it

    def oversized(self, cq: ClusterQueue, workload: Workload, shape_id: int) -> Reason | None:
        """``ExceedsNodeCapacity`` when no node can ever hold one of its pods (None
        without nodes)."""
        if self.capacity is None:
            return None
        key = (cq.name, shape_id)
        if key not in self.too_big:
            self.too_big[key] = oversized(self.capacity, cq, workload, self.assigner.mismatch,
                                          self.holds)
        return self.too_big[key]

    def quota(self, name: str, key: str, workload: Workload) -> tuple[list[Reason], list[str]]:
        """The reasons and hints of a workload parked in queue ``name``, in the final state."""
        cq = self.queues[name]
        shape_id = self.memo.shape(workload, key)
        state = (cq.name, shape_id, self.tree.version(cq.name))
        parked = self.parked.get(state)
        if parked is None:
            # From the verdict's numbers, not a Plan: tens of thousands of workloads wait
            # in distinct (queue, shape) states, and a Plan per state cost more than the
            # whole admission pass.
            found = self.memo.verdict(cq, workload, shape_id).explain(self.memo.numbers(name))
            too_big = self.oversized(cq, workload, shape_id)
            if found.mode is Mode.FIT:
                # It fits once the cycle's reservations are given back: one held it back.
                held = self.reservations.holding(cq.name, workload, found.usage)
                if too_big:
                    parked = ([too_big], [])
                elif held is not None:
                    parked = ([reasons.reserved_by_higher_priority(
                        cq.name, held.holder, held.cluster_queue, held.priority,
                        preempting=held.preempting)], [])
                else:
                    parked = self._room(workload, found.usage)
            else:
                tree = self.tree
                reclaimable = self._reclaimable(cq, found.usage)
                hints = reasons.short_hints(cq.name, sorted(found.short), tree, reclaimable,
                                            self.hint_memo)
                parked = (reasons.explained_reasons(cq.name, found.findings, tree,
                                                    self.holders, self.reason_memo), hints)
                if too_big:  # it can never run: hints on freeing quota would mislead
                    parked = ([too_big, *parked[0]], [])
            self.parked[state] = parked
        return parked

    def no_room(self, cq: ClusterQueue, workload: Workload, plan: Plan) -> Waiting:
        """Why a workload the quota admits waits for its flavors' nodes."""
        assert self.capacity is not None
        found = self.capacity.shortage(demands(workload, plan.pod_sets))
        if found is None:  # room appeared after the decision: the next cycle takes it
            return Waiting(cq.name, [reasons.pending_evaluation()])
        return Waiting(cq.name, [found.reason], list(found.hints))

    def plan_reasons(self, plan: Plan) -> list[Reason]:
        return reasons.plan_reasons(plan, self.tree, self.holders, self.reason_memo)

    def holders(self, cq: str, fr: FlavorResource) -> list[str]:
        key = (self.tree.root(cq), fr, self.tree.version(cq))
        found = self.holder_cache.get(key)
        if found is None:
            found = self.holdings.top(self.tree.members(cq), fr)
            self.holder_cache[key] = found
        return found

    def _room(self, workload: Workload, usage: Usage) -> tuple[list[Reason], list[str]]:
        """Why a workload its quota admits in the final state waits: its flavors' nodes are
        short (the quick filter parked it), or room was freed after it was evaluated and
        the next cycle takes it."""
        if self.capacity is not None and len(workload.pod_sets) == 1:
            pod_set = workload.pod_sets[0]
            flavors = tuple(dict.fromkeys(flavor for flavor, _ in usage))
            found = self.capacity.shortage([(pod_set, pod_set.count, flavors)])
            if found is not None:
                return [found.reason], list(found.hints)
        return [reasons.pending_evaluation()], []

    def _reclaimable(self, cq: ClusterQueue, usage: Usage) -> bool:
        return cq.preemption.reclaim_within_cohort is not ReclaimWithinCohort.NEVER and all(
            amount <= self.tree.nominal(cq.name, fr) for fr, amount in usage.items()
        )
