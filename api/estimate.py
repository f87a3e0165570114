"""Plain-words arithmetic over the ledger's history (PURE): durations, the reason-timeline
summary, and the estimated start of a pending workload."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from quota.core.reasons import WaitReason
from quota.ledger.reads.history import TimelineEntry
from quota.ledger.reads.workloads import RunTimes

# Reasons that waiting does not cure: an estimate from queue history would mislead.
NEVER_BY_WAITING = frozenset(
    {
        WaitReason.DEACTIVATED,
        WaitReason.MISCONFIGURED,
        WaitReason.SUSPENDED,
        WaitReason.NO_MATCHING_FLAVOR,
        WaitReason.EXCEEDS_MAX_QUOTA,
        WaitReason.EXCEEDS_NODE_CAPACITY,
    }
)


@dataclass(frozen=True, slots=True)
class Estimate:
    at: datetime
    basis: str


def format_duration(seconds: float) -> str:
    """Two largest units, e.g. ``2h40m``, ``40m``, ``3d4h``, ``45s``."""
    total = max(0, round(seconds))
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if total >= size:
            parts.append(f"{total // size}{unit}")
            total %= size
    return "".join(parts[:2]) or "0s"


def entry_seconds(entry: TimelineEntry, now: datetime) -> float:
    return max(0.0, ((entry.until or now) - entry.since).total_seconds())


def timeline_summary(entries: Sequence[TimelineEntry], now: datetime) -> tuple[str, float]:
    """``("waited 2h40m: 2h WaitingForQuota, then 40m InsufficientCapacity", seconds)``;
    consecutive rows with the same code read as one stretch."""
    stretches: list[tuple[str, float]] = []
    for entry in entries:
        seconds = entry_seconds(entry, now)
        if stretches and stretches[-1][0] == entry.code:
            stretches[-1] = (entry.code, stretches[-1][1] + seconds)
        else:
            stretches.append((entry.code, seconds))
    total = sum(seconds for _, seconds in stretches)
    # Under a second is the moment between submission and the first evaluation: noise.
    shown = [(code, s) for code, s in stretches if s >= 1] or stretches[-1:]
    if not shown:
        return "no wait recorded", 0.0
    parts = ", then ".join(f"{format_duration(s)} {code}" for code, s in shown)
    still = " (still waiting)" if entries[-1].until is None else ""
    return f"waited {format_duration(total)}: {parts}{still}", total


def estimate_start(
    code: str | None, ahead: int, history: RunTimes | None, now: datetime, cluster_queue: str
) -> Estimate | None:
    """When a pending workload may start, from its ClusterQueue's observed run times and
    the queue ahead of it; ``None`` without history or when waiting cannot help."""
    if history is None or history.median_seconds <= 0:
        return None
    if code is not None and code in {str(r) for r in NEVER_BY_WAITING}:
        return None
    slots = max(1, history.running)
    # Each running workload frees its room about once per median run; this one starts
    # when the ``ahead`` before it and then itself have found room.
    wait = (ahead + 1) * history.median_seconds / slots
    basis = (
        f"median run time {format_duration(history.median_seconds)} over the last "
        f"{history.sample} finished workload{'s' if history.sample != 1 else ''} of "
        f"ClusterQueue {cluster_queue}; "
        f"{history.running} running, {ahead} ahead: about one start every "
        f"{format_duration(history.median_seconds / slots)}"
    )
    return Estimate(now + timedelta(seconds=wait), basis)
