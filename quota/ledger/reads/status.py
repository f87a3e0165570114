"""Per-queue figures for status displays: usage per flavor, pending and admitted counts,
pending counts per primary reason (read-only queries on a caller's session)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, and_, func, select
from sqlalchemy.orm import Session

from quota.core.workload import HOLDS_QUOTA_SQL, WorkloadState
from quota.ledger import codec
from quota.ledger.errors import translated
from quota.ledger.objects import table_of
from quota.ledger.schema import LocalQueueRow
from quota.ledger.workloads import WORKLOADS

_LOCAL_QUEUES = table_of(LocalQueueRow)
_PENDING = str(WorkloadState.PENDING)


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """What one queue holds now. ``usage``: flavor → resource → milli-units held."""

    pending: int = 0
    admitted: int = 0  # holding quota: Admitted or Evicting
    pending_reasons: Mapping[str, int] = field(default_factory=dict)  # primary code → count
    usage: Mapping[str, Mapping[str, int]] = field(default_factory=dict)


@translated
def cluster_queue_counts(session: Session) -> dict[str, QueueCounts]:
    """Counts for every ClusterQueue that has workloads (pending ones via their LocalQueue)."""
    queue = func.coalesce(WORKLOADS.c.cluster_queue, _LOCAL_QUEUES.c.cluster_queue)
    pending_rows = session.execute(
        select(queue, WORKLOADS.c.reason_code, func.count())
        .select_from(WORKLOADS.outerjoin(_LOCAL_QUEUES, _local_queue_of_workload()))
        .where(WORKLOADS.c.state == _PENDING, queue.is_not(None))
        .group_by(queue, WORKLOADS.c.reason_code)
    ).all()
    pending: dict[str, int] = {}
    reasons: dict[str, dict[str, int]] = {}
    for name, code, count in pending_rows:
        pending[name] = pending.get(name, 0) + count
        if code is not None:
            reasons.setdefault(name, {})[code] = count
    admitted: dict[str, int] = {}
    usage: dict[str, dict[str, dict[str, int]]] = {}
    holding = session.execute(
        select(WORKLOADS.c.cluster_queue, WORKLOADS.c.admission).where(
            WORKLOADS.c.state.in_(HOLDS_QUOTA_SQL), WORKLOADS.c.cluster_queue.is_not(None)
        )
    ).all()
    for name, stored in holding:
        admitted[name] = admitted.get(name, 0) + 1
        admission = codec.from_admission(stored)
        if admission is None:
            continue
        flavors = usage.setdefault(name, {})
        for (flavor, resource), amount in admission.usage().items():
            resources = flavors.setdefault(flavor, {})
            resources[resource] = resources.get(resource, 0) + amount
    return {
        name: QueueCounts(
            pending=pending.get(name, 0),
            admitted=admitted.get(name, 0),
            pending_reasons=reasons.get(name, {}),
            usage=usage.get(name, {}),
        )
        for name in sorted(set(pending) | set(admitted))
    }


@translated
def local_queue_counts(session: Session) -> dict[tuple[str, str], QueueCounts]:
    """Pending and admitted counts per LocalQueue ``(namespace, name)``."""
    rows = session.execute(
        select(WORKLOADS.c.namespace, WORKLOADS.c.queue_name, WORKLOADS.c.state, func.count())
        .where(WORKLOADS.c.state.in_((_PENDING, *HOLDS_QUOTA_SQL)))
        .group_by(WORKLOADS.c.namespace, WORKLOADS.c.queue_name, WORKLOADS.c.state)
    ).all()
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for namespace, queue, state, count in rows:
        entry = counts.setdefault((namespace, queue), {"pending": 0, "admitted": 0})
        entry["pending" if state == _PENDING else "admitted"] += count
    return {
        key: QueueCounts(pending=entry["pending"], admitted=entry["admitted"])
        for key, entry in sorted(counts.items())
    }


def _local_queue_of_workload() -> ColumnElement[bool]:
    return and_(
        _LOCAL_QUEUES.c.namespace == WORKLOADS.c.namespace,
        _LOCAL_QUEUES.c.name == WORKLOADS.c.queue_name,
    )
