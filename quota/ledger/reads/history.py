"""A workload's past: its wait-reason timeline and its events (read-only)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.ledger.errors import translated


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    code: str
    message: str
    details: Mapping[str, Any]
    since: datetime
    until: datetime | None  # None: still the primary reason


@dataclass(frozen=True, slots=True)
class EventEntry:
    at: datetime
    type: str  # Admitted | Evicted | Finished | Requeued
    reason: str | None
    details: Mapping[str, Any]
    # An eviction's preemptor's ClusterQueue (its admission's, else its LocalQueue's);
    # None when the event names no preemptor or the ledger no longer has it.
    preemptor_cluster_queue: str | None = None


# The preemptor an event names ("namespace/name"): the row of that name that existed then.
_PREEMPTOR_QUEUE = """
    LEFT JOIN LATERAL (
        SELECT COALESCE(p.cluster_queue, lq.cluster_queue) AS queue
        FROM workloads AS p
        LEFT JOIN local_queues AS lq ON lq.namespace = p.namespace AND lq.name = p.queue_name
        WHERE p.namespace = split_part(e.details->>'preemptor', '/', 1)
          AND p.name = substr(e.details->>'preemptor',
                              length(split_part(e.details->>'preemptor', '/', 1)) + 2)
          AND p.created_at <= e.at
        ORDER BY p.id DESC LIMIT 1
    ) AS pq ON e.details->>'preemptor' <> ''
"""


@translated
def timeline(session: Session, workload_id: int) -> list[TimelineEntry]:
    """Every primary reason the workload had, oldest first."""
    rows = session.execute(
        text(
            "SELECT code, message, details, since, until FROM wait_reasons "
            "WHERE workload_id = :id ORDER BY since, id"
        ),
        {"id": workload_id},
    ).mappings()
    return [
        TimelineEntry(r["code"], r["message"], dict(r["details"] or {}), r["since"], r["until"])
        for r in rows
    ]


@translated
def events(session: Session, workload_id: int) -> list[EventEntry]:
    """Admissions, evictions, requeues and the finish, oldest first; an eviction with the
    ClusterQueue of its preemptor."""
    rows = session.execute(
        text(
            "SELECT e.at, e.type, e.reason, e.details, pq.queue FROM workload_events AS e "
            f"{_PREEMPTOR_QUEUE} WHERE e.workload_id = :id ORDER BY e.at, e.id"
        ),
        {"id": workload_id},
    ).mappings()
    return [
        EventEntry(r["at"], r["type"], r["reason"], dict(r["details"] or {}), r["queue"])
        for r in rows
    ]
