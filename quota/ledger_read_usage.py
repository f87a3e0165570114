"""Metering: resource-seconds held over a time window, from the usage intervals (read-only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.ledger_errors import translated

# What a usage report may be grouped by, and the column each means (resource always is).
GROUPS = {"clusterQueue": "u.cluster_queue", "flavor": "u.flavor", "namespace": "w.namespace"}


@dataclass(frozen=True, slots=True)
class UsageLine:
    group: tuple[tuple[str, str], ...]  # (group name, value) in the order asked for
    resource: str
    milli_seconds: int  # milli-units held × seconds, summed: exact, never a float
    workloads: int  # distinct workloads that held some of it in the window


@translated
def usage(
    session: Session, start: datetime, end: datetime, group_by: Sequence[str]
) -> list[UsageLine]:
    """Resource use between ``start`` and ``end``; intervals still open count up to ``end``."""
    unknown = [g for g in group_by if g not in GROUPS]
    if unknown:
        raise ValueError(f"cannot group usage by {', '.join(unknown)}")
    columns = [GROUPS[g] for g in group_by]
    selected = "".join(f"{c}, " for c in columns)
    grouped = ", ".join([*columns, "u.resource"])
    rows = session.execute(
        text(
            f"""
            SELECT {selected} u.resource,
                   sum(u.amount * EXTRACT(EPOCH FROM (
                       LEAST(COALESCE(u.ended_at, :end), :end) - GREATEST(u.started_at, :start)
                   ))) AS held,
                   count(DISTINCT u.workload_id) AS workloads
            FROM usage_intervals AS u JOIN workloads AS w ON w.id = u.workload_id
            WHERE u.started_at < :end AND (u.ended_at IS NULL OR u.ended_at > :start)
            GROUP BY {grouped} ORDER BY {grouped}
            """
        ),
        {"start": start, "end": end},
    ).all()
    return [
        UsageLine(
            group=tuple(zip(group_by, (str(v) for v in row[: len(columns)]), strict=True)),
            resource=row[len(columns)],
            milli_seconds=round(row[len(columns) + 1]),
            workloads=int(row[len(columns) + 2]),
        )
        for row in rows
    ]
