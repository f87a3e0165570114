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
    """Admissions, evictions, requeues and the finish, oldest first."""
    rows = session.execute(
        text(
            "SELECT at, type, reason, details FROM workload_events "
            "WHERE workload_id = :id ORDER BY at, id"
        ),
        {"id": workload_id},
    ).mappings()
    return [EventEntry(r["at"], r["type"], r["reason"], dict(r["details"] or {})) for r in rows]
