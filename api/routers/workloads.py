"""``GET /api/v1/workloads`` (filtered pages), ``…/{namespace}/{name}`` (why it waits, who
is ahead, when it may start) and ``…/{namespace}/{name}/history`` (its timeline, read by
``quota.core.timeline`` from what the caller may see)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from api import tenancy
from api.auth import Caller, Grant, require_namespace
from api.deps import ContextDep, LedgerDep
from api.estimate import entry_seconds, estimate_start
from api.pagination import DEFAULT_LIMIT, Cursor, Limit, decode_cursor, encode_cursor
from api.params import NamespaceName, ObjectName
from api.responses import json_response
from api.schemas.errors import error_responses
from api.schemas.manifests import NO_NUL
from api.schemas.workloads import (
    AdmissionOut,
    AheadOut,
    EstimatedStart,
    EventOut,
    HistoryRow,
    PodSetAdmissionOut,
    PodSetOut,
    PreemptorOut,
    Reason,
    ReasonTotal,
    TimelineOut,
    WorkloadDetail,
    WorkloadHistory,
    WorkloadPage,
    WorkloadSummary,
)
from quota.core.errors import NotFound
from quota.core.quantity import format_resources
from quota.core.reasons import WaitReason
from quota.core.timeline import EVICTED, Happening, Preemptor, Row, summarize
from quota.core.workload import Admission, WorkloadState
from quota.ledger.reads import history as history_reads
from quota.ledger.reads import workloads as reads

router = APIRouter(prefix="/api/v1", tags=["workloads"])
AHEAD_SHOWN = 5


@router.get("/workloads", responses=error_responses(403))
def list_workloads(
    ledger: LedgerDep,
    caller: Caller,
    namespace: Annotated[str | None, Query(pattern=NO_NUL)] = None,
    cluster_queue: Annotated[str | None, Query(alias="clusterQueue", pattern=NO_NUL)] = None,
    state: Annotated[WorkloadState | None, Query()] = None,
    reason: Annotated[WaitReason | None, Query(description="primary wait reason")] = None,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> WorkloadPage:
    """Workloads, filtered, one page at a time (in submission order).

    A ``cursor`` of the declared alphabet that is not a ``nextCursor`` this API gave out is
    a 422 naming ``cursor`` (which strings are cursors, JSON Schema cannot say)."""
    namespaces: list[str] | None = None
    if namespace is not None:
        require_namespace(caller, namespace)
        namespaces = [namespace]
    else:
        namespaces = tenancy.namespaces(caller)
    where = reads.WorkloadFilter(
        namespaces=namespaces,
        cluster_queue=cluster_queue,
        state=state,
        reason=str(reason) if reason is not None else None,
    )
    views = reads.list_workload_views(
        ledger.session, where, after_id=decode_cursor(cursor), limit=limit + 1
    )
    more = len(views) > limit
    views = views[:limit]
    return WorkloadPage(
        items=[_summary(v, caller) for v in views],
        next_cursor=encode_cursor(views[-1].id) if more else None,
    )


@router.get(
    "/workloads/{namespace}/{name}",
    response_model=WorkloadDetail,
    responses=error_responses(403, 404),
)
def get_workload(
    namespace: NamespaceName, name: ObjectName, ctx: ContextDep, caller: Caller
) -> Response:
    """One workload: state, admission, why it waits, who is ahead, when it may start."""
    require_namespace(caller, namespace)
    with ctx.session_scope() as session:  # one statement: see quota.ledger_reads
        found = reads.get_workload_detail(session, namespace, name, ahead=AHEAD_SHOWN)
    if found is None:
        raise NotFound(f"Workload {namespace}/{name} not found", field="name")
    view = found.view
    ahead_count = None
    estimate = None
    if (
        view.state is WorkloadState.PENDING
        and view.cluster_queue is not None
        and view.position is not None
    ):
        ahead_count = view.position - 1
        at = estimate_start(
            view.reason_code, ahead_count, found.run_times, datetime.now(UTC), view.cluster_queue
        )
        if at is not None:
            estimate = EstimatedStart(at=at.at, basis=at.basis)
    reasons, hints = tenancy.verdict(caller, view.reasons, view.hints)
    return json_response(
        WorkloadDetail(
            **_summary_fields(view, caller),
            pod_sets=[
                PodSetOut(
                    name=p.name,
                    count=p.count,
                    min_count=p.min_count,
                    requests=format_resources(dict(p.requests)),
                )
                for p in view.pod_sets
            ],
            admission=_admission(view),
            reasons=[Reason.model_validate(dict(r)) for r in reasons],
            hints=hints,
            ahead=[_ahead(a, caller) for a in found.ahead],
            ahead_count=ahead_count,
            estimated_start=estimate,
            evaluated_at=view.evaluated_at,
        )
    )


@router.get("/workloads/{namespace}/{name}/history", responses=error_responses(403, 404))
def get_history(
    namespace: NamespaceName, name: ObjectName, ledger: LedgerDep, caller: Caller
) -> WorkloadHistory:
    """The reason timeline with durations, totals per reason, and the admissions, evictions
    (each naming its preemptor and the preemptor's ClusterQueue) and requeues, in time order."""
    view = _find(ledger, caller, namespace, name)
    now = datetime.now(UTC)
    entries = history_reads.timeline(ledger.session, view.id)
    events = [_event(e, caller) for e in history_reads.events(ledger.session, view.id)]
    story = summarize(entries, [_happening(e) for e in events], now)
    return WorkloadHistory(
        namespace=view.namespace,
        name=view.name,
        state=str(view.state),
        summary=story.summary(),
        waited_seconds=story.waited_seconds,
        totals=[ReasonTotal(code=code, seconds=seconds) for code, seconds in story.totals],
        rows=[_row(r) for r in story.rows],
        timeline=[_timeline(e, caller, now) for e in entries],
        events=events,
        admissions=story.admissions,
        eviction_count=len(story.evictions),
        evictions=[e for e in events if e.type == EVICTED],
    )


def _event(entry: history_reads.EventEntry, caller: Grant | None) -> EventOut:
    details = dict(tenancy.details(caller, entry.details))
    preemptor = entry.details.get("preemptor")
    return EventOut(
        at=entry.at,
        type=entry.type,
        reason=entry.reason,
        details=details,
        preemptor=PreemptorOut(
            workload=tenancy.reference(caller, preemptor),
            cluster_queue=entry.preemptor_cluster_queue,
        )
        if isinstance(preemptor, str) and preemptor
        else None,
    )


def _happening(event: EventOut) -> Happening:
    """An event (already as the caller may see it) for the timeline."""
    p = event.preemptor
    queue = event.details.get("clusterQueue")
    # A preemption's cause; Berth's own deactivation's reason; a pods-ready timeout's wait;
    # an admission check's name.
    found = (event.details.get(k) for k in ("why", "reason", "underlyingCause", "check"))
    cause = next((c for c in found if isinstance(c, str) and c), None)
    until = event.details.get("until") if event.type == "Requeued" else None
    return Happening(
        at=event.at,
        type=event.type,
        reason=event.reason,
        preemptor=None if p is None else Preemptor(p.workload, p.cluster_queue),
        cluster_queue=queue if isinstance(queue, str) else None,
        cause=cause,
        backoff_until=until if isinstance(until, str) else None,
    )


def _row(row: Row) -> HistoryRow:
    text = row.describe()
    if row.stretch is not None:
        s = row.stretch
        return HistoryRow(at=row.at, kind="Waiting", code=s.code, until=s.until,
                          seconds=s.seconds, merged=s.merged, text=text)  # fmt: skip
    assert row.event is not None
    e = row.event
    preemptor = (
        None
        if e.preemptor is None
        else PreemptorOut(workload=e.preemptor.workload, cluster_queue=e.preemptor.cluster_queue)
    )
    return HistoryRow(at=row.at, kind=e.type, code=e.reason, until=None, seconds=None,
                      merged=0, text=text, preemptor=preemptor)  # fmt: skip


def _timeline(
    entry: history_reads.TimelineEntry, caller: Grant | None, now: datetime
) -> TimelineOut:
    shown = tenancy.reason(caller, {"message": entry.message, "details": entry.details})
    return TimelineOut(
        code=entry.code,
        message=shown["message"],
        details=dict(shown["details"]),
        since=entry.since,
        until=entry.until,
        seconds=entry_seconds(entry, now),
    )


def _find(ledger: LedgerDep, caller: Grant | None, namespace: str, name: str) -> reads.WorkloadView:
    require_namespace(caller, namespace)
    view = reads.get_workload_view(ledger.session, namespace, name)
    if view is None:
        raise NotFound(f"Workload {namespace}/{name} not found", field="name")
    return view


def _summary(view: reads.WorkloadView, caller: Grant | None) -> WorkloadSummary:
    return WorkloadSummary(**_summary_fields(view, caller))


def _summary_fields(view: reads.WorkloadView, caller: Grant | None) -> dict[str, Any]:
    primary = tenancy.reason(caller, view.reasons[0]) if view.reasons else None
    return dict(
        namespace=view.namespace,
        name=view.name,
        kind=view.kind,
        queue_name=view.queue_name,
        cluster_queue=view.cluster_queue,
        priority=view.priority,
        priority_class_name=view.priority_class,
        state=str(view.state),
        active=view.active,
        created_at=view.created_at,
        admitted_at=view.admitted_at,
        finished_at=view.finished_at,
        eviction_count=view.eviction_count,
        requests=format_resources(view.requests()),
        reason=view.reason_code,
        message=str(primary.get("message", "")) if primary is not None else None,
        position=view.position,
        flavors=sorted({f for a in admission.pod_sets for f in a.flavors.values()})
        if (admission := view.admission) is not None else [],
        nodes=_nodes(view.admission),
    )


def _nodes(admission: Admission | None) -> dict[str, int]:
    pods: dict[str, int] = {}
    for placement in (admission.placement or ()) if admission is not None else ():
        for node, n in placement.nodes.items():
            pods[node] = pods.get(node, 0) + n
    return dict(sorted(pods.items()))


def _admission(view: reads.WorkloadView) -> AdmissionOut | None:
    if view.admission is None:
        return None
    return AdmissionOut(
        cluster_queue=view.admission.cluster_queue,
        pod_set_assignments=[
            PodSetAdmissionOut(
                name=a.name,
                count=a.count,
                flavors=dict(a.flavors),
                usage=format_resources(dict(a.usage)),
            )
            for a in view.admission.pod_sets
        ],
    )


def _ahead(entry: reads.AheadEntry, caller: Grant | None) -> AheadOut:
    # A tenant sees that work is ahead of it, and how big, but not other tenants' names.
    visible = tenancy.may_see(caller, entry.namespace)
    return AheadOut(
        namespace=entry.namespace if visible else tenancy.HIDDEN,
        name=entry.name if visible else tenancy.HIDDEN,
        priority=entry.priority,
        position=entry.position,
        requests=format_resources(dict(entry.requests)),
        reason=entry.reason_code,
    )
