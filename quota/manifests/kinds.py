"""Per-kind readers: one manifest object's fields → one ``quota.model`` value (edge).

Each reader gets the object's top-level ``Field`` and its already-checked metadata, records
every problem in the document's sink, and returns a value built with placeholders where a
field was wrong; the caller drops values whose document had problems.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from quota.core.checks import AdmissionCheck, ProvisioningRequestConfig
from quota.core.metering import PRICE_ANNOTATION, Price, PriceError, parse_prices
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    LocalQueue,
    Namespace,
    Node,
    NodeCondition,
    NodeHealth,
    Preemption,
    PriorityClass,
    QueueingStrategy,
    ReclaimWithinCohort,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    StopPolicy,
    Topology,
    WhenCanBorrow,
    WhenCanPreempt,
    WithinClusterQueue,
)
from quota.core.quantity import format_quantity
from quota.manifests.checks import (
    read_admission_check,
    read_check_rules,
    read_provisioning_config,
)
from quota.manifests.reader import Field, dns_name, qualified_name
from quota.manifests.shapes import read_label_selector, read_taints, read_tolerations

Model = (
    ResourceFlavor
    | ClusterQueue
    | Cohort
    | LocalQueue
    | PriorityClass
    | Namespace
    | Node
    | Topology
    | AdmissionCheck
    | ProvisioningRequestConfig
)

HEALTH_ANNOTATION = "berth.dev/health"
MIN_PRIORITY_ANNOTATION = "berth.dev/min-priority"
INT32 = (-(2**31), 2**31 - 1)

_CQ_SPEC = (
    "resourceGroups", "cohort", "cohortName", "queueingStrategy", "namespaceSelector",
    "flavorFungibility", "preemption", "admissionChecks", "admissionChecksStrategy",
    "stopPolicy", "fairSharing",
)  # fmt: skip
# Real Kueue fields whose meaning Berth does not implement: refuse rather than ignore.
_CQ_UNSUPPORTED = ("admissionScope", "excludeResourcePrefixes")
_QUOTA_FIELDS = ("name", "nominalQuota", "borrowingLimit", "lendingLimit")


@dataclass(frozen=True, slots=True)
class Meta:
    name: str
    namespace: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]


def read_resource_flavor(top: Field, meta: Meta) -> ResourceFlavor:
    spec = top.obj("spec", known=("nodeLabels", "nodeTaints", "tolerations", "topologyName"))
    return ResourceFlavor(
        name=meta.name,
        node_labels=spec.string_map("nodeLabels", check_keys=qualified_name),
        node_taints=read_taints(spec, "nodeTaints"),
        tolerations=read_tolerations(spec, "tolerations"),
        topology_name=spec.string("topologyName", check=dns_name) or None,
        prices=_prices(top, meta),
        min_priority=_min_priority(top, meta),
    )


def _min_priority(top: Field, meta: Meta) -> int | None:
    text = meta.annotations.get(MIN_PRIORITY_ANNOTATION)
    if text is None:
        return None
    try:
        value = int(text.strip())
    except ValueError:
        value = None
    if value is None or not INT32[0] <= value <= INT32[1]:
        Field(top.sink, f"metadata.annotations[{MIN_PRIORITY_ANNOTATION}]").problem(
            f"must be a whole number (a workload priority), got {text!r}")
        return None
    return value


def _prices(top: Field, meta: Meta) -> dict[str, Price]:
    text = meta.annotations.get(PRICE_ANNOTATION)
    if text is None:
        return {}
    try:
        return parse_prices(text)
    except PriceError as exc:
        Field(top.sink, f"metadata.annotations[{PRICE_ANNOTATION}]").problem(str(exc))
        return {}


def read_cluster_queue(top: Field, meta: Meta) -> ClusterQueue:
    spec = top.obj("spec", known=_CQ_SPEC, unsupported=_CQ_UNSUPPORTED)
    cohort = _either(spec, "cohort", "cohortName")
    return ClusterQueue(
        name=meta.name,
        resource_groups=_resource_groups(spec, parent=cohort, parent_field="spec.cohort"),
        cohort=cohort,
        namespace_selector=read_label_selector(spec, "namespaceSelector"),
        queueing_strategy=spec.enum("queueingStrategy", QueueingStrategy)
        or QueueingStrategy.BEST_EFFORT_FIFO,
        preemption=_preemption(spec),
        flavor_fungibility=_flavor_fungibility(spec),
        stop_policy=spec.enum("stopPolicy", StopPolicy) or StopPolicy.NONE,
        fair_sharing_weight=_weight(spec),
        admission_checks=read_check_rules(spec),
    )


def read_cohort(top: Field, meta: Meta) -> Cohort:
    spec = top.obj("spec", known=("parent", "parentName", "resourceGroups", "fairSharing"))
    parent = _either(spec, "parent", "parentName")
    return Cohort(
        name=meta.name,
        parent=parent,
        resource_groups=_resource_groups(spec, parent=parent, parent_field="spec.parent"),
        fair_sharing_weight=_weight(spec),
    )


def read_local_queue(top: Field, meta: Meta) -> LocalQueue:
    spec = top.obj(
        "spec", required=True, known=("clusterQueue", "stopPolicy"), unsupported=("fairSharing",)
    )
    return LocalQueue(
        namespace=meta.namespace,
        name=meta.name,
        cluster_queue=spec.string("clusterQueue", required=True, check=dns_name) or "",
        stop_policy=spec.enum("stopPolicy", StopPolicy) or StopPolicy.NONE,
    )


def read_priority_class(top: Field, meta: Meta) -> PriorityClass:
    value = top.integer("value", required=True, minimum=INT32[0], maximum=INT32[1])
    return PriorityClass(
        name=meta.name, value=value or 0, description=top.string("description") or ""
    )


def read_topology(top: Field, meta: Meta) -> Topology:
    spec = top.obj("spec", required=True, known=("levels",))
    levels: list[str] = []
    for item in spec.items("levels", non_empty=True):
        item.mapping(required=True, known=("nodeLabel",))
        label = item.string("nodeLabel", required=True, check=qualified_name)
        if label is not None and label in levels:
            item.child("nodeLabel").problem(f"level {label} is listed twice")
        elif label is not None:
            levels.append(label)
    return Topology(name=meta.name, levels=tuple(levels))


def read_namespace(top: Field, meta: Meta) -> Namespace:
    return Namespace(name=meta.name, labels=dict(meta.labels))


def read_node(top: Field, meta: Meta) -> Node:
    spec = top.obj("spec")
    status = top.obj("status")
    capacity = status.quantity_map("capacity")
    allocatable = status.quantity_map("allocatable") if status.has("allocatable") else capacity
    for resource, amount in allocatable.items():
        if resource in capacity and amount > capacity[resource]:
            Field(status.sink, f"{status.path}.allocatable[{resource}]").problem(
                f"must not exceed capacity ({format_quantity(amount, resource)} > "
                f"{format_quantity(capacity[resource], resource)})"
            )
    conditions: list[NodeCondition] = []
    for item in status.items("conditions"):
        item.mapping(required=True)
        kind = item.string("type", required=True)
        state = item.string("status", required=True)
        if state is not None and state not in ("True", "False", "Unknown"):
            item.child("status").problem(f"must be one of True, False, Unknown; got {state!r}")
        elif kind is not None and state is not None:
            reason, message = item.string("reason") or "", item.string("message") or ""
            conditions.append(NodeCondition(kind, state, reason, message))
    return Node(
        name=meta.name,
        labels=dict(meta.labels),
        taints=read_taints(spec, "taints"),
        capacity=capacity,
        allocatable=dict(allocatable),
        unschedulable=spec.boolean("unschedulable") or False,
        conditions=tuple(conditions),
        health=_health(top, meta),
    )


READERS: Mapping[str, Callable[[Field, Meta], Model]] = {
    "ResourceFlavor": read_resource_flavor,
    "ClusterQueue": read_cluster_queue,
    "Cohort": read_cohort,
    "LocalQueue": read_local_queue,
    "WorkloadPriorityClass": read_priority_class,
    "Topology": read_topology,
    "Namespace": read_namespace,
    "Node": read_node,
    "AdmissionCheck": read_admission_check,
    "ProvisioningRequestConfig": read_provisioning_config,
}


def _health(top: Field, meta: Meta) -> NodeHealth:
    value = meta.annotations.get(HEALTH_ANNOTATION)
    if value is None:
        return NodeHealth.HEALTHY
    for health in NodeHealth:
        if health.value == value:
            return health
    allowed = ", ".join(h.value for h in NodeHealth)
    Field(top.sink, f"metadata.annotations[{HEALTH_ANNOTATION}]").problem(
        f"must be one of {allowed}; got {value!r}"
    )
    return NodeHealth.HEALTHY


def _either(spec: Field, old: str, new: str) -> str | None:
    """A reference spelled the v1beta1 way or the v1beta2 way (both accepted)."""
    first = spec.string(old, check=dns_name) or None
    second = spec.string(new, check=dns_name) or None
    if first and second and first != second:
        spec.child(new).problem(f"disagrees with {old} ({second!r} vs {first!r}); set only one")
    return first or second


def _weight(spec: Field) -> int:
    fair = spec.obj("fairSharing", known=("weight",))
    weight = fair.quantity("weight")
    return 1000 if weight is None else weight


def _preemption(spec: Field) -> Preemption:
    field = spec.obj(
        "preemption", known=("withinClusterQueue", "reclaimWithinCohort", "borrowWithinCohort")
    )
    borrow = field.obj("borrowWithinCohort", known=("policy", "maxPriorityThreshold"))
    within = field.enum("withinClusterQueue", WithinClusterQueue) or WithinClusterQueue.NEVER
    reclaim = field.enum("reclaimWithinCohort", ReclaimWithinCohort) or ReclaimWithinCohort.NEVER
    policy = borrow.enum("policy", BorrowWithinCohortPolicy) or BorrowWithinCohortPolicy.NEVER
    threshold = borrow.integer("maxPriorityThreshold", minimum=INT32[0], maximum=INT32[1])
    if policy != BorrowWithinCohortPolicy.NEVER and reclaim == ReclaimWithinCohort.NEVER:
        borrow.child("policy").problem(
            f"{policy} needs reclaimWithinCohort other than Never (Kueue rejects it too)"
        )
    return Preemption(
        within_cluster_queue=within,
        reclaim_within_cohort=reclaim,
        borrow_within_cohort=BorrowWithinCohort(policy=policy, max_priority_threshold=threshold),
    )


def _flavor_fungibility(spec: Field) -> FlavorFungibility:
    field = spec.obj("flavorFungibility", known=("whenCanBorrow", "whenCanPreempt"))
    # Kueue v1beta1 spells "stop at this flavor" as Borrow / Preempt; v1beta2 as MayStopSearch.
    borrow = field.enum(
        "whenCanBorrow", WhenCanBorrow, aliases={"Borrow": WhenCanBorrow.MAY_STOP_SEARCH}
    )
    preempt = field.enum(
        "whenCanPreempt", WhenCanPreempt, aliases={"Preempt": WhenCanPreempt.MAY_STOP_SEARCH}
    )
    return FlavorFungibility(
        when_can_borrow=borrow or WhenCanBorrow.MAY_STOP_SEARCH,
        when_can_preempt=preempt or WhenCanPreempt.TRY_NEXT_FLAVOR,
    )


def _resource_groups(
    spec: Field, *, parent: str | None, parent_field: str
) -> tuple[ResourceGroup, ...]:
    """Resource groups, checked as Kueue checks them: coverage, uniqueness, limits."""
    groups: list[ResourceGroup] = []
    resource_group: dict[str, int] = {}  # resource -> index of the group covering it
    flavor_group: dict[str, int] = {}
    for index, group in enumerate(spec.items("resourceGroups")):
        group.mapping(required=True, known=("coveredResources", "flavors"))
        covered = group.strings(
            "coveredResources", non_empty=True, check=qualified_name, unique=True
        )
        for position, resource in enumerate(covered):
            if resource in resource_group:
                group.child(f"coveredResources[{position}]").problem(
                    f"resource {resource} is already covered by "
                    f"resourceGroups[{resource_group[resource]}]; a resource belongs to one group"
                )
            resource_group.setdefault(resource, index)
        # Coverage checks would only repeat a broken coveredResources' own problem.
        raw = group.child("coveredResources").value
        check_coverage = isinstance(raw, list) and len(covered) == len(raw) > 0
        flavors: list[FlavorQuotas] = []
        for flavor in group.items("flavors", non_empty=True):
            flavor.mapping(required=True, known=("name", "resources"))
            name = flavor.string("name", required=True, check=dns_name)
            if name is not None and name in flavor_group:
                where = flavor_group[name]
                flavor.child("name").problem(
                    f"flavor {name} is listed twice in this group"
                    if where == index
                    else f"flavor {name} already appears in resourceGroups[{where}]; "
                    "a flavor belongs to one group"
                )
            elif name is not None:
                flavor_group[name] = index
            quotas = _flavor_quotas(
                flavor, covered if check_coverage else None, parent, parent_field
            )
            flavors.append(FlavorQuotas(flavor=name or "", resources=quotas))
        groups.append(ResourceGroup(covered_resources=tuple(covered), flavors=tuple(flavors)))
    return tuple(groups)


def _flavor_quotas(
    flavor: Field, covered: list[str] | None, parent: str | None, parent_field: str
) -> tuple[ResourceQuota, ...]:
    quotas: list[ResourceQuota] = []
    for item in flavor.items("resources", non_empty=True):
        item.mapping(required=True, known=_QUOTA_FIELDS)
        resource = item.string("name", required=True, check=qualified_name)
        if resource is not None and covered is not None and resource not in covered:
            item.child("name").problem(
                f"resource {resource} is not in coveredResources [{', '.join(covered)}]"
            )
        elif resource is not None and any(q.resource == resource for q in quotas):
            item.child("name").problem(f"resource {resource} is listed twice in this flavor")
        nominal = item.quantity("nominalQuota", required=True, resource=resource)
        borrowing = item.quantity("borrowingLimit", resource=resource)
        lending = item.quantity("lendingLimit", resource=resource)
        for key, limit in (("borrowingLimit", borrowing), ("lendingLimit", lending)):
            if limit is not None and parent is None:
                item.child(key).problem(
                    f"needs {parent_field} to be set: without one there is no one to "
                    f"{'borrow from' if key == 'borrowingLimit' else 'lend to'}"
                )
        if lending is not None and nominal is not None and lending > nominal:
            item.child("lendingLimit").problem(
                f"must not exceed nominalQuota ({format_quantity(lending, resource)} > "
                f"{format_quantity(nominal, resource)})"
            )
        quotas.append(ResourceQuota(resource or "", nominal or 0, borrowing, lending))
    if covered is not None:
        listed = {q.resource for q in quotas}
        missing = [resource for resource in covered if resource not in listed]
        if missing and flavor.has("resources"):
            flavor.child("resources").problem(
                f"missing quota for covered resource {', '.join(missing)}; "
                "every flavor must list every resource in coveredResources"
            )
    return tuple(quotas)
