"""Flavor assignment (PURE): which flavor serves each pod set's resources, and how well.

For each pod set and resource group the ClusterQueue's flavors are tried in order. A flavor
is first *matched* (node labels, taints, required topology), then *measured* against quota
and, when the flavor has nodes, against what is free on them (``room``): a flavor that fits
the quota but not the nodes ranks below one that fits both, and the next flavor is tried.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import IntEnum
from typing import TYPE_CHECKING, TypeVar

from admission.engine.node_room import EFFECTS
from admission.engine.topology import topology_mismatch, topology_request
from quota.core.model import (
    ClusterQueue,
    FlavorFungibility,
    ResourceFlavor,
    ResourceGroup,
    Topology,
    WhenCanBorrow,
    WhenCanPreempt,
)
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Admission, PodSet, PodSetAssignment, PodSetPlacement, Workload

if TYPE_CHECKING:
    from admission.engine.capacity import Capacity

R = TypeVar("R")
T = TypeVar("T")


class Mode(IntEnum):
    """How well a flavor serves a request; higher is better."""

    NO_FIT = 0  # can never fit: more than the quota could ever allow
    PREEMPT = 1  # fits the quota's maximum, not what is unused now
    FIT = 2  # fits what is unused now


@dataclass(frozen=True, slots=True)
class ResourceCheck:
    resource: str
    requested: int  # the whole workload's request for this (flavor, resource) so far
    available: int
    maximum: int
    mode: Mode
    borrows: bool


@dataclass(frozen=True, slots=True)
class FlavorTry:
    flavor: str
    mismatch: str | None  # why the flavor cannot serve the pod set at all
    checks: tuple[ResourceCheck, ...] = ()
    mode: Mode = Mode.NO_FIT
    borrows: bool = False
    room: bool = True  # its nodes (if it has any) take the pods now

    @property
    def rank(self) -> tuple[int, bool, bool]:
        return (self.mode, self.room, not self.borrows)


@dataclass(frozen=True, slots=True)
class GroupChoice:
    resources: tuple[str, ...]  # the pod set's requested resources this group covers
    tried: tuple[FlavorTry, ...]
    chosen: FlavorTry | None  # None when no flavor matches or none could ever fit


@dataclass(frozen=True, slots=True)
class PodSetPlan:
    name: str
    count: int
    uncovered: tuple[str, ...]  # requested resources no resource group covers
    groups: tuple[GroupChoice, ...]
    mode: Mode
    borrows: bool
    flavors: Mapping[str, str]  # resource -> flavor, for the chosen flavors
    usage: Mapping[str, int]  # resource -> milli-units for ``count`` pods
    room: bool = True  # the chosen flavors' nodes take the pods now


@dataclass(frozen=True, slots=True)
class Plan:
    """A workload's flavor assignment in one ClusterQueue at given pod counts."""

    cluster_queue: str
    pod_sets: tuple[PodSetPlan, ...]
    mode: Mode
    borrows: bool
    usage: Mapping[FlavorResource, int]
    room: bool = True  # every pod set's flavors have room on their nodes

    def admission(self, placement: tuple[PodSetPlacement, ...] | None = None) -> Admission:
        return Admission(
            cluster_queue=self.cluster_queue,
            pod_sets=tuple(
                PodSetAssignment(p.name, p.count, dict(p.flavors), dict(p.usage))
                for p in self.pod_sets
            ),
            placement=placement,
        )


def flavor_mismatch(flavor: ResourceFlavor, pod_set: PodSet,
                    topologies: Mapping[str, Topology] | None = None,
                    priority: int = 0) -> str | None:
    """Why ``flavor`` cannot serve pods of ``pod_set`` of a workload of ``priority``
    (labels, affinity, taints, priority floor, required topology), or None."""
    labels = flavor.node_labels
    for key, value in sorted(pod_set.node_selector.items()):
        if key in labels and labels[key] != value:
            return f"nodeSelector {key}={value} conflicts with flavor label {key}={labels[key]}"
    if pod_set.affinity_terms and not any(
        all(req.matches(labels) for req in term if req.key in labels)
        for term in pod_set.affinity_terms
    ):
        return "required node affinity conflicts with the flavor's nodeLabels"
    tolerations = (*pod_set.tolerations, *flavor.tolerations)
    for taint in flavor.node_taints:
        if taint.effect in EFFECTS and not any(t.tolerates(taint) for t in tolerations):
            shown = f"{taint.key}={taint.value}" if taint.value else taint.key
            return f"taint {shown}:{taint.effect} is not tolerated"
    if flavor.min_priority is not None and priority < flavor.min_priority:
        return (f"the flavor takes workloads of priority {flavor.min_priority} or more "
                f"(berth.dev/min-priority), this one has priority {priority}")
    return topology_mismatch(flavor, pod_set, topologies or {})


