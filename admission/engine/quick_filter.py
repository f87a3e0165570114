"""The cycle's quick filter (PURE): park the workloads that cannot fit, unevaluated.

Once a queue's head fails, its room is short, and most workloads behind it fail too.
``QuickFilter`` skips them with a necessary condition (``queues.caps`` for quota; for a
one-pod-set workload, whether even its least pods fit the free nodes of any flavor of
its ClusterQueue) and parks them under one shared waiting entry; their reasons are
written after the pass, against the final state.
"""

from __future__ import annotations

from collections.abc import Mapping

from admission.engine.capacity import Capacity
from admission.engine.queues import Entry, caps
from admission.engine.statuses import Waiting
from quota.core.model import ClusterQueue
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload


class QuickFilter:
    """What one cycle knows of each queue's room: which queues ran short, per queue the
    most any flavor could give (cached by pool version), and which flavors have nodes."""

    def __init__(self, tree: QuotaTree, capacity: Capacity | None,
                 queues: Mapping[str, ClusterQueue],
                 slots: Mapping[str, tuple[FlavorResource, ...]]) -> None:
        self.tree = tree
        self.capacity = capacity
        self.slots = slots
        # Queues whose last head did not fit: the filter pays for itself there.
        self.short: set[str] = set()
        # ClusterQueues of one resource group with nodes behind some flavor: the flavors
        # the filter asks the nodes about.
        self.node_flavors: dict[str, tuple[str, ...]] = {}
        if capacity is not None:
            pools = capacity.pools
            for name, queue in queues.items():
                if len(queue.resource_groups) == 1:
                    flavors = tuple(q.flavor for q in queue.resource_groups[0].flavors)
                    if any(f in pools for f in flavors):
                        self.node_flavors[name] = flavors
        self._caps: dict[str, tuple[int, dict[str, int]]] = {}
        self._parking: dict[str, Waiting] = {}

    def parking(self, name: str) -> Waiting:
        """The waiting entry shared by a queue's workloads parked before their reasons are
        written (read, never changed)."""
        parked = self._parking.get(name)
        if parked is None:
            parked = self._parking[name] = Waiting(name, [], quota=True)
        return parked

    def no_room_for(self, name: str, workload: Workload) -> bool:
        """Whether even the least pods of a one-pod-set workload of queue ``name`` fit no
        node of any of its flavors (False where nodes do not decide)."""
        flavors = self.node_flavors.get(name)
        return flavors is not None and self._no_room(workload, flavors)

    def _no_room(self, workload: Workload, flavors: tuple[str, ...]) -> bool:
        if self.capacity is None or len(workload.pod_sets) != 1:
            return False
        pod_set = workload.pod_sets[0]
        return self.capacity.cannot_place(pod_set, pod_set.min_count or pod_set.count, flavors)

    def park_tail(self, name: str, entries: list[Entry], at: int,
                  waiting: dict[str, Waiting]) -> int:
        """Park in ``waiting`` the entries from ``at`` on that cannot fit now (so not later
        either); return the index of the first one that might."""
        version = self.tree.version(name)
        cached = self._caps.get(name)
        if cached is None or cached[0] != version:
            cached = self._caps[name] = (version, caps(self.tree, name, self.slots[name]))
        get = cached[1].get
        parked = self.parking(name)
        flavors = self.node_flavors.get(name)
        end = len(entries)
        while at < end:
            top = entries[at]
            # It cannot fit if it needs more of some resource than ``caps`` allows, or if
            # its pods fit the free nodes of none of the queue's flavors.
            for resource, amount in top.need:
                if amount > get(resource, -1):
                    break
            else:
                if flavors is None or not self._no_room(top.workload, flavors):
                    break
            waiting[top.key] = parked
            at += 1
        return at
