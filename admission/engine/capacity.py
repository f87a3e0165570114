"""Physical capacity (PURE): which nodes a flavor has, what is free on them, where pods go.

A flavor's pool is the Nodes whose labels include its ``nodeLabels``; a flavor without any
such Node is limited by quota alone. Each pod must fit on one node of the pool that also
matches its nodeSelector, node affinity and (with the flavor's tolerations) taints. A
node's healthy capacity is ``allocatable``; ``capacity - allocatable`` devices are
unhealthy, and a node that is unschedulable, not Ready, or Cordoned/Repairing/Validating
has no healthy capacity at all. A resource a node does not list is not limited there,
except extended resources (``vendor/name``, e.g. ``nvidia.com/gpu``): a node that does not
list one has none, so whole-GPU pods never land on MIG-only nodes and vice versa.

One ``Capacity`` lives for one cycle: admitted workloads occupy their recorded placement
(or a greedy one when they have none), each admission places its pods, best fit, and
each eviction gives them back. ``version`` changes whenever anything is placed or freed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from admission.engine import reasons
from admission.engine.node_room import CAP, FitIndex, Room, allows, is_extended
from admission.engine.topology import (
    HOSTNAME,
    best_domain,
    domain_of,
    level_for,
    topology_request,
)
from admission.engine.types import Reason, Snapshot
from quota.core.model import Node, ResourceFlavor, Topology
from quota.core.workload import PodSet, PodSetPlacement, Workload

if TYPE_CHECKING:
    from admission.engine.flavors import PodSetPlan

# A pod set to place: the pod set, how many pods, the flavors its resources were given.
Demand = tuple[PodSet, int, tuple[str, ...]]
# node -> resource -> amount, tentatively taken by pod sets placed earlier in one attempt
Taken = dict[str, dict[str, int]]


def demands(workload: Workload, plans: Iterable[PodSetPlan]) -> list[Demand]:
    """What a plan asks of the nodes: each pod set at its planned count and flavors."""
    by_name = {p.name: p for p in workload.pod_sets}
    return [(by_name[p.name], p.count, tuple(p.flavors.values())) for p in plans]


@dataclass(frozen=True, slots=True)
class Shortage:
    """Why a pod set does not fit the nodes: the reason, and the hints that go with it."""

    reason: Reason
    hints: tuple[str, ...] = ()


class Capacity:
    """Node pools and their occupancy during one cycle."""

    __slots__ = ("_candidates", "_changed", "_held", "_indexes", "_memo_version",
                 "_shortages", "flavors", "pools", "rooms", "topologies", "version")

    def __init__(self, nodes: Mapping[str, Node], flavors: Mapping[str, ResourceFlavor],
                 topologies: Mapping[str, Topology]) -> None:
        self.rooms = {name: Room(nodes[name]) for name in sorted(nodes)}
        self.flavors = flavors
        self.topologies = topologies
        self.pools: dict[str, tuple[str, ...]] = {}
        for name, flavor in flavors.items():
            labels = flavor.node_labels.items()
            pool = tuple(n for n, room in self.rooms.items()
                         if all(room.node.labels.get(k) == v for k, v in labels))
            if pool:
                self.pools[name] = pool
        self.version = 0
        self._held: dict[str, list[tuple[str, dict[str, int]]]] = {}
        self._candidates: dict[object, tuple[str, ...]] = {}
        # Thousands of pending workloads ask about a few pod shapes, and each answer would
        # walk every node of a flavor: per (candidate nodes, per-pod requests), how many
        # pods each node takes, brought up to date from the nodes changed since (a log of
        # node names, appended on every occupy and release).
        self._changed: list[str] = []
        self._indexes: dict[tuple[int, tuple[tuple[str, int], ...]], FitIndex] = {}
        # Explanations per occupancy version.
        self._memo_version = 0
        self._shortages: dict[object, Shortage | None] = {}

    @classmethod
    def of(cls, snapshot: Snapshot) -> Capacity | None:
        """The snapshot's capacity, or None when no flavor has nodes (quota alone limits)."""
        if not snapshot.nodes:
            return None
        capacity = cls(snapshot.nodes, snapshot.flavors, snapshot.topologies)
        return capacity if capacity.pools else None

    # --- questions -----------------------------------------------------------------------

    def limits(self, names: Iterable[str]) -> tuple[str, ...]:
        """Those of the flavors ``names`` that have nodes, in order, without repeats."""
        return tuple(dict.fromkeys(n for n in names if n in self.pools))

    def room(self, flavor: str, pod_set: PodSet, count: int) -> bool:
        """Whether ``count`` pods of ``pod_set`` fit the free nodes of ``flavor`` now."""
        if flavor not in self.pools:
            return True
        if level_for(pod_set, self.flavors, (flavor,), self.topologies) is None:
            return self._fit(self._nodes(pod_set, (flavor,)), pod_set.requests, {}) >= count
        return self._place(pod_set, count, (flavor,), {}) is not None

    def cannot_place(self, pod_set: PodSet, count: int, flavors: Iterable[str]) -> bool:
        """Whether ``count`` pods of ``pod_set`` fit the free nodes of none of ``flavors``
        now (a flavor without nodes always fits; topology requests are not judged here)."""
        if pod_set.annotations and topology_request(pod_set) is not None:
            return False
        for flavor in flavors:
            if flavor not in self.pools or self._fit(
                    self._nodes(pod_set, (flavor,)), pod_set.requests, {}) >= count:
                return False
        return True

    def place(self, demands: Sequence[Demand]) -> tuple[PodSetPlacement, ...] | None:
        """Where every pod of ``demands`` goes (pod sets without nodes left out), or None
        when some pod set does not fit what is free now."""
        placed, failed = self._walk(demands)
        return None if failed is not None else tuple(placed)

    def places_without(self, keys: Iterable[str], demands: Sequence[Demand]) -> bool:
        """Whether ``demands`` could be placed (as ``place`` would) once the workloads
        ``keys`` gave back their nodes: a victim search asks this of every tentative
        victim set, so nothing is released for real (what they hold counts as negative
        tentative use)."""
        freed: Taken = {}
        for key in keys:
            for node, amounts in self._held.get(key, ()):
                _add(freed.setdefault(node, {}), {r: -a for r, a in amounts.items()})
        return self._walk(demands, freed)[1] is None

    def shortage(self, demands: Sequence[Demand]) -> Shortage | None:
        """Why ``demands`` do not fit: the first pod set that does not, explained."""
        self._fresh()
        key = tuple(
            (pod_set.name, count, limited, tuple(pod_set.requests.items()),
             id(self._nodes(pod_set, limited)) if limited else 0, topology_request(pod_set))
            for pod_set, count, names in demands
            for limited in (self.limits(names),))
        if key in self._shortages:
            return self._shortages[key]
        found = self._shortages[key] = self._shortage(demands)
        return found

    def _shortage(self, demands: Sequence[Demand]) -> Shortage | None:
        _, failed = self._walk(demands)
        return None if failed is None else self._explain(*failed)

    def _walk(self, demands: Sequence[Demand], taken: Taken | None = None) -> tuple[
            list[PodSetPlacement], tuple[PodSet, int, tuple[str, ...], Taken] | None]:
        """Place the pod sets in order: the placements made, and the first pod set that
        did not fit (its count, flavors with nodes, and what the earlier ones took, on
        top of ``taken``)."""
        taken = {} if taken is None else taken
        placed: list[PodSetPlacement] = []
        for pod_set, count, names in demands:
            limited = self.limits(names)
            if not limited:
                continue
            found = self._place(pod_set, count, limited, taken)
            if found is None:
                return placed, (pod_set, count, limited, taken)
            placed.append(found)
            _take(taken, found.nodes, pod_set.requests)
        return placed, None

    # --- occupancy -----------------------------------------------------------------------

    def occupy(self, key: str, placement: Sequence[PodSetPlacement],
               pod_sets: Sequence[PodSet]) -> None:
        """Count ``placement`` (of workload ``key``) as used on its nodes."""
        requests = {p.name: p.requests for p in pod_sets}
        held = self._held.setdefault(key, [])
        for item in placement:
            per_pod = requests.get(item.name, {})
            for node, pods in item.nodes.items():
                room = self.rooms.get(node)
                if room is None or pods <= 0:
                    continue  # the node left the inventory
                amounts = {r: a * pods for r, a in per_pod.items() if a > 0}
                _add(room.used, amounts)
                held.append((node, amounts))
                self._changed.append(node)
        self.version += 1

    def occupy_admitted(self, by_queue: Mapping[str, Mapping[str, Workload]]) -> None:
        """Count what admitted workloads hold: recorded placements first, then the
        admissions recorded without one, greedily, in key order."""
        holders = sorted((w for held in by_queue.values() for w in held.values()),
                         key=lambda w: w.key)
        unplaced = []
        for workload in holders:
            admission = workload.admission
            if admission is not None and admission.placement is not None:
                self.occupy(workload.key, admission.placement, workload.pod_sets)
            else:
                unplaced.append(workload)
        for workload in unplaced:
            self.occupy_unplaced(workload)

    def occupy_unplaced(self, workload: Workload) -> None:
        """Count an admission recorded without a placement: placed greedily on what is
        free, as much of it as fits (its pods run somewhere; the rest is not known)."""
        admission = workload.admission
        if admission is None:
            return
        by_name = {p.name: p for p in workload.pod_sets}
        placement: list[PodSetPlacement] = []
        taken: Taken = {}
        for assignment in admission.pod_sets:
            pod_set = by_name.get(assignment.name)
            limited = self.limits(assignment.flavors.values())
            if pod_set is None or not limited:
                continue
            nodes = self._spread(self._nodes(pod_set, limited), pod_set.requests,
                                 assignment.count, taken, partial=True)
            placement.append(PodSetPlacement(pod_set.name, nodes))
            _take(taken, nodes, pod_set.requests)
        if placement:
            self.occupy(workload.key, placement, workload.pod_sets)

    def reserve(self, key: str, victims: Iterable[str], demands: Sequence[Demand]) -> None:
        """Hold, for preemptor ``key`` waiting for ``victims`` to go, the free room its
        ``demands`` would take once they have: nobody else is placed there this cycle,
        else a lower workload admitted there would only be its next victim, again and
        again (the demo's 2x8-GPU Job behind a checkpointing victim evicted two 8-GPU
        Jobs in turn, forever)."""
        freed: Taken = {}
        for victim in victims:
            for node, amounts in self._held.get(victim, ()):
                _add(freed.setdefault(node, {}), amounts)
        placed, failed = self._walk(
            demands, {node: {r: -a for r, a in amounts.items()} for node, amounts in freed.items()}
        )
        if failed is not None:
            return
        requests = {pod_set.name: pod_set.requests for pod_set, _, _ in demands}
        held = self._held.setdefault(f"{key} (reserved)", [])
        for item in placed:
            for node, pods in item.nodes.items():
                spare = freed.get(node, {})
                amounts = {}
                for resource, per_pod in requests.get(item.name, {}).items():
                    wanted = per_pod * pods
                    from_victims = min(wanted, spare.get(resource, 0))
                    spare[resource] = spare.get(resource, 0) - from_victims
                    if wanted > from_victims:
                        amounts[resource] = wanted - from_victims
                if amounts:
                    _add(self.rooms[node].used, amounts)
                    held.append((node, amounts))
                    self._changed.append(node)
        self.version += 1

    def release(self, key: str) -> None:
        """Give back what workload ``key`` occupies (evicted or finished)."""
        held = self._held.pop(key, None)
        if not held:
            return
        for node, amounts in held:
            used = self.rooms[node].used
            for resource, amount in amounts.items():
                used[resource] = used.get(resource, 0) - amount
            self._changed.append(node)
        self.version += 1

    # --- placement -----------------------------------------------------------------------

    def _nodes(self, pod_set: PodSet, names: tuple[str, ...]) -> tuple[str, ...]:
        """Nodes in every pool of ``names`` that the pod set's constraints allow."""
        key = (names, tuple(sorted(pod_set.node_selector.items())), pod_set.affinity_terms,
               pod_set.tolerations)
        found = self._candidates.get(key)
        if found is None:
            tolerations = [*pod_set.tolerations]
            for name in names:
                tolerations.extend(self.flavors[name].tolerations)
            pools = [set(self.pools[n]) for n in names[1:]]
            found = self._candidates[key] = tuple(
                n for n in self.pools[names[0]]
                if all(n in pool for pool in pools)
                and allows(self.rooms[n].node, pod_set, tolerations))
        return found

    def _place(self, pod_set: PodSet, count: int, names: tuple[str, ...],
               taken: Taken, repaired: frozenset[str] = frozenset()) -> PodSetPlacement | None:
        nodes = self._nodes(pod_set, names)
        requests = pod_set.requests
        level = level_for(pod_set, self.flavors, names, self.topologies)
        if level is not None:
            name, required = level
            domains = self._domains(nodes, name)
            room = {d: self._fit(members, requests, taken, repaired)
                    for d, members in domains.items()}
            chosen = best_domain(room, count)
            if chosen is not None:
                placed = self._spread(domains[chosen], requests, count, taken, repaired)
                return PodSetPlacement(pod_set.name, placed, name, chosen)
            if required:
                return None
        if self._fit(nodes, requests, taken, repaired) < count:
            return None
        return PodSetPlacement(pod_set.name,
                               self._spread(nodes, requests, count, taken, repaired))

    def _domains(self, nodes: Sequence[str], level: str) -> dict[str, list[str]]:
        domains: dict[str, list[str]] = {}
        for name in nodes:
            domain = domain_of(self.rooms[name].node, level)
            if domain is not None:
                domains.setdefault(domain, []).append(name)
        return domains

    def _fit(self, nodes: Iterable[str], requests: Mapping[str, int], taken: Taken,
             repaired: frozenset[str] = frozenset()) -> int:
        if not taken and not repaired and type(nodes) is tuple:
            return self._index(nodes, requests).total
        empty: dict[str, int] = {}
        return sum(min(self.rooms[n].pods(requests, taken.get(n, empty), n in repaired),
                       CAP) for n in nodes)

    def _index(self, nodes: tuple[str, ...], requests: Mapping[str, int]) -> FitIndex:
        """The up-to-date fit index of candidate ``nodes`` (a tuple kept by ``_nodes`` for
        the cycle, so its id names it) for pods of ``requests``."""
        key = (id(nodes), tuple(requests.items()))
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = FitIndex(self.rooms, nodes, requests,
                                                   len(self._changed))
        elif index.seen < len(self._changed):
            index.update(self.rooms, self._changed)
        return index

    def _fresh(self) -> None:
        if self._memo_version != self.version:
            self._shortages.clear()
            self._memo_version = self.version

    def _spread(self, nodes: Sequence[str], requests: Mapping[str, int], count: int,
                taken: Taken, repaired: frozenset[str] = frozenset(), *,
                partial: bool = False) -> dict[str, int]:
        """Pods per node, fullest nodes first (best fit keeps roomy nodes whole)."""
        empty: dict[str, int] = {}
        if not taken and not repaired and type(nodes) is tuple:
            fits = sorted((fit, n) for n, fit in self._index(nodes, requests).fits.items()
                          if fit > 0)
        else:
            fits = sorted((self.rooms[n].pods(requests, taken.get(n, empty), n in repaired), n)
                          for n in nodes)
        placed: dict[str, int] = {}
        left = count
        for fit, name in fits:
            if left <= 0:
                break
            pods = min(fit, left)
            if pods > 0:
                placed[name] = pods
                left -= pods
        if left > 0 and not partial:  # pragma: no cover - callers check the fit first
            raise AssertionError("spread called on nodes that do not fit")
        return placed

    # --- explanations --------------------------------------------------------------------

    def _explain(self, pod_set: PodSet, count: int, names: tuple[str, ...],
                 taken: Taken) -> Shortage:
        flavor = ", ".join(names)
        nodes = self._nodes(pod_set, names)
        empty: dict[str, int] = {}
        counted = _order([r for r, a in pod_set.requests.items() if a > 0
                          and (is_extended(r) or any(
                              self.rooms[n].limit(r, False) is not None for n in nodes))])
        wanted = {r: pod_set.requests[r] * count for r in counted}
        free = {r: sum(self.rooms[n].free(r, taken.get(n, empty)) or 0 for n in nodes)
                for r in counted}
        healthy = {r: sum(self.rooms[n].healthy.get(r, 0) for n in nodes) for r in counted}
        repair = self._repair_set(pod_set, count, names, nodes, counted, taken)
        if repair is not None:
            resource = next((r for r in counted
                             if any(self.rooms[n].unhealthy(r) for n in repair)), counted[0])
            devices = [(n, self.rooms[n].unhealthy(resource)) for n in repair]
            return Shortage(
                reasons.unhealthy_capacity(flavor, resource,
                                           max(0, wanted[resource] - free[resource]), devices),
                (reasons.repair_hint(resource, devices),),
            )
        short = [r for r in counted if wanted[r] > free[r]]
        if not short and counted:
            resource = counted[0]
            level = self._level_name(pod_set, names)
            domains = self._domains(nodes, level)
            largest = max((sum(self.rooms[n].free(resource, taken.get(n, empty)) or 0
                               for n in members) for members in domains.values()), default=0)
            return Shortage(reasons.topology_placement_failed(
                flavor, level, resource, wanted[resource], largest))
        resource = short[0] if short else next(iter(pod_set.requests), "")
        return Shortage(reasons.insufficient_capacity(
            flavor, resource, wanted.get(resource, 0), free.get(resource, 0),
            healthy.get(resource, 0)))

    def _repair_set(self, pod_set: PodSet, count: int, names: tuple[str, ...],
                    nodes: Sequence[str], counted: Sequence[str],
                    taken: Taken) -> list[str] | None:
        """The fewest sick nodes (most unhealthy devices first) whose repair lets the pod
        set fit, or None when repairing every one would not be enough."""
        sick = sorted((-sum(self.rooms[n].unhealthy(r) for r in counted), n) for n in nodes
                      if any(self.rooms[n].unhealthy(r) > 0 for r in counted))
        if not sick:
            return None
        order = [n for _, n in sick]
        if self._place(pod_set, count, names, taken, frozenset(order)) is None:
            return None
        # Repairing a longer prefix only adds room. Usually one or two nodes suffice:
        # gallop (1, 2, 4, ...) to a prefix that fits, then bisect below it.
        def fits(size: int) -> bool:
            chosen = frozenset(order[:size])
            return self._place(pod_set, count, names, taken, chosen) is not None

        high = 1
        while high < len(order) and not fits(high):
            high *= 2
        high = min(high, len(order))
        low = high // 2 + 1
        while low < high:
            middle = (low + high) // 2
            if fits(middle):
                high = middle
            else:
                low = middle + 1
        return order[:high]

    def _level_name(self, pod_set: PodSet, names: tuple[str, ...]) -> str:
        level = level_for(pod_set, self.flavors, names, self.topologies)
        return level[0] if level is not None else HOSTNAME


def _order(resources: Iterable[str]) -> list[str]:
    """Extended resources (the scarce devices) first, then the rest, each by name."""
    return sorted(resources, key=lambda r: (not is_extended(r), r))


def _add(into: dict[str, int], amounts: Mapping[str, int]) -> None:
    for resource, amount in amounts.items():
        into[resource] = into.get(resource, 0) + amount


def _take(taken: Taken, nodes: Mapping[str, int], requests: Mapping[str, int]) -> None:
    for node, pods in nodes.items():
        _add(taken.setdefault(node, {}), {r: a * pods for r, a in requests.items() if a > 0})