def assign(
    cq: ClusterQueue,
    workload: Workload,
    tree: QuotaTree,
    flavors: Mapping[str, ResourceFlavor],
    counts: Mapping[str, int] | None = None,
    capacity: Capacity | None = None,
) -> Plan:
    """Assign flavors to every pod set of ``workload`` at ``counts`` pods (default: all)."""
    return Assigner(tree, flavors, capacity).assign(cq, workload, counts)


class Assigner:
    """Flavor assignment over one quota tree, remembering what does not depend on usage
    (which flavors a pod set's constraints match): a cycle assigns tens of thousands of
    workloads that repeat a handful of node selectors."""

    __slots__ = ("capacity", "flavors", "mismatches", "topologies", "tree")

    def __init__(self, tree: QuotaTree, flavors: Mapping[str, ResourceFlavor],
                 capacity: Capacity | None = None,
                 topologies: Mapping[str, Topology] | None = None) -> None:
        self.tree = tree
        self.flavors = flavors
        self.capacity = capacity  # None: no flavor has nodes, quota alone decides
        self.topologies = topologies or {}
        self.mismatches: dict[tuple[str, object], str | None] = {}

    def assign(
        self, cq: ClusterQueue, workload: Workload, counts: Mapping[str, int] | None = None
    ) -> Plan:
        """Assign flavors to every pod set of ``workload`` at ``counts`` pods (default: all)."""
        taken: dict[FlavorResource, int] = {}
        plans: list[PodSetPlan] = []
        mode, borrows = Mode.FIT, False
        for pod_set in workload.pod_sets:
            count = pod_set.count if counts is None else counts.get(pod_set.name, pod_set.count)
            plan = self._pod_set(cq, pod_set, count, taken, workload.priority)
            plans.append(plan)
            mode = min(mode, plan.mode)
            borrows = borrows or plan.borrows
        room = all(p.room for p in plans)
        return Plan(cq.name, tuple(plans), mode, borrows, taken, room)

    def mismatch(self, flavor: str, pod_set: PodSet, priority: int = 0) -> str | None:
        """Why ``flavor`` cannot serve ``pod_set`` of a workload of ``priority``,
        remembered per set of constraints."""
        constraints: object = ()
        if (pod_set.node_selector or pod_set.affinity_terms or pod_set.tolerations
                or pod_set.annotations):
            constraints = (tuple(sorted(pod_set.node_selector.items())),
                           pod_set.affinity_terms, pod_set.tolerations,
                           topology_request(pod_set))
        floor = self.flavors[flavor].min_priority
        if floor is not None:
            constraints = (constraints, priority >= floor)
        key = (flavor, constraints)
        try:
            return self.mismatches[key]
        except KeyError:
            found = self.mismatches[key] = flavor_mismatch(
                self.flavors[flavor], pod_set, self.topologies, priority)
            return found

    def _pod_set(
        self, cq: ClusterQueue, pod_set: PodSet, count: int, taken: dict[FlavorResource, int],
        priority: int,
    ) -> PodSetPlan:
        wanted = {r: a * count for r, a in pod_set.requests.items() if a > 0}
        covered: set[str] = set()
        groups: list[GroupChoice] = []
        chosen_flavors: dict[str, str] = {}
        mode, borrows, room = Mode.FIT, False, True
        for group in cq.resource_groups:
            resources = tuple(r for r in group.covered_resources if r in wanted)
            covered.update(group.covered_resources)
            if not resources:
                continue
            choice = self._choose(cq, group, resources, pod_set, count, wanted, taken,
                                  priority)
            groups.append(choice)
            chosen = choice.chosen
            if chosen is None:
                mode = Mode.NO_FIT
                continue
            if chosen.mode < mode:
                mode = chosen.mode
            room = room and chosen.room
            borrows = borrows or chosen.borrows
            flavor = chosen.flavor
            for resource in resources:
                chosen_flavors[resource] = flavor
                fr = (flavor, resource)
                taken[fr] = taken.get(fr, 0) + wanted[resource]
        uncovered = tuple(sorted(r for r in wanted if r not in covered))
        if uncovered:
            mode = Mode.NO_FIT
        usage = {r: wanted[r] for r in chosen_flavors}
        return PodSetPlan(
            pod_set.name, count, uncovered, tuple(groups), mode, borrows, chosen_flavors, usage,
            room,
        )

    def _choose(
        self,
        cq: ClusterQueue,
        group: ResourceGroup,
        resources: tuple[str, ...],
        pod_set: PodSet,
        count: int,
        wanted: Mapping[str, int],
        taken: Mapping[FlavorResource, int],
        priority: int,
    ) -> GroupChoice:
        tried: list[FlavorTry] = []
        best: FlavorTry | None = None
        for quotas in group.flavors:
            mismatch = self.mismatch(quotas.flavor, pod_set, priority)
            if mismatch is not None:
                tried.append(FlavorTry(quotas.flavor, mismatch))
                continue
            attempt = self._measure(cq.name, quotas.flavor, resources, wanted, taken)
            capacity = self.capacity
            if (capacity is not None and attempt.mode is Mode.FIT
                    and not capacity.room(quotas.flavor, pod_set, count)):
                attempt = replace(attempt, room=False)
            tried.append(attempt)
            if attempt.mode is Mode.NO_FIT:
                continue
            if best is None or attempt.rank > best.rank:
                best = attempt
            if not _try_next(attempt, cq.flavor_fungibility):
                break
        return GroupChoice(resources, tuple(tried), best)

    def _measure(
        self,
        cq: str,
        flavor: str,
        resources: tuple[str, ...],
        wanted: Mapping[str, int],
        taken: Mapping[FlavorResource, int],
    ) -> FlavorTry:
        checks: list[ResourceCheck] = []
        mode, borrows = Mode.FIT, False
        measure = self.tree.measure
        for resource in resources:
            fr = (flavor, resource)
            requested = taken.get(fr, 0) + wanted[resource]
            available, maximum, used, nominal = measure(cq, fr)
            if requested <= available:
                this = Mode.FIT
            elif requested <= maximum:
                this = Mode.PREEMPT
            else:
                this = Mode.NO_FIT
            lends = used + requested > nominal
            checks.append(ResourceCheck(resource, requested, available, maximum, this, lends))
            if this < mode:
                mode = this
            borrows = borrows or lends
        return FlavorTry(flavor, None, tuple(checks), mode, borrows)


