"""Kueue's metric names, labels and types beside Berth's own (``api.metrics``), so that
dashboards and alerts written for Kueue keep working against Berth; and two figures Kueue
users ask for and Kueue does not export: how long the oldest pending workload of each
queue and reason has waited, and preemptions by preemptor and victim ClusterQueue.

Kueue's ``replica_role`` and ``priority_class`` labels are left out: Berth's figures come
from the shared ledger, the same from every replica, and are not split by priority class.
Resource figures are in the resource's units (GPUs, CPU cores, bytes), as Kueue's are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)

from quota.core.model import QueueingStrategy
from quota.core.reasons import WaitReason
from quota.ledger.reads import metrics as aggregates
from quota.ledger.reads.queues import QueueStatus

# Kueue's buckets for admission wait times: 1 s, then 2.5 s doubling fifteen times (~11 h).
WAIT_BUCKETS = (1.0, *(2.5 * 2**i for i in range(15)))
_QUOTA = ["cohort", "cluster_queue", "flavor", "resource"]
# Reasons under which Kueue keeps a workload in its queue's active heap, tried again next
# cycle: not evaluated yet, or its preemptions are under way. Kueue parks every other
# failed workload as "inadmissible" until the cluster changes, except in a StrictFIFO
# queue, which retries every workload but a misconfigured one.
_ACTIVE = frozenset({WaitReason.PENDING_EVALUATION, WaitReason.WAITING_FOR_PREEMPTED_WORKLOADS})
_NEVER_ACTIVE = frozenset({WaitReason.MISCONFIGURED, WaitReason.DEACTIVATED})


def pending_status(reason: str, strategy: QueueingStrategy) -> str:
    """Kueue's ``status`` label of a workload pending for ``reason`` in a queue of
    ``strategy``: ``active`` or ``inadmissible``."""
    if reason in _ACTIVE:
        return "active"
    if strategy is QueueingStrategy.STRICT_FIFO and reason not in _NEVER_ACTIVE:
        return "active"
    return "inadmissible"


def queue_families(statuses: Sequence[QueueStatus]) -> Iterator[Metric]:
    """Pending (active/inadmissible), reserving and admitted counts, quota and usage per
    queue."""
    pending = GaugeMetricFamily(
        "kueue_pending_workloads",
        "Pending workloads per ClusterQueue: 'active' ones are tried again in the next cycle, "
        "'inadmissible' ones wait for the cluster to change",
        labels=["cluster_queue", "status"],
    )
    admitted = GaugeMetricFamily(
        "kueue_admitted_active_workloads",
        "Workloads admitted in the ClusterQueue now (quota reserved and every admission "
        "check passed)", labels=["cluster_queue"],
    )  # fmt: skip
    # A queue without admission checks reserves and admits in one step: the counts agree.
    reserving = GaugeMetricFamily(
        "kueue_reserving_active_workloads",
        "Workloads reserving quota in the ClusterQueue now (admitted ones included)",
        labels=["cluster_queue"],
    )
    usage = GaugeMetricFamily(
        "kueue_cluster_queue_resource_usage",
        "Quota the ClusterQueue's admitted workloads hold, per flavor and resource", labels=_QUOTA,
    )  # fmt: skip
    nominal = GaugeMetricFamily(
        "kueue_cluster_queue_nominal_quota",
        "The ClusterQueue's nominal quota per flavor and resource", labels=_QUOTA,
    )  # fmt: skip
    limit = GaugeMetricFamily(
        "kueue_cluster_queue_borrowing_limit",
        "How much the ClusterQueue may borrow from its cohort per flavor and resource; "
        "+Inf when no limit is set",
        labels=_QUOTA,
    )
    lending = GaugeMetricFamily(
        "kueue_cluster_queue_lending_limit",
        "How much of its unused nominal quota the ClusterQueue may lend to its cohort per "
        "flavor and resource; +Inf when no limit is set",
        labels=_QUOTA,
    )
    for status in statuses:
        spec = status.spec
        strategy = spec.queueing_strategy if spec else QueueingStrategy.BEST_EFFORT_FIFO
        split = {"active": 0, "inadmissible": 0}
        for reason, count in status.pending_by_reason.items():
            split[pending_status(reason, strategy)] += count
        for label, count in split.items():
            pending.add_metric([status.name, label], count)
        admitted.add_metric([status.name], status.admitted)
        reserving.add_metric([status.name], status.reserving)
        for f in status.resources:
            labels = [status.cohort or "", status.name, f.flavor, f.resource]
            usage.add_metric(labels, f.used / 1000)
            nominal.add_metric(labels, f.nominal / 1000)
            limit.add_metric(labels, _limit(f.borrowing_limit))
            lending.add_metric(labels, _limit(f.lending_limit))
    yield from (pending, admitted, reserving, usage, nominal, limit, lending)


def _limit(milli: int | None) -> float:
    return float("inf") if milli is None else milli / 1000


def wait_histogram(waits: Iterable[aggregates.QueueWaits]) -> Metric:
    """Kueue's admission wait histogram: every admission, from when it last joined the queue."""
    family = HistogramMetricFamily(
        "kueue_admission_wait_time_seconds",
        "Time from joining the queue (creation or requeue after an eviction) to admission, "
        "per ClusterQueue",
        labels=["cluster_queue"],
    )
    for q in waits:
        buckets = [*((str(b), c) for b, c in q.waits.buckets), ("+Inf", q.waits.count)]
        family.add_metric([q.cluster_queue], buckets, q.waits.sum_seconds)
    return family


