"""Read-side queries on workloads for the REST API: one workload with its verdict, the
workloads ahead of it, observed run times, filtered pages (read-only, caller's session).

A pending workload has no ``cluster_queue`` of its own yet: its queue is the one its
LocalQueue points to, so every query here resolves it through ``local_queues``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from statistics import median
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.workload import HOLDS_QUOTA_SQL, Admission, PodSet, WorkloadState
from quota.ledger import codec
from quota.ledger.errors import translated

_PENDING = str(WorkloadState.PENDING)

# The columns every workload read returns, with the effective ClusterQueue as ``queue``.
_COLUMNS = """
    w.id, w.namespace, w.name, w.kind, w.queue_name, w.priority, w.priority_class,
    w.pod_sets, w.state, w.active, w.admission, w.created_at, w.admitted_at, w.finished_at,
    w.eviction_count, w.reason_code, w.reasons, w.hints, w.queue_position, w.evaluated_at,
    COALESCE(w.cluster_queue, lq.cluster_queue) AS queue
"""
_FROM = """
    FROM workloads AS w
    LEFT JOIN local_queues AS lq ON lq.namespace = w.namespace AND lq.name = w.queue_name
"""
# The row a name means now: the unfinished one, else the most recently added.
_CURRENT = (
    "SELECT id FROM workloads WHERE namespace = :namespace AND name = :name "
    "ORDER BY state = 'Finished', id DESC LIMIT 1"
)


def pending_head(queue: str, below: str, *, more: str = "", local_queues: str = "") -> str:
    """The head of ClusterQueue ``queue``'s pending order, positions below ``below``: at most
    ``:limit`` rows. One index range per LocalQueue of the ClusterQueue, merged: a join over
    the ClusterQueue as a whole could not use the per-LocalQueue position index. ``more``:
    further ``w.`` columns; ``local_queues``: a condition on ``lq`` keeping only some."""
    columns = "w.namespace, w.name, w.priority, w.queue_position, w.pod_sets, w.reason_code"
    columns += f", {more}" if more else ""
    return f"""
        SELECT h.*
        FROM local_queues AS lq
        CROSS JOIN LATERAL (
            SELECT {columns}
            FROM workloads AS w
            WHERE w.state = 'Pending' AND w.namespace = lq.namespace
              AND w.queue_name = lq.name AND w.queue_position IS NOT NULL
              AND w.queue_position < {below}
            ORDER BY w.queue_position
            LIMIT :limit
        ) AS h
        WHERE lq.cluster_queue = {queue}{f" AND ({local_queues})" if local_queues else ""}
        ORDER BY h.queue_position, h.namespace, h.name
        LIMIT :limit
    """


def _durations(queue: str) -> str:
    """Run times, in seconds, of ClusterQueue ``queue``'s ``:sample`` most recently finished
    admitted workloads."""
    return f"""
        SELECT EXTRACT(EPOCH FROM (f.finished_at - f.admitted_at)) FROM workloads AS f
        WHERE f.state = 'Finished' AND f.cluster_queue = {queue}
          AND f.admitted_at IS NOT NULL AND f.finished_at >= f.admitted_at
        ORDER BY f.finished_at DESC LIMIT :sample
    """


def _running(queue: str) -> str:
    """How many workloads hold quota in ClusterQueue ``queue`` now."""
    return (
        "SELECT count(*) FROM workloads AS r "
        f"WHERE r.state = ANY(CAST(:holding AS text[])) AND r.cluster_queue = {queue}"
    )


@dataclass(frozen=True, slots=True)
class WorkloadView:
    """A workload row as the read API shows it, with the engine's latest verdict."""

    id: int
    namespace: str
    name: str
    kind: str
    queue_name: str
    cluster_queue: str | None  # admitted-to, else the LocalQueue's ClusterQueue
    priority: int
    priority_class: str | None
    state: WorkloadState
    active: bool
    pod_sets: tuple[PodSet, ...]
    admission: Admission | None
    created_at: datetime
    admitted_at: datetime | None
    finished_at: datetime | None
    eviction_count: int
    reason_code: str | None
    reasons: tuple[Mapping[str, Any], ...]
    hints: tuple[str, ...]
    position: int | None
    evaluated_at: datetime | None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def requests(self) -> dict[str, int]:
        """Total requests of all pods, resource → milli-units."""
        return total_requests(self.pod_sets)


