"""One admission cycle's writes, batched: a handful of statements however many decisions.

Every workload row is changed only at the version the loop read (``WHERE version = v``);
the ids that did not match come back as stale. Rows travel as one JSON array per statement
(``jsonb_to_recordset``): a cycle of thousands of decisions costs a few round trips, and
one C-speed ``json.dumps`` instead of escaping every array element in Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.cycle_writes import Event, ReasonChange, Transition
from quota.core.metering import EVICTIONS
from quota.ledger import codec
from quota.ledger.audit import AuditEntry, write_audit
from quota.ledger.bulk import copy_rows, dump_json
from quota.ledger.errors import translated

WORKLOAD_KIND = "Workload"


@translated
def write_transitions(
    session: Session, transitions: Sequence[Transition], *, now: datetime, actor: str
) -> tuple[int, ...]:
    """Apply state changes; the ids found stale (then nothing else was written for them,
    and the caller should roll back: the cycle's other decisions counted on them)."""
    if not transitions:
        return ()
    admissions = [codec.admission_json(t.admission) for t in transitions]
    changed = session.execute(
        text(
            """
            UPDATE workloads AS w SET
                state = v.state,
                admission = v.admission,
                cluster_queue = v.cluster_queue,
                admitted_at = CASE WHEN v.admits THEN :now
                                   WHEN v.admission IS NULL THEN NULL
                                   ELSE w.admitted_at END,
                eviction_count = w.eviction_count + CASE WHEN v.evicts THEN 1 ELSE 0 END,
                evicted_at = CASE WHEN v.evicts THEN :now
                                  WHEN v.admits THEN NULL ELSE w.evicted_at END,
                eviction_reason = CASE WHEN v.evicts THEN v.end_reason
                                       WHEN v.admits THEN NULL ELSE w.eviction_reason END,
                readiness = CASE WHEN v.admits THEN 'WaitForStart' ELSE w.readiness END,
                readiness_since = CASE WHEN v.admits THEN :now ELSE w.readiness_since END,
                requeue_count = COALESCE(v.requeue_count, w.requeue_count),
                requeue_at = CASE WHEN v.requeue_count IS NULL THEN w.requeue_at
                                  ELSE v.requeue_at END,
                active = w.active AND v.deactivation IS NULL,
                deactivation = COALESCE(v.deactivation, w.deactivation),
                admission_checks = v.checks,
                reason_code = NULL, reasons = '[]'::jsonb, hints = '[]'::jsonb,
                queue_position = NULL, evaluated_at = :now,
                version = w.version + 1, updated_at = now()
            FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS v(
                id bigint, version int, state text, admission jsonb, cluster_queue text,
                admits bool, evicts bool, end_reason text, requeue_count int,
                requeue_at timestamptz, deactivation text, checks jsonb)
            WHERE w.id = v.id AND w.version = v.version
            RETURNING w.id
            """
        ),
        {
            "now": now,
            "rows": dump_json(
                [
                    {
                        "id": t.id,
                        "version": t.version,
                        "state": str(t.state),
                        "admission": a,
                        "cluster_queue": t.admission.cluster_queue if t.admission else None,
                        "admits": t.admits,
                        "evicts": t.evicts,
                        "end_reason": t.end_reason,
                        "requeue_count": t.requeue[0] if t.requeue else None,
                        "requeue_at": t.requeue[1].isoformat() if t.requeue and t.requeue[1]
                        else None,
                        "deactivation": t.deactivation,
                        "checks": codec.check_statuses_json(t.checks),
                    }
                    for t, a in zip(transitions, admissions, strict=True)
                ]
            ),
        },
    )
    done = {row[0] for row in changed}
    stale = tuple(t.id for t in transitions if t.id not in done)
    if stale:
        return stale
    ids = [t.id for t in transitions]
    close_reasons(session, ids, now)
    end_usage(session, [(t.id, t.end_reason, t.lost_from, t.node_fault)
                        for t in transitions if t.releases], now)  # fmt: skip
    _open_usage(session, [t for t in transitions if t.admits], now)
    add_events(session, [(t.id, e) for t in transitions for e in t.events], now)
    _audit(session, transitions, admissions, actor)
    return ()


@translated
def write_reasons(
    session: Session, changes: Sequence[ReasonChange], *, now: datetime
) -> tuple[int, ...]:
    """Store new verdicts and timeline rows; the ids found stale (skipped, not fatal)."""
    if not changes:
        return ()
    changed = session.execute(
        text(
            """
            UPDATE workloads AS w SET
                reason_code = v.code, reasons = v.reasons, hints = v.hints,
                queue_position = v.position, evaluated_at = :now,
                version = w.version + 1, updated_at = now()
            FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS v(
                id bigint, version int, code text, reasons jsonb, hints jsonb, position int)
            WHERE w.id = v.id AND w.version = v.version
            RETURNING w.id
            """
        ),
        {
            "now": now,
            "rows": dump_json(
                [
                    {
                        "id": c.id,
                        "version": c.version,
                        "code": c.verdict.code,
                        "reasons": list(c.verdict.reasons),
                        "hints": list(c.verdict.hints),
                        "position": c.verdict.position,
                    }
                    for c in changes
                ]
            ),
        },
    )
    done = {row[0] for row in changed}
    opened = [c for c in changes if c.primary is not None and c.id in done]
    if opened:
        close_reasons(session, [c.id for c in opened], now)
        open_reasons(session, [(c.id, c.primary or {}) for c in opened], now)
    return tuple(c.id for c in changes if c.id not in done)


def close_reasons(session: Session, ids: Sequence[int], now: datetime) -> None:
    """End the open timeline row of each workload in ``ids``."""
    if ids:
        session.execute(
            text(
                "UPDATE wait_reasons SET until = :now "
                "WHERE workload_id = ANY(CAST(:ids AS bigint[])) AND until IS NULL"
            ),
            {"ids": list(ids), "now": now},
        )


def open_reasons(
    session: Session, rows: Sequence[tuple[int, Mapping[str, Any]]], now: datetime
) -> None:
    """Open a timeline row per (workload id, {code, message, details})."""
    if not rows:
        return
    session.execute(
        text(
            """
            INSERT INTO wait_reasons (workload_id, code, message, details, since)
            SELECT v.id, v.code, v.message, v.details, :now
            FROM jsonb_to_recordset(CAST(:rows AS jsonb))
                 AS v(id bigint, code text, message text, details jsonb)
            """
        ),
        {
            "now": now,
            "rows": dump_json(
                [
                    {
                        "id": i,
                        "code": str(r["code"]),
                        "message": str(r.get("message", "")),
                        "details": r.get("details") or {},
                    }
                    for i, r in rows
                ]
            ),
        },
    )


def close_usage(
    session: Session, ids: Sequence[int], now: datetime, end: str | None = None
) -> None:
    """End every open usage interval of the workloads ``ids``, saying why (an IntervalEnd)."""
    if ids:
        session.execute(
            text(
                "UPDATE usage_intervals SET ended_at = :now, end_reason = :end "
                "WHERE workload_id = ANY(CAST(:ids AS bigint[])) AND ended_at IS NULL"
            ),
            {"ids": list(ids), "now": now, "end": end},
        )


def end_usage(
    session: Session, ends: Sequence[tuple[int, str | None, datetime | None, bool]],
    now: datetime,
) -> None:
    """End the open usage of each (workload id, why, last checkpoint, node fault). An
    eviction loses the work since the later of the interval's start and the checkpoint:
    ``lost_from``; a node fault's loss is not the tenant's (``node_fault``)."""
    if not ends:
        return
    session.execute(
        text(
            """
            UPDATE usage_intervals AS u SET ended_at = :now, end_reason = v.reason,
                node_fault = v.fault,
                lost_from = CASE WHEN v.reason = ANY(CAST(:evictions AS text[]))
                                 THEN LEAST(GREATEST(u.started_at,
                                                     COALESCE(v.saved, u.started_at)), :now)
                            END
            FROM jsonb_to_recordset(CAST(:rows AS jsonb))
                 AS v(id bigint, reason text, saved timestamptz, fault bool)
            WHERE u.workload_id = v.id AND u.ended_at IS NULL
            """
        ),
        {
            "now": now,
            "evictions": sorted(EVICTIONS),
            "rows": dump_json([{"id": i, "reason": r, "saved": s, "fault": f}
                               for i, r, s, f in ends]),
        },
    )


def _open_usage(session: Session, admitted: Sequence[Transition], now: datetime) -> None:
    rows = [
        (t.id, t.admission.cluster_queue, flavor, resource, amount, now)
        for t in admitted
        if t.admission is not None
        for (flavor, resource), amount in sorted(t.admission.usage().items())
    ]
    if rows:
        copy_rows(
            session,
            "COPY usage_intervals "
            "(workload_id, cluster_queue, flavor, resource, amount, started_at) FROM STDIN",
            rows,
        )


def add_events(session: Session, events: Sequence[tuple[int, Event]], now: datetime) -> None:
    """Append workload events (id, event) at ``now``."""
    if events:
        copy_rows(
            session,
            "COPY workload_events (workload_id, at, type, reason, details) FROM STDIN",
            [(i, now, e.type, e.reason, dump_json(dict(e.details))) for i, e in events],
        )


def _audit(
    session: Session,
    transitions: Sequence[Transition],
    admissions: Sequence[Mapping[str, Any] | None],
    actor: str,
) -> None:
    """One audit row per transition; ``admissions`` are their admissions as JSON."""
    write_audit(
        session,
        actor,
        [
            AuditEntry(
                "update",
                WORKLOAD_KIND,
                t.namespace,
                t.name,
                {"state": str(t.before), "version": t.version},
                {"state": str(t.state), "version": t.version + 1, "admission": admission},
            )
            for t, admission in zip(transitions, admissions, strict=True)
        ],
    )


def add_timeline(session: Session, rows: Sequence[tuple[int, Mapping[str, Any], datetime]]) -> None:
    """Open a timeline row per (workload id, {code, message, details}, since)."""
    if rows:
        copy_rows(
            session,
            "COPY wait_reasons (workload_id, code, message, details, since) FROM STDIN",
            [
                (i, str(r["code"]), str(r.get("message", "")), dump_json(r.get("details") or {}),
                 since)
                for i, r, since in rows
            ],
        )  # fmt: skip
