"""Workloads as frozen values (PURE): pod sets, admission, state.

A workload is what waits for quota: a batch/v1 Job (one pod set ``main``) or a Kueue
``Workload`` with several pod sets. Requests are per pod, in milli-units.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from quota.core.checks import CheckStatus
from quota.core.model import SelectorRequirement, Toleration
from quota.core.pods_ready import Readiness, RequeuingTimestamp, queued_by_eviction


class WorkloadState(StrEnum):
    PENDING = "Pending"
    QUOTA_RESERVED = "QuotaReserved"  # holds quota; admitted once its admission checks pass
    ADMITTED = "Admitted"
    EVICTING = "Evicting"  # chosen as a victim, checkpoint grace running, still holds quota
    FINISHED = "Finished"
    DEACTIVATED = "Deactivated"


# The states whose admission counts as usage: quota reserved, admitted, or chosen as a
# victim and still checkpointing. The one definition: the engine, the simulator, the loop,
# the Kubernetes adapter and the ledger's SQL all read it.
HOLDS_QUOTA: frozenset[WorkloadState] = frozenset(
    {WorkloadState.QUOTA_RESERVED, WorkloadState.ADMITTED, WorkloadState.EVICTING}
)
# The states whose pods may run: a quota reservation keeps its Job suspended until every
# admission check passes.
RUNS: frozenset[WorkloadState] = frozenset({WorkloadState.ADMITTED, WorkloadState.EVICTING})
# The same states as the ledger's ``state`` column spells them, for ``state = ANY(:holding)``.
HOLDS_QUOTA_SQL: tuple[str, ...] = tuple(sorted(str(state) for state in HOLDS_QUOTA))
# The states the engine gives wait reasons for: queued, or deactivated by an admin.
WAITING: frozenset[WorkloadState] = frozenset({WorkloadState.PENDING, WorkloadState.DEACTIVATED})


# Pod-template annotations Kueue defines for topology-aware scheduling.
REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"


@dataclass(frozen=True, slots=True)
class PodSet:
    name: str
    count: int
    requests: Mapping[str, int]  # per pod, milli-units
    min_count: int | None = None  # partial admission: admit with as few as this many pods
    node_selector: Mapping[str, str] = field(default_factory=dict)
    # Required node affinity: a pod may go where ANY term matches (all of a term's requirements).
    affinity_terms: tuple[tuple[SelectorRequirement, ...], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    annotations: Mapping[str, str] = field(default_factory=dict)

    def total(self, count: int | None = None) -> dict[str, int]:
        """Requests of ``count`` pods (default: all of them)."""
        pods = self.count if count is None else count
        return {name: amount * pods for name, amount in self.requests.items()}


@dataclass(frozen=True, slots=True)
class PodSetAssignment:
    """How one pod set was admitted: how many pods, which flavor for each resource."""

    name: str
    count: int
    flavors: Mapping[str, str]  # resource -> flavor
    usage: Mapping[str, int]  # resource -> milli-units held (count * per-pod request)


@dataclass(frozen=True, slots=True)
class PodSetPlacement:
    """Where one pod set's pods were placed: pods per node, and the topology domain they
    are confined to (``level`` node label = ``domain``) when the pod set asked for one."""

    name: str
    nodes: Mapping[str, int]  # node name -> pods
    level: str | None = None
    domain: str | None = None


@dataclass(frozen=True, slots=True)
class Admission:
    cluster_queue: str
    pod_sets: tuple[PodSetAssignment, ...]
    # Per pod set, the nodes its pods were counted on; None when no node inventory limited
    # the admission (quota only), or it was admitted before placements were recorded.
    placement: tuple[PodSetPlacement, ...] | None = None

    def usage(self) -> dict[tuple[str, str], int]:
        """Total held per (flavor, resource)."""
        held: dict[tuple[str, str], int] = {}
        for assignment in self.pod_sets:
            for resource, amount in assignment.usage.items():
                key = (assignment.flavors[resource], resource)
                held[key] = held.get(key, 0) + amount
        return held


@dataclass(frozen=True, slots=True)
class Workload:
    namespace: str
    name: str
    queue_name: str  # the LocalQueue in ``namespace``
    pod_sets: tuple[PodSet, ...]
    created_at: datetime
    priority: int = 0
    priority_class: str | None = None
    state: WorkloadState = WorkloadState.PENDING
    active: bool = True
    admission: Admission | None = None
    admitted_at: datetime | None = None
    eviction_count: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    kind: str = "Job"  # Job | Workload: the object it came from
    # Its last eviction since it last held quota: when (an Evicting victim was asked to
    # checkpoint then) and why (an EvictionReason); both cleared when it is admitted again.
    evicted_at: datetime | None = None
    eviction_reason: str | None = None
    # waitForPodsReady: its pods' readiness while admitted, and since when; how often it
    # was requeued after PodsReadyTimeout and when its backoff ends (or an admission check's
    # Retry backoff); why Berth itself deactivated it (None: an admin did, or it is active).
    readiness: Readiness = Readiness.WAIT_FOR_START
    readiness_since: datetime | None = None
    requeue_count: int = 0
    requeue_at: datetime | None = None
    deactivation: str | None = None
    # Its admission checks' states while it reserves quota (quota.core.checks).
    checks: tuple[CheckStatus, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    # What a decision does to a workload is ``admission.engine.transitions``.


# A place in a ClusterQueue's pending order: (-priority, queue-order time, key).
PendingOrder = tuple[int, datetime, str]


def queue_time(workload: Workload, timestamp: RequeuingTimestamp) -> datetime:
    """When ``workload`` queues from (Kueue's queue-order timestamp): its last eviction
    when that was for a reason ``queued_by_eviction(timestamp)`` names, else its
    creation. ``timestamp``: ``waitForPodsReady.requeuingStrategy.timestamp``."""
    evicted = workload.evicted_at
    if evicted is None or workload.eviction_reason not in queued_by_eviction(timestamp):
        return workload.created_at
    return evicted


def pending_order(
    workload: Workload, timestamp: RequeuingTimestamp, key: str | None = None
) -> PendingOrder:
    """The pending order (smaller goes first): higher priority, then earlier queue time
    (``queue_time``), then the key ``namespace/name`` as Python compares strings (by
    code point). The one definition: the engine's queues, positions and cohort heads sort
    by it, and the ledger's ``pending_order_by`` is its SQL. ``key``: the workload's key
    when the caller has it (formatting it costs, once per pending workload per cycle)."""
    at = workload.created_at
    if workload.evicted_at is not None:  # rare: most pending workloads were never evicted
        at = queue_time(workload, timestamp)
    return (-workload.priority, at, workload.key if key is None else key)
