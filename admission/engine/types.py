"""What goes into one admission cycle and what comes out (PURE).

``cycle.run_cycle(snapshot, now) -> CycleResult`` is the engine's single entry point; the
durable loop, the REST what-if and ``berth simulate`` all call it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from quota.core.checks import AdmissionCheck, CheckStatus, ProvisioningRequestConfig
from quota.core.fairness import DEFAULT_STRATEGIES, PreemptionStrategy
from quota.core.model import (
    ClusterQueue,
    Cohort,
    LocalQueue,
    Namespace,
    Node,
    PriorityClass,
    ResourceFlavor,
    Topology,
)
from quota.core.pods_ready import DISABLED, PodsReadyPolicy
from quota.core.reasons import PreemptionCause, WaitReason
from quota.core.tree import FlavorResource
from quota.core.workload import Admission, Workload

if TYPE_CHECKING:
    from admission.engine.queues import EntryMemo
    from admission.engine.shapes import ShapeMemo


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The ledger as the engine sees it. ``workloads`` holds every unfinished workload:
    pending ones and those holding quota (QuotaReserved, Admitted or Evicting, with
    ``admission`` set)."""

    flavors: Mapping[str, ResourceFlavor] = field(default_factory=dict)
    cluster_queues: Mapping[str, ClusterQueue] = field(default_factory=dict)
    cohorts: Mapping[str, Cohort] = field(default_factory=dict)
    local_queues: Mapping[str, LocalQueue] = field(default_factory=dict)  # "ns/name"
    priority_classes: Mapping[str, PriorityClass] = field(default_factory=dict)
    namespaces: Mapping[str, Namespace] = field(default_factory=dict)
    topologies: Mapping[str, Topology] = field(default_factory=dict)
    nodes: Mapping[str, Node] = field(default_factory=dict)
    workloads: Mapping[str, Workload] = field(default_factory=dict)  # "ns/name"
    admission_checks: Mapping[str, AdmissionCheck] = field(default_factory=dict)
    provisioning_configs: Mapping[str, ProvisioningRequestConfig] = field(default_factory=dict)
    fair_sharing: bool = False
    fair_strategies: tuple[PreemptionStrategy, ...] = DEFAULT_STRATEGIES
    # Fair sharing with memory: each ClusterQueue's decayed usage, milli-units per slot
    # (None: the share is of this instant's usage, as in Kueue).
    decayed_usage: Mapping[str, Mapping[FlavorResource, int]] | None = None
    # Admission fair sharing: each LocalQueue's ("ns/name") weighted decayed usage; it
    # orders the workloads of ClusterQueues with usage-based admission (None: off).
    queue_usage: Mapping[str, float] | None = None
    pods_ready: PodsReadyPolicy = DISABLED  # waitForPodsReady
    # Shape ids kept across the loop's cycles (admission.engine.shapes.ShapeMemo); a
    # cache only: it never changes a decision, and None builds them afresh.
    shapes: ShapeMemo | None = field(default=None, compare=False)
    # Queue entries kept across the loop's cycles (admission.engine.queues.EntryMemo); a
    # cache only, like ``shapes``.
    entries: EntryMemo | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Reason:
    """One wait reason: code, one sentence with the numbers, structured details."""

    code: WaitReason
    message: str
    details: Mapping[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"code": str(self.code), "message": self.message, "details": dict(self.details)}


@dataclass(frozen=True, slots=True)
class PendingStatus:
    """Why a workload is still pending, and where it stands."""

    key: str
    cluster_queue: str | None
    reasons: tuple[Reason, ...]  # all blocking reasons, primary first
    hints: tuple[str, ...] = ()
    position: int | None = None  # 1-based place in its ClusterQueue's pending order

    @property
    def reason(self) -> Reason:
        return self.reasons[0]


@dataclass(frozen=True, slots=True)
class AdmissionDecision:
    key: str
    admission: Admission
    borrowing: bool  # admitted using quota borrowed from the cohort
    # Non-empty: quota reserved only, admitted once these admission checks pass.
    checks: tuple[str, ...] = ()
    checked: bool = False  # a reservation whose checks all passed: admitted now


@dataclass(frozen=True, slots=True)
class EvictionDecision:
    """A workload evicted (or asked to checkpoint): a preemption victim of ``preemptor``, or
    drained by a stopped queue / deactivation (``reason`` says which; ``cause`` is None and
    ``preemptor`` empty then)."""

    key: str
    preemptor: str
    cause: PreemptionCause | None
    cluster_queue: str
    reason: str = "Preempted"  # an EvictionReason value
    details: Mapping[str, object] = field(default_factory=dict)  # more for the Evicted event
    # PodsReadyTimeout (or an admission check's Retry): when its requeue backoff ends;
    # Deactivated by Berth: why; the admission check that answered Retry or Rejected.
    requeue_at: datetime | None = None
    deactivation: str | None = None
    check: CheckStatus | None = None


@dataclass(frozen=True, slots=True)
class CycleResult:
    now: datetime
    admitted: tuple[AdmissionDecision, ...] = ()
    evicted: tuple[EvictionDecision, ...] = ()  # in eviction order
    pending: Mapping[str, PendingStatus] = field(default_factory=dict)
