"""Pods no node can ever hold (PURE): the ``ExceedsNodeCapacity`` verdict.

A pod set whose single pod is larger than every node of every flavor that could serve it
can never run, however much quota or capacity frees up: evicting anyone for it destroys
work for nothing (the demo's 16- and 24-GPU pods on 8-GPU nodes evicted lower-priority
work every second), and as a StrictFIFO head it would wedge its queue. Nodes are judged
by their devices healthy or not (``max(capacity, allocatable)``: repair does not grow a
node), and by the labels that put them in a flavor's pool, not by the pod's own node
selector. A resource group with a candidate flavor without nodes proves nothing: quota
alone limits that flavor.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from admission.engine import reasons
from admission.engine.capacity import Capacity
from admission.engine.node_room import Room, is_extended
from admission.engine.types import Reason
from admission.engine.verdict import Mismatch
from quota.core.model import ClusterQueue
from quota.core.workload import Workload

# (candidate flavors, one pod's requests) -> None when some node of those flavors holds
# the pod, else the (resource, largest node's amount of it) to report
HoldsMemo = dict[tuple[tuple[str, ...], tuple[tuple[str, int], ...]], tuple[str, int] | None]


def oversized(capacity: Capacity, cq: ClusterQueue, workload: Workload, mismatch: Mismatch,
              memo: HoldsMemo) -> Reason | None:
    """``ExceedsNodeCapacity`` for the first pod set of ``workload`` whose single pod no
    node of any candidate flavor (of some resource group of ``cq``) can hold, or None.
    ``memo`` keeps the answer per (flavors, requests) for the cycle: a thousand queues
    share a few flavor lists, and each answer walks every node of them."""
    for pod_set in workload.pod_sets:
        requests = {r: a for r, a in pod_set.requests.items() if a > 0}
        for group in cq.resource_groups:
            if not any(r in requests for r in group.covered_resources):
                continue
            flavors = tuple(q.flavor for q in group.flavors
                            if mismatch(q.flavor, pod_set, workload.priority) is None)
            if not flavors or any(f not in capacity.pools for f in flavors):
                continue
            key = (flavors, tuple(sorted(requests.items())))
            if key not in memo:
                memo[key] = _short(_rooms(capacity, flavors), requests)
            found = memo[key]
            if found is not None:
                resource, largest = found
                return reasons.exceeds_node_capacity(cq.name, pod_set.name, flavors, resource,
                                                     requests[resource], largest)
    return None


def _rooms(capacity: Capacity, flavors: Sequence[str]) -> list[Room]:
    nodes = dict.fromkeys(n for f in flavors for n in capacity.pools[f])
    return [capacity.rooms[n] for n in nodes]


def _short(rooms: Sequence[Room], requests: Mapping[str, int]) -> tuple[str, int] | None:
    """None when one of ``rooms`` holds a pod of ``requests`` (by its devices, healthy or
    not); else the resource to name and the largest amount of it a node has."""
    def short(room: Room, resource: str) -> bool:
        limit = room.limit(resource, repaired=True)
        return limit is not None and limit < requests[resource]

    if any(not any(short(room, r) for r in requests) for room in rooms):
        return None
    # The resource to name: the first (extended first, by name) that no node has enough
    # of; when nodes fall short each in another resource, the first any node lacks, with
    # the largest amount of it among the nodes that lack it.
    order = sorted(requests, key=lambda r: (not is_extended(r), r))
    resource = next((r for r in order if all(short(room, r) for room in rooms)),
                    next(r for r in order if any(short(room, r) for room in rooms)))
    largest = max((room.limit(resource, repaired=True) or 0 for room in rooms
                   if short(room, resource)), default=0)
    return resource, largest
