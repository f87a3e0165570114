"""Plain-words arithmetic over the ledger's history (PURE): a reason row's duration and the
estimated start of a pending workload (the timeline itself: ``quota.core.timeline``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from quota.core.reasons import WaitReason
from quota.core.timeline import format_duration
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


def entry_seconds(entry: TimelineEntry, now: datetime) -> float:
    return max(0.0, ((entry.until or now) - entry.since).total_seconds())


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
