"""ClusterQueue status in one statement: the quota objects (Cohorts, ClusterQueues, their
groups and quotas) kept in memory between reads, revalidated by every read (read-only).

Objects change rarely and workloads often, so a read asks only for what moves (open usage,
pending and admitted counts) together with the object tables' change marks (the
``object_changes`` rows their triggers write); the objects are reloaded only when a mark
moved. The loop's snapshot rests on the same marks (see ``quota.ledger_changes``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.model import ClusterQueue, Cohort
from quota.core.tree import FlavorResource
from quota.core.workload import HOLDS_QUOTA_SQL
from quota.ledger.errors import translated
from quota.ledger.reads.queues import (
    Counts,
    QueueStatus,
    counts_of,
    counts_sql,
    load_cohorts,
    load_queues,
    pool_of,
    statuses_of,
)

# The tables the objects are read from: a write to any of them moves its mark.
_TABLES = ["cohorts", "cluster_queues", "resource_groups", "quotas"]
_ATTEMPTS = 3

Marks = tuple[tuple[str, int], ...]

_MARKS = text(
    "SELECT table_name, change_xid FROM object_changes "
    "WHERE table_name = ANY(CAST(:tables AS text[]))"
)

# One snapshot for the marks and the figures: the object marks, the open usage, and the
# counts every queue read shares (``queues.counts_sql``).
_FIGURES = text(
    """
    SELECT 'mark', table_name, NULL, NULL, change_xid::numeric FROM object_changes
    WHERE table_name = ANY(CAST(:tables AS text[]))
    UNION ALL
    SELECT 'used', cluster_queue, flavor, resource, sum(amount)::numeric FROM usage_intervals
    WHERE ended_at IS NULL AND cluster_queue = ANY(CAST(:pool AS text[]))
    GROUP BY cluster_queue, flavor, resource
    UNION ALL"""
    + counts_sql()
)


@dataclass(frozen=True, slots=True)
class QuotaObjects:
    """Every Cohort and ClusterQueue as the object tables stood at ``marks``."""

    marks: Marks
    cohorts: Mapping[str, Cohort]
    queues: Mapping[str, ClusterQueue]


class QuotaObjectCache:
    """The quota objects one process last read. Shared by request threads: ``held`` is
    replaced whole, and whatever it holds is checked against the marks before use."""

    def __init__(self) -> None:
        self.held: QuotaObjects | None = None


@dataclass(frozen=True, slots=True)
class _Figures:
    marks: Marks
    usage: dict[str, dict[FlavorResource, int]]
    counts: Counts


@translated
def cached_queue_statuses(
    session: Session, names: Sequence[str], cache: QuotaObjectCache
) -> list[QueueStatus]:
    """``queue_statuses(session, names)``, with the objects from ``cache`` while their
    tables are unchanged: one statement per read when they are."""
    held = cache.held
    for _ in range(_ATTEMPTS):
        objects = held if held is not None else _load(session)
        wanted = sorted(n for n in set(names) if n in objects.queues)
        pool = pool_of(wanted, objects.queues, objects.cohorts)
        figures = _figures(session, sorted(pool), wanted)
        if figures.marks == objects.marks:
            cache.held = objects
            break
        held = None  # an object table changed since: read the objects again
    # (Writers racing every attempt: answer from the objects read last, a write apart at
    # most, without keeping them.)
    if not wanted:
        return []
    return statuses_of(
        pool, objects.cohorts, wanted, figures.usage, figures.counts
    )


def _load(session: Session) -> QuotaObjects:
    # The marks are read before the objects: objects newer than their marks only cost a
    # reload at the next read, while the other way round would be stale until next write.
    marks = _marks(session.execute(_MARKS, {"tables": _TABLES}).all())
    cohorts = load_cohorts(session)
    return QuotaObjects(marks, cohorts, load_queues(session, None, cohorts))


def _marks(rows: Iterable[tuple[Any, Any]]) -> Marks:
    return tuple(sorted((str(table), int(xid)) for table, xid in rows))


def _figures(session: Session, pool: Sequence[str], wanted: Sequence[str]) -> _Figures:
    rows = session.execute(
        _FIGURES,
        {
            "tables": _TABLES, "pool": list(pool), "names": list(wanted),
            "holding": list(HOLDS_QUOTA_SQL),
        },
    ).all()
    marks: list[tuple[Any, Any]] = []
    usage: dict[str, dict[FlavorResource, int]] = {}
    counts = []
    for row in rows:
        kind, queue, key, resource, amount = row
        if kind == "mark":
            marks.append((queue, amount))
        elif kind == "used":
            usage.setdefault(queue, {})[(key, resource)] = int(amount)
        else:
            counts.append(row)
    return _Figures(_marks(marks), usage, counts_of(counts))
