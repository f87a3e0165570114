"""Per-queue figures for status displays: usage per flavor, pending and admitted counts,
pending counts per primary reason (read-only queries on a caller's session)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from quota.core.workload import HOLDS_QUOTA_SQL, RUNS, WorkloadState
from quota.ledger import codec
from quota.ledger.errors import translated
from quota.ledger.reads.queues import queue_counts
from quota.ledger.workloads import WORKLOADS

_PENDING = str(WorkloadState.PENDING)
_RUNS = {str(state) for state in RUNS}


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """What one queue holds now. ``usage``: flavor → resource → milli-units held."""

    pending: int = 0
    reserving: int = 0  # holding quota: QuotaReserved, Admitted or Evicting
    admitted: int = 0  # fully admitted: Admitted or Evicting
    pending_reasons: Mapping[str, int] = field(default_factory=dict)  # primary code → count
    usage: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


@translated
def cluster_queue_counts(session: Session) -> dict[str, QueueCounts]:
    """Counts for every ClusterQueue that has workloads (``queues.queue_counts``), and what
    its holders' admissions hold."""
    counts = queue_counts(session)
    reasons = counts.by_reason
    usage: dict[str, dict[str, dict[str, int]]] = {}
    holding = session.execute(
        select(WORKLOADS.c.cluster_queue, WORKLOADS.c.admission).where(
            WORKLOADS.c.state.in_(HOLDS_QUOTA_SQL), WORKLOADS.c.cluster_queue.is_not(None)
        )
    ).all()
    for name, stored in holding:
        admission = codec.from_admission(stored)
        if admission is None:
            continue
        flavors = usage.setdefault(name, {})
        for (flavor, resource), amount in admission.usage().items():
            resources = flavors.setdefault(flavor, {})
            resources[resource] = resources.get(resource, 0) + amount
    return {
        name: QueueCounts(
            pending=sum(reasons.get(name, {}).values()),
            reserving=counts.reserving.get(name, 0),
            admitted=counts.admitted.get(name, 0),
            pending_reasons=reasons.get(name, {}),
            usage=usage.get(name, {}),
        )
        for name in sorted(set(reasons) | set(counts.reserving))
    }


@translated
def local_queue_counts(session: Session) -> dict[tuple[str, str], QueueCounts]:
    """Pending, reserving and admitted counts per LocalQueue ``(namespace, name)``."""
    rows = session.execute(
        select(WORKLOADS.c.namespace, WORKLOADS.c.queue_name, WORKLOADS.c.state, func.count())
        .where(WORKLOADS.c.state.in_((_PENDING, *HOLDS_QUOTA_SQL)))
        .group_by(WORKLOADS.c.namespace, WORKLOADS.c.queue_name, WORKLOADS.c.state)
    ).all()
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for namespace, queue, state, count in rows:
        entry = counts.setdefault((namespace, queue), {"pending": 0, "reserving": 0,
                                                       "admitted": 0})
        if state == _PENDING:
            entry["pending"] += count
            continue
        entry["reserving"] += count
        if state in _RUNS:
            entry["admitted"] += count
    return {
        key: QueueCounts(pending=entry["pending"], reserving=entry["reserving"],
                         admitted=entry["admitted"])
        for key, entry in sorted(counts.items())
    }

