"""One node's room (PURE): its healthy and repaired limits, what is used, who may land.

``capacity.Capacity`` keeps a ``Room`` per Node for one cycle; ``FitIndex`` counts how
many more pods of one request the candidate nodes take, kept up to date as pods are
placed and freed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from quota.core.model import Node, Toleration
from quota.core.node_health import takes_work
from quota.core.workload import PodSet

# Taints Kubernetes puts on sick or cordoned nodes: counted as unhealthy capacity (repair
# removes them), not as a reason the pod does not tolerate the node.
HEALTH_TAINTS = frozenset({
    "node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
})
# Taint effects that keep a pod off a node it does not tolerate.
EFFECTS = ("NoSchedule", "NoExecute")
UNLIMITED = 1 << 62
CAP = UNLIMITED >> 8  # pods per node counted at most: sums stay far from overflow


def is_extended(resource: str) -> bool:
    """Extended resources (``vendor/name``) exist only where a node lists them."""
    return "/" in resource


class Room:
    """One node's healthy and repaired limits per listed resource, and what is used."""

    __slots__ = ("devices", "healthy", "node", "used")

    def __init__(self, node: Node) -> None:
        self.node = node
        listed = {*node.capacity, *node.allocatable}
        healthy = {r: node.allocatable.get(r, node.capacity.get(r, 0)) for r in listed}
        self.devices = {r: max(node.capacity.get(r, healthy[r]), healthy[r]) for r in listed}
        self.healthy = healthy if takes_work(node) else dict.fromkeys(listed, 0)
        self.used: dict[str, int] = {}

    def limit(self, resource: str, repaired: bool) -> int | None:
        table = self.devices if repaired else self.healthy
        found = table.get(resource)
        if found is None and is_extended(resource):
            return 0
        return found

    def free(self, resource: str, taken: Mapping[str, int], repaired: bool = False) -> int | None:
        limit = self.limit(resource, repaired)
        if limit is None:
            return None
        return max(0, limit - self.used.get(resource, 0) - taken.get(resource, 0))

    def unhealthy(self, resource: str) -> int:
        return self.devices.get(resource, 0) - self.healthy.get(resource, 0)

    def pods(self, requests: Mapping[str, int], taken: Mapping[str, int],
             repaired: bool) -> int:
        """How many more pods of ``requests`` fit here."""
        fit = UNLIMITED
        for resource, amount in requests.items():
            if amount <= 0:
                continue
            free = self.free(resource, taken, repaired)
            if free is not None and free // amount < fit:
                fit = free // amount
        return fit


class FitIndex:
    """How many more pods of one request each candidate node takes, and their sum;
    ``update`` reads the nodes changed since it last looked (``seen``)."""

    __slots__ = ("fits", "requests", "seen", "total")

    def __init__(self, rooms: Mapping[str, Room], nodes: tuple[str, ...],
                 requests: Mapping[str, int], seen: int) -> None:
        self.requests = requests
        empty: dict[str, int] = {}
        self.fits = {n: min(rooms[n].pods(requests, empty, False), CAP) for n in nodes}
        self.total = sum(self.fits.values())
        self.seen = seen

    def update(self, rooms: Mapping[str, Room], changed: Sequence[str]) -> None:
        empty: dict[str, int] = {}
        fits = self.fits
        for name in set(changed[self.seen:]):
            old = fits.get(name)
            if old is not None:
                new = min(rooms[name].pods(self.requests, empty, False), CAP)
                fits[name] = new
                self.total += new - old
        self.seen = len(changed)


def allows(node: Node, pod_set: PodSet, tolerations: Sequence[Toleration]) -> bool:
    """Whether a pod of ``pod_set`` may run on ``node``: its nodeSelector and node affinity
    match, and the flavor's ``tolerations`` tolerate the node's taints (health taints are
    counted as unhealthy capacity instead)."""
    labels = node.labels
    if any(labels.get(k) != v for k, v in pod_set.node_selector.items()):
        return False
    if pod_set.affinity_terms and not any(
            all(req.matches(labels) for req in term) for term in pod_set.affinity_terms):
        return False
    return all(any(t.tolerates(taint) for t in tolerations) for taint in node.taints
               if taint.effect in EFFECTS and taint.key not in HEALTH_TAINTS)