def flexible(workload: Workload) -> bool:
    """Whether some pod set of ``workload`` allows fewer pods (partial admission)."""
    for pod_set in workload.pod_sets:
        least = pod_set.min_count
        if least is not None and least < pod_set.count:
            return True
    return False


def partial_plan(
    assigner: Assigner, cq: ClusterQueue, workload: Workload,
    preempt: Callable[[Plan], T | None] | None = None,
) -> tuple[Plan, T | None] | None:
    """The plan with the most pods that fits now or, with ``preempt`` (the victims that
    let a plan fit, or None), by preempting, for pod sets that allow fewer."""

    def fits(counts: Mapping[str, int]) -> tuple[Plan, T | None] | None:
        plan = assigner.assign(cq, workload, counts)
        if plan.mode is Mode.FIT and plan.room:
            return plan, None
        if preempt is not None and plan.mode is not Mode.NO_FIT:
            victims = preempt(plan)
            if victims:
                return plan, victims
        return None

    return reduce_pod_sets(workload.pod_sets, fits)


def reduce_pod_sets(pod_sets: Sequence[PodSet],
                    fits: Callable[[Mapping[str, int]], R | None]) -> R | None:
    """Kueue's pod set reducer: every pod set that allows fewer pods shrinks from its
    count towards its minCount by one shared fraction ``step / total`` (``total``: the
    pods all of them may give up), and the smallest step that ``fits`` is taken, found
    by binary search. The least counts are tried first: most workloads that cannot be
    admitted at all end there."""
    deltas = {p.name: p.count - p.min_count for p in pod_sets
              if p.min_count is not None and p.min_count < p.count}
    total = sum(deltas.values())
    if not total:
        return None

    def counts(step: int) -> dict[str, int]:
        return {p.name: p.count - deltas.get(p.name, 0) * step // total for p in pod_sets}

    found = fits(counts(total))
    if found is None:
        return None
    low, high = 1, total  # ``found`` is the answer at ``high``
    while low < high:
        mid = (low + high) // 2
        answer = fits(counts(mid))
        if answer is None:
            low = mid + 1
        else:
            found, high = answer, mid
    return found


def _try_next(attempt: FlavorTry, fungibility: FlavorFungibility) -> bool:
    if not attempt.room:
        return True  # quota fits, its nodes are full: another flavor may have room
    if attempt.mode is Mode.FIT:
        return attempt.borrows and fungibility.when_can_borrow is WhenCanBorrow.TRY_NEXT_FLAVOR
    return fungibility.when_can_preempt is WhenCanPreempt.TRY_NEXT_FLAVOR
