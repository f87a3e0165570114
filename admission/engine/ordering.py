"""Queue order (PURE): who goes first within a ClusterQueue and across a cohort."""

from __future__ import annotations

from datetime import datetime

from quota.core.workload import Workload

QueueKey = tuple[int, datetime, str]
# (borrows, fair share after admission, -priority, creation time, key)
CohortKey = tuple[bool, int, int, datetime, str]


def queue_key(workload: Workload) -> QueueKey:
    """Pending order inside a ClusterQueue: higher priority, then older, then key."""
    return (-workload.priority, workload.created_at, workload.key)


def cohort_key(workload: Workload, *, borrows: bool, share: int = 0) -> CohortKey:
    """Order of ClusterQueue heads across a cohort: non-borrowing (lower share) first."""
    return (borrows, share, -workload.priority, workload.created_at, workload.key)
