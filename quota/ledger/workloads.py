"""Workload rows: value ↔ row mapping, the current row of a name, conditional changes, and
new pending rows in bulk (``add_pending``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, RowMapping, Select, and_, case, func, select, text, tuple_
from sqlalchemy.orm import Session

from quota.core.cycle_writes import Verdict
from quota.core.errors import Conflict, InvalidInput, Problem
from quota.core.pods_ready import Readiness, RequeuingTimestamp, queued_by_eviction
from quota.core.workload import Admission, PodSet, Workload, WorkloadState
from quota.ledger import codec
from quota.ledger.audit import AuditEntry, write_audit
from quota.ledger.bulk import dump_json
from quota.ledger.decisions import WORKLOAD_KIND, add_timeline
from quota.ledger.errors import translated
from quota.ledger.objects import table_of
from quota.ledger.schema import WorkloadRow

WORKLOADS = table_of(WorkloadRow)


def pending_order_by(timestamp: RequeuingTimestamp) -> tuple[ColumnElement[Any], ...]:
    """``ORDER BY`` for ``quota.core.workload.pending_order``, tie-breaks included: priority
    descending, queue time (``queue_time``: the last eviction for a reason
    ``queued_by_eviction(timestamp)`` names, kept until admitted again, else creation), then
    the key ``namespace || '/' || name`` in collation "C" (by code point, as Python compares
    strings: the database's own collation may ignore punctuation, and ``(namespace, name)``
    or the row id would break ties differently)."""
    w = WORKLOADS.c
    requeued = and_(w.evicted_at.is_not(None),
                    w.eviction_reason.in_(sorted(queued_by_eviction(timestamp))))
    key = (w.namespace + "/" + w.name).collate("C")
    return (w.priority.desc(), case((requeued, w.evicted_at), else_=w.created_at), key)


def _aware(value: datetime | None, field: str) -> datetime | None:
    # A naive time would be read back shifted by the session's time zone: refuse it here.
    if value is not None and value.tzinfo is None:
        raise InvalidInput([Problem("time must carry a time zone", field=field)])
    return value


def workload_row(workload: Workload) -> dict[str, Any]:
    """The stored columns of a new workload (ledger-managed ones left to their defaults)."""
    admission = workload.admission
    return {
        "namespace": workload.namespace,
        "name": workload.name,
        "kind": workload.kind,
        "queue_name": workload.queue_name,
        "cluster_queue": admission.cluster_queue if admission else None,
        "priority": workload.priority,
        "priority_class": workload.priority_class,
        "pod_sets": [codec.pod_set_json(p) for p in workload.pod_sets],
        "state": str(workload.state),
        "active": workload.active,
        "admission": codec.admission_json(admission),
        "created_at": _aware(workload.created_at, "created_at"),
        "admitted_at": _aware(workload.admitted_at, "admitted_at"),
        "eviction_count": workload.eviction_count,
        "labels": dict(workload.labels),
        "annotations": dict(workload.annotations),
    }


def from_workload_row(row: Mapping[Any, Any]) -> Workload:
    return Workload(
        namespace=row["namespace"],
        name=row["name"],
        queue_name=row["queue_name"],
        pod_sets=tuple(codec.from_pod_set(p) for p in row["pod_sets"]),
        created_at=row["created_at"],
        priority=row["priority"],
        priority_class=row["priority_class"],
        state=WorkloadState(row["state"]),
        active=row["active"],
        admission=codec.from_admission(row["admission"]),
        admitted_at=row["admitted_at"],
        eviction_count=row["eviction_count"],
        evicted_at=row.get("evicted_at"),
        eviction_reason=row.get("eviction_reason"),
        readiness=Readiness(row.get("readiness") or Readiness.WAIT_FOR_START),
        readiness_since=row.get("readiness_since"),
        requeue_count=row.get("requeue_count") or 0,
        requeue_at=row.get("requeue_at"),
        deactivation=row.get("deactivation"),
        checks=codec.from_check_statuses(row.get("admission_checks")),
        labels=dict(row["labels"]),
        annotations=dict(row["annotations"]),
        kind=row["kind"],
    )


@translated
def add_pending(
    session: Session,
    entries: Sequence[tuple[Workload, Verdict, Mapping[str, Any]]],
    *,
    actor: str,
) -> list[int]:
    """Record new pending workloads, each with its first verdict and timeline row (primary
    {code, message, details}) as of its ``created_at``, in a few statements however many;
    their ids. ``Conflict`` (nothing written) if an unfinished workload has one's name."""
    if not entries:
        return []
    _refuse_taken(session, [w for w, _, _ in entries])
    rows = [workload_row(w) for w, _, _ in entries]
    values = [
        {**row, "reason_code": verdict.code, "reasons": list(verdict.reasons),
         "hints": list(verdict.hints), "queue_position": verdict.position,
         "evaluated_at": workload.created_at}
        for row, (workload, verdict, _) in zip(rows, entries, strict=True)
    ]  # fmt: skip
    # One JSON document (a C-speed dumps) instead of a bound parameter per column and row.
    inserted = session.execute(
        text(
            f"INSERT INTO workloads ({_PENDING_COLUMNS}) SELECT {_PENDING_COLUMNS} "
            f"FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS v({_PENDING_TYPES}) "
            "RETURNING id, namespace, name"
        ),
        {"rows": dump_json(values)},
    ).all()
    ids_of = {(namespace, name): i for i, namespace, name in inserted}
    ids = [ids_of[(w.namespace, w.name)] for w, _, _ in entries]
    write_audit(
        session,
        actor,
        [AuditEntry("create", WORKLOAD_KIND, w.namespace, w.name, None, audit_json(row, 1))
         for (w, _, _), row in zip(entries, rows, strict=True)],
    )  # fmt: skip
    add_timeline(
        session, [(i, p, w.created_at) for i, (w, _, p) in zip(ids, entries, strict=True)]
    )
    return ids


