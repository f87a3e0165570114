"""The history part of ``berth why``: the REST history's summary, who evicted the workload,
and its rows (already merged, ordered and worded by the server: ``quota.core.timeline``).

A workload evicted a hundred times has hundreds of rows: only the last ``ROWS_SHOWN`` are
printed, after a line saying how many were left out and where they all are; the eviction
tally above them still names every preemptor."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

ROWS_SHOWN = 20


def history_lines(history: Mapping[str, Any]) -> list[str]:
    """``History: …``, ``Evicted by: …`` and the timeline rows, oldest first."""
    lines = [f"History: {history['summary']}"]
    by = _preemptors(history.get("evictions") or [])
    if by:
        lines.append(f"Evicted by: {by}")
    rows = history.get("rows") or []
    left_out = len(rows) - ROWS_SHOWN
    if left_out > 0:
        lines.append(
            f"  … {left_out} earlier row{'s' if left_out != 1 else ''} (all of them: "
            f"GET /api/v1/workloads/{history['namespace']}/{history['name']}/history)"
        )
        rows = rows[left_out:]
    lines.extend(f"  {_when(row['at'])}  {row['text']}" for row in rows)
    return lines


def _preemptors(evictions: list[Mapping[str, Any]]) -> str:
    """``team-b/big (ClusterQueue gpu-b) 2×, (another namespace) (ClusterQueue gpu-b) 1×``,
    most first; evictions without a preemptor by their reason."""
    counts: Counter[str] = Counter()
    for eviction in evictions:
        p = eviction.get("preemptor")
        if p:
            counts[f"{p['workload']} (ClusterQueue {p.get('clusterQueue') or 'unknown'})"] += 1
        else:
            counts[str(eviction.get("reason") or "unknown reason")] += 1
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{who} {n}×" for who, n in ordered)


def _when(at: str) -> str:
    """``2026-12-01 09:49:24`` from an RFC 3339 time."""
    return at[:19].replace("T", " ")
