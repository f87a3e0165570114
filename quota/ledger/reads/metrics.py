"""Aggregates for Prometheus gauges and counters: event totals and admission wait times
(read-only; one grouped query each, so a scrape stays cheap however long the history)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.ledger.errors import translated


@dataclass(frozen=True, slots=True)
class EventCount:
    type: str  # Admitted | Evicted | Finished | Requeued
    cluster_queue: str  # "" when the event names none
    reason: str  # "" when the event has none
    count: int


@dataclass(frozen=True, slots=True)
class WaitTimes:
    """Cumulative counts of admitted workloads whose wait was at most each bound."""

    buckets: tuple[tuple[float, int], ...]  # (upper bound in seconds, cumulative count)
    count: int
    sum_seconds: float


@translated
def event_counts(session: Session) -> list[EventCount]:
    """How many events of each type, per ClusterQueue and reason, ever."""
    rows = session.execute(
        text(
            """
            SELECT e.type, COALESCE(e.details->>'clusterQueue', w.cluster_queue, ''),
                   COALESCE(e.reason, ''), count(*)
            FROM workload_events AS e JOIN workloads AS w ON w.id = e.workload_id
            GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
            """
        )
    ).all()
    return [EventCount(t, q, r, int(n)) for t, q, r, n in rows]


@translated
def wait_times(session: Session, bounds: Sequence[float]) -> WaitTimes:
    """From submission to (latest) admission, over every workload ever admitted."""
    filters = ", ".join(f"count(*) FILTER (WHERE wait <= {float(b)!r})" for b in bounds)
    row = session.execute(
        text(
            f"""
            SELECT {filters}, count(*), COALESCE(sum(wait), 0) FROM (
                SELECT EXTRACT(EPOCH FROM (admitted_at - created_at)) AS wait
                FROM workloads WHERE admitted_at IS NOT NULL
            ) AS waits
            """
        )
    ).one()
    counts = [int(c) for c in row[: len(bounds)]]
    return WaitTimes(
        buckets=tuple(zip(bounds, counts, strict=True)),
        count=int(row[len(bounds)]),
        sum_seconds=float(row[len(bounds) + 1]),
    )
