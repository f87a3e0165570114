"""The wait-reason and eviction-reason vocabulary (PURE), per docs/wait-reasons.md.

One enum serves the engine, the ledger column, the REST field, metrics labels and
Kubernetes conditions. Members are declared in precedence order: the primary reason of a
pending workload is the first of its reasons in this order.
"""

from __future__ import annotations

from enum import StrEnum


class WaitReason(StrEnum):
    DEACTIVATED = "Deactivated"
    MISCONFIGURED = "Misconfigured"
    SUSPENDED = "Suspended"
    NO_MATCHING_FLAVOR = "NoMatchingFlavor"
    EXCEEDS_MAX_QUOTA = "ExceedsMaxQuota"
    EXCEEDS_NODE_CAPACITY = "ExceedsNodeCapacity"
    BLOCKED_BY_QUEUE_HEAD = "BlockedByQueueHead"
    WAITING_FOR_QUOTA = "WaitingForQuota"
    UNHEALTHY_CAPACITY = "UnhealthyCapacity"
    INSUFFICIENT_CAPACITY = "InsufficientCapacity"
    TOPOLOGY_PLACEMENT_FAILED = "TopologyPlacementFailed"
    RESERVED_BY_HIGHER_PRIORITY = "ReservedByHigherPriority"
    WAITING_FOR_PREEMPTED_WORKLOADS = "WaitingForPreemptedWorkloads"
    WAITING_FOR_ADMISSION_CHECK = "WaitingForAdmissionCheck"
    WAITING_FOR_PODS_READY = "WaitingForPodsReady"
    PENDING_EVALUATION = "PendingEvaluation"

    @property
    def precedence(self) -> int:
        """1-based place in the catalogue's precedence order (lower wins)."""
        return _ORDER[self]


_ORDER = {reason: index for index, reason in enumerate(WaitReason, start=1)}


class EvictionReason(StrEnum):
    PREEMPTED = "Preempted"
    NODE_UNHEALTHY = "NodeUnhealthy"
    CLUSTER_QUEUE_STOPPED = "ClusterQueueStopped"
    DEACTIVATED = "Deactivated"
    PODS_READY_TIMEOUT = "PodsReadyTimeout"
    ADMISSION_CHECK = "AdmissionCheck"  # a check answered Retry: quota released, requeued
    MAXIMUM_EXECUTION_TIME_EXCEEDED = "MaximumExecutionTimeExceeded"


class PreemptionCause(StrEnum):
    IN_CLUSTER_QUEUE = "InClusterQueue"
    IN_COHORT_RECLAMATION = "InCohortReclamation"
    IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
    IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
