"""The ledger's objects as frozen values (PURE): flavors, queues, cohorts, priorities, nodes.

These are what the manifests parse into, what the ledger stores and loads, and what the
admission engine reads. Quantities are ``int`` milli-units (see ``quota.quantity``).
Workloads live in ``quota.workload``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from quota.core.checks import CheckRule
from quota.core.metering import Price


class QueueingStrategy(StrEnum):
    BEST_EFFORT_FIFO = "BestEffortFIFO"
    STRICT_FIFO = "StrictFIFO"


class WithinClusterQueue(StrEnum):
    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"
    LOWER_OR_NEWER_EQUAL_PRIORITY = "LowerOrNewerEqualPriority"


class ReclaimWithinCohort(StrEnum):
    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"
    ANY = "Any"


class BorrowWithinCohortPolicy(StrEnum):
    NEVER = "Never"
    LOWER_PRIORITY = "LowerPriority"


class StopPolicy(StrEnum):
    NONE = "None"
    HOLD = "Hold"
    HOLD_AND_DRAIN = "HoldAndDrain"


class WhenCanBorrow(StrEnum):
    # Kueue v1beta1 spells the first one "Borrow"; the manifest parser maps it here.
    MAY_STOP_SEARCH = "MayStopSearch"
    TRY_NEXT_FLAVOR = "TryNextFlavor"


class WhenCanPreempt(StrEnum):
    # Kueue v1beta1 spells the first one "Preempt"; the manifest parser maps it here.
    MAY_STOP_SEARCH = "MayStopSearch"
    TRY_NEXT_FLAVOR = "TryNextFlavor"


class NodeHealth(StrEnum):
    HEALTHY = "Healthy"
    DEGRADED = "Degraded"
    CORDONED = "Cordoned"
    REPAIRING = "Repairing"
    VALIDATING = "Validating"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"  # Equal | Exists
    value: str = ""
    effect: str = ""  # "" tolerates every effect

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes toleration semantics for one taint."""
        if self.effect and self.effect != taint.effect:
            return False
        if not self.key:
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value


@dataclass(frozen=True, slots=True)
class SelectorRequirement:
    """One ``matchExpressions`` entry (label selectors and node-affinity terms alike)."""

    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist (| Gt | Lt for node affinity)
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator == "In":
            return present and value in self.values
        if self.operator == "NotIn":
            return not present or value not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator in ("Gt", "Lt") and present and value is not None and self.values:
            try:
                left, right = int(value), int(self.values[0])
            except ValueError:
                return False
            return left > right if self.operator == "Gt" else left < right
        return False


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A Kubernetes label selector; the empty selector matches everything."""

    match_labels: Mapping[str, str] = field(default_factory=dict)
    match_expressions: tuple[SelectorRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(labels.get(k) == v for k, v in self.match_labels.items()) and all(
            r.matches(labels) for r in self.match_expressions
        )


@dataclass(frozen=True, slots=True)
class ResourceFlavor:
    name: str
    node_labels: Mapping[str, str] = field(default_factory=dict)
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology_name: str | None = None
    # ``berth.dev/price-per-hour`` by resource; metering only, admission never reads it.
    prices: Mapping[str, Price] = field(default_factory=dict)
    # ``berth.dev/min-priority``: only workloads of at least this priority may use the
    # flavor (keeps low-priority work off specialised nodes); None admits every priority.
    min_priority: int | None = None


@dataclass(frozen=True, slots=True)
class ResourceQuota:
    """Quota of one resource in one flavor; limits ``None`` mean unlimited."""

    resource: str
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorQuotas:
    flavor: str
    resources: tuple[ResourceQuota, ...]


@dataclass(frozen=True, slots=True)
class ResourceGroup:
    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(frozen=True, slots=True)
class BorrowWithinCohort:
    policy: BorrowWithinCohortPolicy = BorrowWithinCohortPolicy.NEVER
    max_priority_threshold: int | None = None


@dataclass(frozen=True, slots=True)
class Preemption:
    within_cluster_queue: WithinClusterQueue = WithinClusterQueue.NEVER
    reclaim_within_cohort: ReclaimWithinCohort = ReclaimWithinCohort.NEVER
    borrow_within_cohort: BorrowWithinCohort = field(default_factory=BorrowWithinCohort)


@dataclass(frozen=True, slots=True)
class FlavorFungibility:
    when_can_borrow: WhenCanBorrow = WhenCanBorrow.MAY_STOP_SEARCH
    when_can_preempt: WhenCanPreempt = WhenCanPreempt.TRY_NEXT_FLAVOR


@dataclass(frozen=True, slots=True)
class ClusterQueue:
    name: str
    resource_groups: tuple[ResourceGroup, ...] = ()
    cohort: str | None = None
    # None selects no namespace (Kueue's default); LabelSelector() selects every namespace.
    namespace_selector: LabelSelector | None = None
    queueing_strategy: QueueingStrategy = QueueingStrategy.BEST_EFFORT_FIFO
    preemption: Preemption = field(default_factory=Preemption)
    flavor_fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    stop_policy: StopPolicy = StopPolicy.NONE
    fair_sharing_weight: int = 1000  # milli-units, Kueue's default weight 1
    # Admission checks (quota.core.checks): a workload only reserves quota until they pass.
    admission_checks: tuple[CheckRule, ...] = ()


@dataclass(frozen=True, slots=True)
class Cohort:
    """A node of the cohort tree: an optional parent and quota of its own."""

    name: str
    parent: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_sharing_weight: int = 1000


@dataclass(frozen=True, slots=True)
class LocalQueue:
    namespace: str
    name: str
    cluster_queue: str
    stop_policy: StopPolicy = StopPolicy.NONE

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True, slots=True)
class PriorityClass:
    name: str
    value: int
    description: str = ""


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Topology:
    """Topology levels by node label, outermost first (e.g. block, rack, hostname)."""

    name: str
    levels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class Node:
    """A node of the inventory: what it has, what is healthy, whether it takes work."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    capacity: Mapping[str, int] = field(default_factory=dict)
    allocatable: Mapping[str, int] = field(default_factory=dict)
    unschedulable: bool = False
    conditions: tuple[NodeCondition, ...] = ()
    health: NodeHealth = NodeHealth.HEALTHY

    @property
    def ready(self) -> bool:
        """A node without a Ready condition is taken as ready (inventory without status)."""
        for condition in self.conditions:
            if condition.type == "Ready":
                return condition.status == "True"
        return True
