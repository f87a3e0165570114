"""``GET /metrics`` in the Prometheus text format.

Gauges and totals are read from the ledger at scrape time (grouped queries; the totals
counted from the workload event history), so every replica reports the same numbers and
nothing is lost across restarts; only the cycle timings are process-local, fed by the
admission loop through ``observe_cycle``. Kueue's names for the same figures
(``kueue_*``) are exported beside Berth's: ``api.metrics_kueue``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from api import metrics_kueue as kueue
from api.deps import AppContext, SessionScope
from quota.core.demand import Demand
from quota.core.model import NodeHealth
from quota.ledger import nodes as ledger_nodes
from quota.ledger.reads import metrics as aggregates
from quota.ledger.reads import queues
from quota.ledger.reads.demand import check_counts, read_demand

if TYPE_CHECKING:
    from fastapi import FastAPI

router = APIRouter(tags=["metrics"])

WAIT_BUCKETS = (1.0, 10.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 21600.0, 86400.0)
_FR = ["cluster_queue", "flavor", "resource"]

# Process-wide: the loop runs in the same process as the API that serves them.
CYCLE_DURATION = Histogram(
    "berth_admission_cycle_duration_seconds",
    "Time one admission cycle took: refresh, decide, commit",
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=None,
)
DECISIONS = Histogram(
    "berth_decisions_per_cycle",
    "Admissions plus evictions decided in one admission cycle",
    buckets=(0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000),
    registry=None,
)


def observe_cycle(duration_s: float, decisions: int) -> None:
    """Record one admission cycle (for the admission loop to call after each cycle)."""
    CYCLE_DURATION.observe(duration_s)
    DECISIONS.observe(decisions)


class LedgerCollector(Collector):
    """Workload and quota figures, queried from the ledger when scraped."""

    def __init__(self, sessions: SessionScope) -> None:
        self.sessions = sessions

    def collect(self) -> Iterator[Metric]:
        with self.sessions() as session:
            statuses = queues.queue_statuses(session)
            events = aggregates.event_counts(session)
            waits = aggregates.wait_times(session, WAIT_BUCKETS)
            nodes = ledger_nodes.summaries(session)
            queue_waits = aggregates.admission_waits(session, kueue.WAIT_BUCKETS)
            preemptions = aggregates.preemption_counts(session)
            oldest = aggregates.oldest_pending(session)
            wanted = read_demand(session)
            checks = check_counts(session)
        pending = GaugeMetricFamily(
            "berth_pending_workloads",
            "Pending workloads by ClusterQueue and primary wait reason",
            labels=["cluster_queue", "reason"],
        )
        nominal = GaugeMetricFamily(
            "berth_cluster_queue_nominal_quota", "Nominal quota (resource units)", labels=_FR
        )
        usage = GaugeMetricFamily(
            "berth_cluster_queue_resource_usage", "Quota held by admitted workloads", labels=_FR
        )
        borrowed = GaugeMetricFamily(
            "berth_cluster_queue_borrowed", "Quota used above nominal, from the cohort", labels=_FR
        )
        for status in statuses:
            for code, count in status.pending_by_reason.items():
                pending.add_metric([status.name, code], count)
            for f in status.resources:
                labels = [status.name, f.flavor, f.resource]
                nominal.add_metric(labels, f.nominal / 1000)
                usage.add_metric(labels, f.used / 1000)
                borrowed.add_metric(labels, f.borrowed / 1000)
        yield from (pending, nominal, usage, borrowed)
        yield _node_health(nodes)
        yield from _totals(events)
        yield HistogramMetricFamily(
            "berth_admission_wait_time_seconds",
            "Time from submission to admission of admitted workloads",
            buckets=[*((str(b), c) for b, c in waits.buckets), ("+Inf", waits.count)],
            sum_value=waits.sum_seconds,
        )
        yield kueue.oldest_pending(oldest)
        yield from _demand(wanted)
        yield _checks(checks)
        yield from kueue.queue_families(statuses)
        yield kueue.wait_histogram(queue_waits)
        yield from kueue.history_families(events, preemptions)


def _demand(wanted: Demand) -> Iterator[Metric]:
    """The autoscaler's signal: capacity demand (scale on it) apart from quota-blocked."""
    labels = ["flavor", "resource", "level"]
    capacity = GaugeMetricFamily(
        "berth_capacity_demand",
        "Resource units waiting work needs that its quota admits but the nodes cannot hold "
        "(InsufficientCapacity, TopologyPlacementFailed, UnhealthyCapacity, "
        "WaitingForAdmissionCheck): what more nodes would start",
        labels=labels,
    )
    blocked = GaugeMetricFamily(
        "berth_quota_blocked_demand",
        "Resource units waiting work needs that its quota does not admit (WaitingForQuota, "
        "ExceedsMaxQuota): more nodes would not start it",
        labels=labels,
    )
    for family, lines in ((capacity, wanted.capacity), (blocked, wanted.quota_blocked)):
        for line in lines:
            family.add_metric([line.flavor, line.resource, line.level or ""], line.amount / 1000)
    yield from (capacity, blocked)