@dataclass(frozen=True, slots=True)
class AheadEntry:
    namespace: str
    name: str
    priority: int
    position: int
    requests: Mapping[str, int]  # resource → milli-units, all pods
    reason_code: str | None


@dataclass(frozen=True, slots=True)
class RunTimes:
    """What the ClusterQueue's history says about how long its workloads run."""

    sample: int  # finished workloads looked at
    median_seconds: float
    running: int  # holding quota now


@dataclass(frozen=True, slots=True)
class WorkloadDetailView:
    """A workload with what its detail page adds: the head of its queue, the run history."""

    view: WorkloadView
    ahead: tuple[AheadEntry, ...]  # empty unless pending in a ClusterQueue
    run_times: RunTimes | None  # None unless pending with a position, or with no history


@dataclass(frozen=True, slots=True)
class WorkloadFilter:
    namespaces: Sequence[str] | None = None  # None: every namespace
    cluster_queue: str | None = None
    state: WorkloadState | None = None
    reason: str | None = None


def total_requests(pod_sets: Sequence[PodSet]) -> dict[str, int]:
    """Requests of every pod of every pod set, summed per resource."""
    out: dict[str, int] = {}
    for pod_set in pod_sets:
        for resource, amount in pod_set.total().items():
            out[resource] = out.get(resource, 0) + amount
    return out


@translated
def get_workload_view(session: Session, namespace: str, name: str) -> WorkloadView | None:
    """The workload a name means now (unfinished, else the latest finished), or ``None``."""
    row = (
        session.execute(
            text(f"SELECT {_COLUMNS} {_FROM} WHERE w.id = ({_CURRENT})"),
            {"namespace": namespace, "name": name},
        )
        .mappings()
        .one_or_none()
    )
    return None if row is None else _view(row)


# One statement for the whole detail page (one round trip, one snapshot). The queue's head
# and run history are subqueries under CASE, so they only run for a pending workload; each
# is the SQL the stand-alone queries below run (``_head``, ``_durations``, ``_running``).
_DETAIL = text(
    f"""
    WITH v AS (SELECT {_COLUMNS} {_FROM} WHERE w.id = ({_CURRENT}))
    SELECT v.*,
        CASE WHEN v.state = 'Pending' AND v.queue IS NOT NULL THEN (
            SELECT json_agg(row_to_json(h) ORDER BY h.queue_position, h.namespace, h.name)
            FROM ({pending_head("v.queue", "COALESCE(v.queue_position, 2147483647)")}) AS h
        ) END AS ahead,
        CASE WHEN v.state = 'Pending' AND v.queue IS NOT NULL
                  AND v.queue_position IS NOT NULL THEN ARRAY({_durations("v.queue")})
        END AS durations,
        CASE WHEN v.state = 'Pending' AND v.queue IS NOT NULL
                  AND v.queue_position IS NOT NULL THEN ({_running("v.queue")})
        END AS running
    FROM v
    """
)


@translated
def get_workload_detail(
    session: Session, namespace: str, name: str, *, ahead: int = 5, sample: int = 100
) -> WorkloadDetailView | None:
    """What ``get_workload_view``, ``workloads_ahead`` (before its position, at most
    ``ahead``) and ``run_times`` say of one workload, read in one statement."""
    row = (
        session.execute(
            _DETAIL,
            {
                "namespace": namespace,
                "name": name,
                "limit": ahead,
                "sample": sample,
                "holding": list(HOLDS_QUOTA_SQL),
            },
        )
        .mappings()
        .one_or_none()
    )
    if row is None:
        return None
    entries = tuple(_ahead(a) for a in row["ahead"] or ())
    history = _run_times(row["durations"] or (), row["running"])
    return WorkloadDetailView(_view(row), entries, history)


