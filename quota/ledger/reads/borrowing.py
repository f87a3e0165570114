"""Who owes whom over a window: the usage intervals of cohort members, attributed by the
pure ``quota.metering_borrowing`` (read-only)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.borrowing import Debt, Held, Lent, owed, owed_now
from quota.core.model import ClusterQueue, Cohort
from quota.ledger.errors import translated
from quota.ledger.repository import Ledger


@translated
def borrowing(session: Session, start: datetime, end: datetime) -> list[Debt]:
    """Borrowed resource-seconds per (cohort, borrower, lender, flavor, resource) in
    [start, end), with the quotas in force now."""
    queues, cohorts, members = _cohort_members(session)
    if not members:
        return []
    rows = session.execute(
        text(
            "SELECT cluster_queue, flavor, resource, amount, started_at, ended_at "
            "FROM usage_intervals WHERE cluster_queue = ANY(CAST(:queues AS text[])) "
            "AND started_at < :end AND (ended_at IS NULL OR ended_at > :start)"
        ),
        {"queues": members, "start": start, "end": end},
    ).all()
    held = [Held(r[0], r[1], r[2], int(r[3]), r[4], r[5]) for r in rows]
    return owed(held, queues, cohorts, start, end)


@translated
def borrowing_now(session: Session) -> list[Lent]:
    """Borrowed milli-units per (cohort, borrower, lender, flavor, resource) now: the usage
    intervals still open, with the quotas in force."""
    queues, cohorts, members = _cohort_members(session)
    if not members:
        return []
    rows = session.execute(
        text(
            "SELECT cluster_queue, flavor, resource, amount, started_at "
            "FROM usage_intervals WHERE cluster_queue = ANY(CAST(:queues AS text[])) "
            "AND ended_at IS NULL"
        ),
        {"queues": members},
    ).all()
    return owed_now([Held(r[0], r[1], r[2], int(r[3]), r[4], None) for r in rows], queues, cohorts)


def _cohort_members(
    session: Session,
) -> tuple[dict[str, ClusterQueue], dict[str, Cohort], list[str]]:
    """The ClusterQueues and Cohorts in force now, and the queues that sit in a cohort."""
    ledger = Ledger(session)
    queues = {q.name: q for q in ledger.list("ClusterQueue") if isinstance(q, ClusterQueue)}
    cohorts = {c.name: c for c in ledger.list("Cohort") if isinstance(c, Cohort)}
    members = sorted(name for name, q in queues.items() if q.cohort is not None)
    return queues, cohorts, members