def history_families(
    events: Iterable[aggregates.EventCount], preemptions: Sequence[aggregates.PreemptionCount]
) -> Iterator[Metric]:
    """Admission, eviction and preemption totals, counted from the ledger's history."""
    admitted = CounterMetricFamily(
        "kueue_admitted_workloads",
        "Admissions per ClusterQueue (a workload admitted again after an eviction counts again)",
        labels=["cluster_queue"],
    )
    admissions: dict[str, int] = {}
    for e in events:
        if e.type == "Admitted":
            admissions[e.cluster_queue] = admissions.get(e.cluster_queue, 0) + e.count
    for queue, count in sorted(admissions.items()):
        admitted.add_metric([queue], count)
    evicted = CounterMetricFamily(
        "kueue_evicted_workloads",
        "Evictions per ClusterQueue of the evicted workload and reason "
        "(Preempted, NodeUnhealthy, ClusterQueueStopped, Deactivated, ...)",
        labels=["cluster_queue", "reason"],
    )
    for e in events:
        if e.type == "Evicted":
            evicted.add_metric([e.cluster_queue, e.reason], e.count)
    preempted = CounterMetricFamily(
        "kueue_preempted_workloads",
        "Workloads preempted, per ClusterQueue of the preemptor and reason (InClusterQueue, "
        "InCohortReclamation, InCohortFairSharing, InCohortReclaimWhileBorrowing)",
        labels=["preempting_cluster_queue", "reason"],
    )
    by_preemptor: dict[tuple[str, str], int] = {}
    for p in preemptions:
        key = (p.preemptor_cluster_queue, p.cause)
        by_preemptor[key] = by_preemptor.get(key, 0) + p.count
    for (queue, cause), count in sorted(by_preemptor.items()):
        preempted.add_metric([queue, cause], count)
    pairs = CounterMetricFamily(
        "berth_preemptions",
        "Workloads preempted, per ClusterQueue of the preemptor, of the victim, and reason",
        labels=["preempting_cluster_queue", "victim_cluster_queue", "reason"],
    )
    for p in preemptions:
        pairs.add_metric([p.preemptor_cluster_queue, p.victim_cluster_queue, p.cause], p.count)
    yield from (admitted, evicted, preempted, pairs)


def oldest_pending(rows: Iterable[aggregates.OldestPending]) -> Metric:
    """How long the longest-waiting pending workload per queue and reason has waited."""
    family = GaugeMetricFamily(
        "berth_oldest_pending_workload_age_seconds",
        "Seconds the longest-waiting pending workload has waited since it joined the queue "
        "(creation or requeue), per ClusterQueue and primary wait reason",
        labels=["cluster_queue", "reason"],
    )
    for row in rows:
        family.add_metric([row.cluster_queue, row.reason], row.age_seconds)
    return family
