"""Hypothesis strategies for valid ledger objects (what ``berth apply`` would accept)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from quota.core.checks import CheckRule
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    LabelSelector,
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
    SelectorRequirement,
    StopPolicy,
    Taint,
    Toleration,
    Topology,
    WhenCanBorrow,
    WhenCanPreempt,
    WithinClusterQueue,
)

RESOURCES = ("cpu", "memory", "nvidia.com/gpu", "ephemeral-storage", "example.com/fpga", "pods")
LABEL_KEYS = ("zone", "gpu.product", "nvidia.com/gpu.product", "topology.kubernetes.io/rack")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
INT32 = st.integers(-(2**31), 2**31 - 1)

names = st.from_regex(r"[a-z]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
label_keys = st.sampled_from(LABEL_KEYS)
# Values YAML would read as something else (yes, 1.5, null) must survive the round trip too.
label_values = st.one_of(
    st.text("abcXYZ019-_.", max_size=8), st.sampled_from(["yes", "true", "1.5", "null", "~"])
)
labels = st.dictionaries(label_keys, label_values, max_size=3)
milli = st.one_of(st.integers(0, 10**6), st.integers(0, 2**53).map(lambda n: n * 1000))
prose = st.text(st.characters(min_codepoint=32, max_codepoint=0x24F), max_size=20)


def _enum(kind: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from(list(kind))


@st.composite
def tolerations(draw: st.DrawFn) -> Toleration:
    key = draw(st.one_of(st.just(""), label_keys))
    operator = "Exists" if not key else draw(st.sampled_from(["Equal", "Exists"]))
    value = draw(label_values) if operator == "Equal" else ""
    return Toleration(key, operator, value, draw(st.sampled_from(["", *EFFECTS])))


taints = st.builds(Taint, label_keys, label_values, st.sampled_from(EFFECTS))


@st.composite
def requirements(draw: st.DrawFn) -> SelectorRequirement:
    operator = draw(st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist"]))
    values: tuple[str, ...] = ()
    if operator in ("In", "NotIn"):
        values = tuple(draw(st.lists(label_values, min_size=1, max_size=3)))
    return SelectorRequirement(draw(label_keys), operator, values)


selectors = st.builds(LabelSelector, labels, st.lists(requirements(), max_size=2).map(tuple))


@st.composite
def resource_groups(draw: st.DrawFn, *, has_parent: bool) -> tuple[ResourceGroup, ...]:
    """Disjoint resources and flavors across groups; every flavor covers its group exactly."""
    pool = draw(st.permutations(RESOURCES))
    flavor_names = iter(draw(st.lists(names, min_size=9, max_size=9, unique=True)))
    groups: list[ResourceGroup] = []
    start = 0
    for _ in range(draw(st.integers(0, 3))):
        size = draw(st.integers(1, 2))
        covered = tuple(pool[start : start + size])
        start += size
        flavors = []
        for _ in range(draw(st.integers(1, 3))):
            order = draw(st.permutations(covered))
            flavors.append(
                FlavorQuotas(next(flavor_names), tuple(draw(_quota(r, has_parent)) for r in order))
            )
        groups.append(ResourceGroup(covered, tuple(flavors)))
    return tuple(groups)


@st.composite
def _quota(draw: st.DrawFn, resource: str, has_parent: bool) -> ResourceQuota:
    nominal = draw(milli)
    if not has_parent:
        return ResourceQuota(resource, nominal)
    borrowing = draw(st.none() | milli)
    lending = draw(st.none() | st.integers(0, nominal))
    return ResourceQuota(resource, nominal, borrowing, lending)


@st.composite
def cluster_queues(draw: st.DrawFn) -> ClusterQueue:
    cohort = draw(st.none() | names)
    reclaim = draw(_enum(ReclaimWithinCohort))
    policy = BorrowWithinCohortPolicy.NEVER
    if reclaim != ReclaimWithinCohort.NEVER:
        policy = draw(_enum(BorrowWithinCohortPolicy))
    return ClusterQueue(
        name=draw(names),
        resource_groups=draw(resource_groups(has_parent=cohort is not None)),
        cohort=cohort,
        namespace_selector=draw(st.none() | selectors),
        queueing_strategy=draw(_enum(QueueingStrategy)),
        preemption=Preemption(
            draw(_enum(WithinClusterQueue)),
            reclaim,
            BorrowWithinCohort(policy, draw(st.none() | INT32)),
        ),
        flavor_fungibility=FlavorFungibility(
            draw(_enum(WhenCanBorrow)), draw(_enum(WhenCanPreempt))
        ),
        stop_policy=draw(_enum(StopPolicy)),
        fair_sharing_weight=draw(milli),
        admission_checks=tuple(
            CheckRule(name, tuple(draw(st.lists(names, max_size=2, unique=True))))
            for name in draw(st.lists(names, max_size=2, unique=True))
        ),
    )


@st.composite
def cohorts(draw: st.DrawFn) -> Cohort:
    parent = draw(st.none() | names)
    groups = draw(resource_groups(has_parent=parent is not None))
    return Cohort(draw(names), parent, groups, draw(milli))


@st.composite
def nodes(draw: st.DrawFn) -> Node:
    capacity = draw(st.dictionaries(st.sampled_from(RESOURCES), milli, max_size=3))
    allocatable = {r: draw(st.integers(0, amount)) for r, amount in capacity.items()}
    conditions = st.builds(
        NodeCondition,
        st.sampled_from(["Ready", "MemoryPressure", "GPUHealthy"]),
        st.sampled_from(["True", "False", "Unknown"]),
        st.sampled_from(["", "KubeletReady", "XidError"]),
        prose,
    )
    return Node(
        name=draw(names),
        labels=draw(labels),
        taints=tuple(draw(st.lists(taints, max_size=2))),
        capacity=capacity,
        allocatable=allocatable,
        unschedulable=draw(st.booleans()),
        conditions=tuple(draw(st.lists(conditions, max_size=2))),
        health=draw(_enum(NodeHealth)),
    )


resource_flavors = st.builds(
    ResourceFlavor,
    names,
    labels,
    st.lists(taints, max_size=2).map(tuple),
    st.lists(tolerations(), max_size=2).map(tuple),
    st.none() | names,
    min_priority=st.none() | INT32,
)
local_queues = st.builds(LocalQueue, names, names, names, _enum(StopPolicy))
priority_classes = st.builds(PriorityClass, names, INT32, prose)
topologies = st.builds(
    Topology, names, st.lists(label_keys, min_size=1, max_size=4, unique=True).map(tuple)
)
namespaces = st.builds(Namespace, names, labels)


def model_objects() -> st.SearchStrategy[Any]:
    """Any valid ledger object."""
    return st.one_of(
        resource_flavors,
        cluster_queues(),
        cohorts(),
        local_queues,
        priority_classes,
        topologies,
        namespaces,
        nodes(),
    )
