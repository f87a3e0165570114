"""What one cycle remembers (PURE): shapes, verdicts, outcomes and plans, by pool state.

In a full cohort most pending workloads repeat a few shapes and nothing changes between
them, so a cycle decides each (queue, shape, pool state) once. A workload's shape is a
small int (cache keys hash an int instead of a nested tuple); a queue's pool state is
its ``QuotaTree.version``, or for plans the queue's own (available, used) per slot it
names: admissions elsewhere in a full cohort change the version but rarely this view, so
most plans survive them.
"""

from __future__ import annotations

from collections.abc import Mapping

from admission.engine.capacity import Capacity
from admission.engine.flavors import Assigner, Plan
from admission.engine.types import Snapshot
from admission.engine.verdict import Outcome, Verdict, layout
from admission.engine.workload import Shape, shape
from quota.core.model import ClusterQueue
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload

# Per slot of a queue: (available, potential, nominal - used), what ``Verdict.explain`` reads.
Numbers = dict[FlavorResource, tuple[int, int, int]]


class CycleMemo:
    """The caches of one cycle over one ``QuotaTree``."""

    def __init__(self, snapshot: Snapshot, tree: QuotaTree, assigner: Assigner,
                 capacity: Capacity | None) -> None:
        self.tree = tree
        self.assigner = assigner
        self.capacity = capacity
        # A flavor's min-priority makes the priority part of the shape.
        self.priority_floors = any(f.min_priority is not None
                                   for f in snapshot.flavors.values())
        # Per ClusterQueue, every (flavor, resource) slot its quotas name, in order.
        self.slots: Mapping[str, tuple[FlavorResource, ...]] = {
            name: tuple((quotas.flavor, resource) for group in cq.resource_groups
                        for quotas in group.flavors for resource in group.covered_resources)
            for name, cq in snapshot.cluster_queues.items()
        }
        self.kept = snapshot.shapes  # shape ids kept across cycles, when the loop has them
        if self.kept is not None:
            self.kept.prune(snapshot.workloads)
        self._shape_of: dict[str, int] = {}
        self._shape_ids: dict[Shape, int] = {}
        layouts: dict[object, int] = {}
        self._layouts = {name: layouts.setdefault(layout(cq), len(layouts))
                         for name, cq in snapshot.cluster_queues.items()}
        self._verdicts: dict[tuple[int, int], Verdict] = {}
        self._outcomes: dict[tuple[str, int, int], Outcome] = {}
        self._plans: dict[tuple[str, int, tuple[int, ...]], Plan] = {}
        self._views: dict[str, tuple[int, tuple[int, ...]]] = {}
        self._numbers: dict[str, tuple[int, Numbers]] = {}

    def shape(self, workload: Workload, key: str | None = None) -> int:
        """The workload's shape id: equal ids, equal decisions in equal pool states."""
        key = workload.key if key is None else key
        if self.kept is not None:
            return self.kept.id_of(key, workload, self.priority_floors)
        found = self._shape_of.get(key)
        if found is None:
            seen = shape(workload)
            if self.priority_floors:
                seen = (*seen, (workload.priority,))
            found = self._shape_ids.setdefault(seen, len(self._shape_ids))
            self._shape_of[key] = found
        return found

    def verdict(self, cq: ClusterQueue, workload: Workload, shape_id: int) -> Verdict:
        compiled = (self._layouts[cq.name], shape_id)
        found = self._verdicts.get(compiled)
        if found is None:
            found = self._verdicts[compiled] = Verdict(cq, workload, self.assigner.mismatch)
        return found

    def outcome(self, cq: ClusterQueue, workload: Workload, shape_id: int) -> Outcome:
        """The verdict alone (mode, borrows, usage); a ``Plan`` is built only when needed."""
        state = (cq.name, shape_id, self.tree.version(cq.name))
        found = self._outcomes.get(state)
        if found is None:
            found = self._outcomes[state] = self.verdict(cq, workload, shape_id).measure(
                self.tree, cq.name)
        return found

    def plan(self, cq: ClusterQueue, workload: Workload, shape_id: int) -> Plan:
        view = self._view(cq.name)
        if self.capacity is not None:  # a plan also reads what the nodes have free
            view = (*view, self.capacity.version)
        state = (cq.name, shape_id, view)
        found = self._plans.get(state)
        if found is None:
            found = self._plans[state] = self.assigner.assign(cq, workload)
        return found

    def numbers(self, name: str) -> Numbers:
        """Per slot of the queue, now: (available, potential, nominal - used)."""
        version = self.tree.version(name)
        cached = self._numbers.get(name)
        if cached is not None and cached[0] == version:
            return cached[1]
        tree = self.tree
        numbers = {fr: (tree.available(name, fr), tree.potential(name, fr),
                        tree.nominal(name, fr) - tree.usage(name, fr))
                   for fr in self.slots[name]}
        self._numbers[name] = (version, numbers)
        return numbers

    def _view(self, name: str) -> tuple[int, ...]:
        version = self.tree.version(name)
        cached = self._views.get(name)
        if cached is not None and cached[0] == version:
            return cached[1]
        tree = self.tree
        view = tuple(value for fr in self.slots[name]
                     for value in (tree.available(name, fr), tree.usage(name, fr)))
        self._views[name] = (version, view)
        return view
