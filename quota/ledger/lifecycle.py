"""Workload lifecycle writes outside the loop: first verdict at submit, finish, repairs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.cycle_writes import Event, Verdict
from quota.core.metering import IntervalEnd
from quota.core.workload import HOLDS_QUOTA_SQL, Workload, WorkloadState
from quota.ledger.audit import AuditEntry, write_audit
from quota.ledger.bulk import dump_json
from quota.ledger.decisions import (
    WORKLOAD_KIND,
    add_events,
    close_reasons,
    close_usage,
    open_reasons,
)
from quota.ledger.errors import translated
from quota.ledger.workloads import from_workload_row, lock_current_row


@translated
def set_first_verdict(
    session: Session, workload_id: int, verdict: Verdict, primary: Mapping[str, Any], now: datetime
) -> None:
    """A new workload's verdict before the loop sees it, and its first timeline row."""
    session.execute(
        text(
            "UPDATE workloads SET reason_code = :code, reasons = CAST(:reasons AS jsonb), "
            "hints = CAST(:hints AS jsonb), queue_position = :position, evaluated_at = :now "
            "WHERE id = :id"
        ),
        {
            "id": workload_id,
            "code": verdict.code,
            "reasons": dump_json(list(verdict.reasons)),
            "hints": dump_json(list(verdict.hints)),
            "position": verdict.position,
            "now": now,
        },
    )
    open_reasons(session, [(workload_id, primary)], now)


@translated
def finish(
    session: Session,
    namespace: str,
    name: str,
    *,
    now: datetime,
    actor: str,
    end: IntervalEnd = IntervalEnd.FINISHED,
) -> Workload | None:
    """Mark the workload a name means finished: quota released (usage closed as ``end``:
    Finished, Failed or Deleted), timeline closed, event and audit written. ``None`` when
    there is none; a finished one is returned unchanged."""
    row = lock_current_row(session, namespace, name)
    if row is None:
        return None
    if row["state"] == str(WorkloadState.FINISHED):
        return from_workload_row(row)
    finish_locked(session, [row], now=now, actor=actor, end=end)
    return replace(from_workload_row(row), state=WorkloadState.FINISHED)


def finish_locked(
    session: Session,
    rows: Sequence[Mapping[Any, Any]],
    *,
    now: datetime,
    actor: str,
    end: IntervalEnd = IntervalEnd.FINISHED,
) -> None:
    """``finish`` for unfinished rows the caller has locked ({id, namespace, name, state,
    version}), a few statements however many."""
    if not rows:
        return
    ids = [row["id"] for row in rows]
    session.execute(
        text(
            "UPDATE workloads SET state = :state, finished_at = :now, reason_code = NULL, "
            "reasons = '[]'::jsonb, hints = '[]'::jsonb, queue_position = NULL, "
            "version = version + 1, updated_at = now() WHERE id = ANY(CAST(:ids AS bigint[]))"
        ),
        {"state": str(WorkloadState.FINISHED), "now": now, "ids": ids},
    )
    close_usage(session, ids, now, str(end))
    close_reasons(session, ids, now)
    reason = None if end is IntervalEnd.FINISHED else str(end)
    add_events(
        session, [(row["id"], Event("Finished", reason, {"from": row["state"]})) for row in rows],
        now,
    )
    finished = str(WorkloadState.FINISHED)
    write_audit(
        session,
        actor,
        [
            AuditEntry(
                "update",
                WORKLOAD_KIND,
                row["namespace"],
                row["name"],
                {"state": row["state"], "version": row["version"]},
                {"state": finished, "version": row["version"] + 1},
            )
            for row in rows
        ],
    )


@translated
def close_stray_usage(session: Session, now: datetime) -> int:
    """Close usage intervals of workloads that hold no quota any more; how many."""
    result = session.execute(
        text(
            "UPDATE usage_intervals AS u SET ended_at = :now, end_reason = :end "
            "FROM workloads AS w "
            "WHERE u.workload_id = w.id AND u.ended_at IS NULL "
            "AND w.state <> ALL(CAST(:holding AS text[]))"
        ),
        {"now": now, "holding": list(HOLDS_QUOTA_SQL), "end": str(IntervalEnd.RECLAIMED)},
    )
    return int(getattr(result, "rowcount", 0) or 0)


@translated
def holders_without_usage(session: Session) -> list[str]:
    """Keys of workloads holding quota with no open usage interval (should be none)."""
    rows = session.execute(
        text(
            "SELECT w.namespace || '/' || w.name FROM workloads AS w "
            "WHERE w.state = ANY(CAST(:holding AS text[])) AND NOT EXISTS ("
            "SELECT 1 FROM usage_intervals AS u WHERE u.workload_id = w.id AND u.ended_at IS NULL"
            ") ORDER BY 1"
        ),
        {"holding": list(HOLDS_QUOTA_SQL)},
    )
    return [row[0] for row in rows]


@translated
def holders_in_missing_queues(session: Session) -> list[str]:
    """Keys of workloads holding quota in a ClusterQueue that no longer exists."""
    rows = session.execute(
        text(
            "SELECT w.namespace || '/' || w.name || ' in ' || w.cluster_queue "
            "FROM workloads AS w WHERE w.state = ANY(CAST(:holding AS text[])) "
            "AND NOT EXISTS (SELECT 1 FROM cluster_queues AS q WHERE q.name = w.cluster_queue) "
            "ORDER BY 1"
        ),
        {"holding": list(HOLDS_QUOTA_SQL)},
    )
    return [row[0] for row in rows]