@translated
def workloads_ahead(
    session: Session, cluster_queue: str, before: int | None, limit: int = 5
) -> list[AheadEntry]:
    """The head of the ClusterQueue's pending order (positions below ``before`` only, when
    given): at most ``limit`` entries, nearest the head first."""
    rows = session.execute(
        text(pending_head(":cq", "COALESCE(CAST(:before AS int), 2147483647)")),
        {"cq": cluster_queue, "before": before, "limit": limit},
    ).mappings()
    return [_ahead(r) for r in rows]


@translated
def run_times(session: Session, cluster_queue: str, sample: int = 100) -> RunTimes | None:
    """Run times of the ClusterQueue's most recently finished admitted workloads; ``None``
    when none has finished there yet."""
    params = {"cq": cluster_queue, "sample": sample, "holding": list(HOLDS_QUOTA_SQL)}
    durations = session.execute(text(_durations(":cq")), params).scalars().all()
    if not durations:
        return None
    return _run_times(durations, session.execute(text(_running(":cq")), params).scalar_one())


def _ahead(row: Mapping[Any, Any]) -> AheadEntry:
    return AheadEntry(
        namespace=row["namespace"],
        name=row["name"],
        priority=row["priority"],
        position=row["queue_position"],
        requests=total_requests([codec.from_pod_set(p) for p in row["pod_sets"]]),
        reason_code=row["reason_code"],
    )


def _run_times(durations: Iterable[Any], running: Any) -> RunTimes | None:
    seconds = [float(d) for d in durations]
    if not seconds:
        return None
    return RunTimes(sample=len(seconds), median_seconds=median(seconds), running=int(running))


@translated
def list_workload_views(
    session: Session, where: WorkloadFilter, *, after_id: int | None, limit: int
) -> list[WorkloadView]:
    """One page of workloads matching ``where``, in id order after ``after_id``."""
    clauses = ["(CAST(:after AS bigint) IS NULL OR w.id > :after)"]
    params: dict[str, Any] = {"after": after_id, "limit": limit}
    if where.namespaces is not None:
        clauses.append("w.namespace = ANY(CAST(:namespaces AS text[]))")
        params["namespaces"] = list(where.namespaces)
    if where.cluster_queue is not None:
        clauses.append("COALESCE(w.cluster_queue, lq.cluster_queue) = :cq")
        params["cq"] = where.cluster_queue
    if where.state is not None:
        clauses.append("w.state = :state")
        params["state"] = str(where.state)
    if where.reason is not None:
        clauses.append("w.reason_code = :reason")
        params["reason"] = where.reason
    rows = session.execute(
        text(f"SELECT {_COLUMNS} {_FROM} WHERE {' AND '.join(clauses)} ORDER BY w.id LIMIT :limit"),
        params,
    ).mappings()
    return [_view(r) for r in rows]


def _view(row: Mapping[Any, Any]) -> WorkloadView:
    return WorkloadView(
        id=row["id"],
        namespace=row["namespace"],
        name=row["name"],
        kind=row["kind"],
        queue_name=row["queue_name"],
        cluster_queue=row["queue"],
        priority=row["priority"],
        priority_class=row["priority_class"],
        state=WorkloadState(row["state"]),
        active=row["active"],
        pod_sets=tuple(codec.from_pod_set(p) for p in row["pod_sets"]),
        admission=codec.from_admission(row["admission"]),
        created_at=row["created_at"],
        admitted_at=row["admitted_at"],
        finished_at=row["finished_at"],
        eviction_count=row["eviction_count"],
        reason_code=row["reason_code"],
        reasons=tuple(row["reasons"] or ()),
        hints=tuple(str(h) for h in row["hints"] or ()),
        position=row["queue_position"],
        evaluated_at=row["evaluated_at"],
    )