def _checks(counts: dict[str, dict[tuple[str, str], int]]) -> Metric:
    """Workloads reserving quota, per ClusterQueue, admission check and the check's state."""
    family = GaugeMetricFamily(
        "berth_admission_check_workloads",
        "Workloads reserving quota for their admission checks, by check and its state",
        labels=["cluster_queue", "check", "state"],
    )
    for queue, by_check in sorted(counts.items()):
        for (check, state), count in sorted(by_check.items()):
            family.add_metric([queue, check, state], count)
    return family


def _node_health(nodes: list[ledger_nodes.NodeSummary]) -> Metric:
    """Nodes per health state, every state listed (0 included) so alerts can watch one."""
    counts = dict.fromkeys((str(state) for state in NodeHealth), 0)
    for node in nodes:
        counts[str(node.health)] += 1
    family = GaugeMetricFamily("berth_nodes", "Nodes in the inventory by health state",
                               labels=["health"])
    for state, count in counts.items():
        family.add_metric([state], count)
    return family


def _totals(events: list[aggregates.EventCount]) -> Iterator[Metric]:
    admitted = CounterMetricFamily(
        "berth_admitted_workloads", "Admissions by ClusterQueue", labels=["cluster_queue"]
    )
    evicted = CounterMetricFamily(
        "berth_evicted_workloads",
        "Evictions by ClusterQueue and reason",
        labels=["cluster_queue", "reason"],
    )
    finished = 0
    admitted_by: dict[str, int] = {}
    for e in events:
        if e.type == "Admitted":
            admitted_by[e.cluster_queue] = admitted_by.get(e.cluster_queue, 0) + e.count
        elif e.type == "Evicted":
            evicted.add_metric([e.cluster_queue, e.reason], e.count)
        elif e.type == "Finished":
            finished += e.count
    for name, count in sorted(admitted_by.items()):
        admitted.add_metric([name], count)
    yield admitted
    yield evicted
    yield CounterMetricFamily("berth_finished_workloads", "Workloads finished", value=finished)


def registry_for(context: AppContext) -> CollectorRegistry:
    """A registry with the ledger figures of ``context`` and the process's cycle timings."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LedgerCollector(context.session_scope))
    registry.register(CYCLE_DURATION)
    registry.register(DECISIONS)
    return registry


def install(
    app: FastAPI, context: AppContext, *, dependencies: Sequence[Any] = (),
    responses: dict[int | str, dict[str, Any]] | None = None,
) -> None:  # fmt: skip
    """Serve ``/metrics`` behind ``dependencies`` (a token check unless metrics are open),
    declaring the error ``responses`` they and the ledger may answer."""
    app.state.berth_metrics = registry_for(context)
    app.include_router(router, dependencies=list(dependencies), responses=responses)


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        200: {
            "description": "the Prometheus text exposition format",
            "content": {CONTENT_TYPE_LATEST.split(";")[0]: {"schema": {"type": "string"}}},
        }
    },
)
async def metrics(request: Request) -> Response:
    """Prometheus text exposition."""
    registry: CollectorRegistry = request.app.state.berth_metrics
    body = await run_in_threadpool(generate_latest, registry)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
