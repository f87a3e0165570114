"""Metering: resource-seconds held over a time window, from the usage intervals (read-only)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.ledger.errors import translated

# What a usage report may be grouped by, and the column each means (resource always is).
# A ClusterQueue's cohort is the one it names now; "" for a queue outside any cohort.
GROUPS = {
    "clusterQueue": "u.cluster_queue",
    "flavor": "u.flavor",
    "namespace": "w.namespace",
    "cohort": "COALESCE(q.cohort, '')",
}

# Seconds of [a, b) inside the window [:start, :end), never negative.
_OVERLAP = "GREATEST(EXTRACT(EPOCH FROM (LEAST({b}, :end) - GREATEST({a}, :start))), 0)"
_HELD = _OVERLAP.format(a="u.started_at", b="COALESCE(u.ended_at, :end)")
_LOST = _OVERLAP.format(a="u.lost_from", b="u.ended_at")
# Lost to hardware: a NodeUnhealthy eviction, or a PodsReadyTimeout on an unhealthy node.
_FAULT = "(u.end_reason = 'NodeUnhealthy' OR u.node_fault)"


@dataclass(frozen=True, slots=True)
class UsageLine:
    group: tuple[tuple[str, str], ...]  # (group name, value) in the order asked for
    resource: str
    milli_seconds: int  # milli-units held × seconds, summed: exact, never a float
    workloads: int  # distinct workloads that held some of it in the window
    # Of ``milli_seconds``: work lost to preemption (since the last checkpoint), and time
    # lost to hardware faults (intervals a NodeUnhealthy eviction ended, or a PodsReadyTimeout
    # of pods on a node Berth marked unhealthy), not charged.
    waste_milli_seconds: int = 0
    fault_milli_seconds: int = 0
    cost: Decimal | None = None  # of the charged part; None where no flavor has a price
    ended: Mapping[str, int] = field(default_factory=dict)  # intervals ended, by why

    @property
    def charged_milli_seconds(self) -> int:
        return self.milli_seconds - self.fault_milli_seconds


@translated
def usage(
    session: Session,
    start: datetime,
    end: datetime,
    group_by: Sequence[str],
    namespaces: Sequence[str] | None = None,
) -> list[UsageLine]:
    """Resource use between ``start`` and ``end``; intervals still open count up to ``end``.
    Cost is what the charged part (held minus hardware-fault time) costs at the prices of
    each interval's flavor. ``namespaces``: count only their workloads (None: all)."""
    unknown = [g for g in group_by if g not in GROUPS]
    if unknown:
        raise ValueError(f"cannot group usage by {', '.join(unknown)}")
    columns = [GROUPS[g] for g in group_by]
    selected = "".join(f"{c}, " for c in columns)
    grouped = ", ".join([*columns, "u.resource"])
    only = "" if namespaces is None else "AND w.namespace = ANY(:namespaces)"
    rows = session.execute(
        text(
            f"""
            SELECT {selected} u.resource,
                   sum(u.amount * {_HELD}) AS held,
                   count(DISTINCT u.workload_id) AS workloads,
                   COALESCE(sum(u.amount * {_LOST})
                            FILTER (WHERE u.end_reason = 'Preempted'), 0) AS waste,
                   COALESCE(sum(u.amount * {_LOST})
                            FILTER (WHERE {_FAULT}), 0) AS fault,
                   sum((u.amount * ({_HELD} - CASE WHEN {_FAULT} THEN {_LOST} ELSE 0 END))
                       * CAST(f.prices -> u.resource ->> 'price' AS numeric)
                       / (CAST(f.prices -> u.resource ->> 'per' AS numeric) * 3600)) AS cost,
                   array_agg(u.end_reason)
                       FILTER (WHERE u.ended_at >= :start AND u.ended_at < :end) AS ends
            FROM usage_intervals AS u
            JOIN workloads AS w ON w.id = u.workload_id
            LEFT JOIN cluster_queues AS q ON q.name = u.cluster_queue
            LEFT JOIN resource_flavors AS f ON f.name = u.flavor
            WHERE u.started_at < :end AND (u.ended_at IS NULL OR u.ended_at > :start) {only}
            GROUP BY {grouped} ORDER BY {grouped}
            """
        ),
        {"start": start, "end": end, "namespaces": list(namespaces or ())},
    ).all()
    n = len(columns)
    return [
        UsageLine(
            group=tuple(zip(group_by, (str(v) for v in row[:n]), strict=True)),
            resource=row[n],
            milli_seconds=round(row[n + 1]),
            workloads=int(row[n + 2]),
            waste_milli_seconds=round(row[n + 3]),
            fault_milli_seconds=round(row[n + 4]),
            cost=None if row[n + 5] is None else Decimal(row[n + 5]),
            ended=dict(Counter(e for e in row[n + 6] or () if e is not None)),
        )
        for row in rows
    ]