_PENDING_FIELDS = (
    ("namespace", "text"), ("name", "text"), ("kind", "text"), ("queue_name", "text"),
    ("cluster_queue", "text"), ("priority", "int"), ("priority_class", "text"),
    ("pod_sets", "jsonb"), ("state", "text"), ("active", "bool"), ("admission", "jsonb"),
    ("created_at", "timestamptz"), ("admitted_at", "timestamptz"), ("eviction_count", "int"),
    ("labels", "jsonb"), ("annotations", "jsonb"), ("reason_code", "text"),
    ("reasons", "jsonb"), ("hints", "jsonb"), ("queue_position", "int"),
    ("evaluated_at", "timestamptz"),
)  # fmt: skip
_PENDING_COLUMNS = ", ".join(name for name, _ in _PENDING_FIELDS)
_PENDING_TYPES = ", ".join(f"{name} {kind}" for name, kind in _PENDING_FIELDS)


def _refuse_taken(session: Session, workloads: Sequence[Workload]) -> None:
    seen: set[tuple[str, str]] = set()
    for workload in workloads:
        name = (workload.namespace, workload.name)
        if name in seen:
            raise Conflict(f"Workload {workload.key} is submitted twice in one batch",
                           field="metadata.name")
        seen.add(name)
    taken = session.execute(
        select(WORKLOADS.c.namespace, WORKLOADS.c.name, WORKLOADS.c.state)
        .where(WORKLOADS.c.state != str(WorkloadState.FINISHED))
        .where(tuple_(WORKLOADS.c.namespace, WORKLOADS.c.name).in_(sorted(seen)))
        .order_by(WORKLOADS.c.namespace, WORKLOADS.c.name)
        .limit(1)
    ).first()
    if taken is not None:
        raise Conflict(
            f"Workload {taken.namespace}/{taken.name} already exists and is {taken.state}; "
            "finish it before submitting another with that name",
            field="metadata.name",
        )


def audit_json(row: Mapping[str, Any], version: int) -> dict[str, Any]:
    """A workload row as the audit log records it (times as ISO strings)."""
    return {
        key: value.isoformat() if isinstance(value, datetime) else value
        for key, value in {**row, "version": version}.items()
    }


def current_id(namespace: str, name: str) -> Select[tuple[int]]:
    """The row a name means now: the unfinished one, else the most recently added."""
    finished = WORKLOADS.c.state == str(WorkloadState.FINISHED)
    return (
        select(WORKLOADS.c.id)
        .where(WORKLOADS.c.namespace == namespace, WORKLOADS.c.name == name)
        .order_by(finished.asc(), WORKLOADS.c.id.desc())
        .limit(1)
    )


def lock_current_row(session: Session, namespace: str, name: str) -> RowMapping | None:
    """The row a name means now (``current_id``), locked for update; None without one."""
    return (
        session.execute(
            select(WORKLOADS)
            .where(WORKLOADS.c.id == current_id(namespace, name).scalar_subquery())
            .with_for_update()
        )
        .mappings()
        .one_or_none()
    )


def _state(value: object) -> str:
    return str(WorkloadState(str(value)))


def _pod_sets(value: object) -> list[Any]:
    if not isinstance(value, tuple | list) or not all(isinstance(p, PodSet) for p in value):
        raise TypeError("pod_sets must be a sequence of PodSet")
    return [codec.pod_set_json(p) for p in value]


def _admission(value: object) -> dict[str, Any] | None:
    if value is not None and not isinstance(value, Admission):
        raise TypeError("admission must be an Admission or None")
    return codec.admission_json(value)


def _time(field: str) -> Any:
    def convert(value: object) -> datetime | None:
        if value is not None and not isinstance(value, datetime):
            raise TypeError(f"{field} must be a datetime or None")
        return _aware(value, field)

    return convert


def _plain(value: object) -> object:
    return value


def _mapping(value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TypeError("labels and annotations must be mappings")
    return dict(value)


# What ``set_workload_state`` may change, and how each value is stored.
_CHANGES: dict[str, Any] = {
    "state": _state,
    "active": _plain,
    "admission": _admission,
    "admitted_at": _time("admitted_at"),
    "finished_at": _time("finished_at"),
    "eviction_count": _plain,
    "priority": _plain,
    "priority_class": _plain,
    "queue_name": _plain,
    "cluster_queue": _plain,
    "pod_sets": _pod_sets,
    "labels": _mapping,
    "annotations": _mapping,
}


def change_values(changes: Mapping[str, object]) -> dict[str, Any]:
    """Column values for a conditional update; the version bump is added here too."""
    unknown = sorted(set(changes) - set(_CHANGES))
    if unknown:
        raise TypeError(f"set_workload_state cannot change {', '.join(unknown)}")
    values: dict[str, Any | ColumnElement[Any]] = {
        key: _CHANGES[key](value) for key, value in changes.items()
    }
    # The cluster queue is the admission's; clearing the admission (requeue) clears it too.
    if "admission" in changes and "cluster_queue" not in changes:
        admission = changes["admission"]
        values["cluster_queue"] = (
            admission.cluster_queue if isinstance(admission, Admission) else None
        )
    if values.get("state") == WorkloadState.FINISHED and "finished_at" not in changes:
        values["finished_at"] = func.now()
    values["version"] = WORKLOADS.c.version + 1
    values["updated_at"] = func.now()
    return values
