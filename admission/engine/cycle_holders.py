"""A cycle's first step over the workloads already holding quota (PURE): drain what
stopped queues and deactivations evict, and settle quota reservations whose admission
checks answered. It runs before any pending workload is looked at, so what it releases is
free for the same cycle's admissions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from admission.engine import check_states, transitions
from admission.engine.checks import drain_reason
from admission.engine.statuses import Waiting
from admission.engine.types import AdmissionDecision, EvictionDecision, Snapshot
from admission.engine.workload import Holdings
from quota.core.tree import QuotaTree
from quota.core.workload import WorkloadState

# Holders a stopped queue or a deactivation drains (an Evicting one is on its way out).
_DRAINED = frozenset({WorkloadState.ADMITTED, WorkloadState.QUOTA_RESERVED})


@dataclass(slots=True)
class Settled:
    """What the sweep decided: admissions of reservations whose checks passed, evictions,
    and the reservations still waiting for a check."""

    admitted: list[AdmissionDecision] = field(default_factory=list)
    evicted: list[EvictionDecision] = field(default_factory=list)
    waiting: dict[str, Waiting] = field(default_factory=dict)


def sweep_holders(snapshot: Snapshot, holdings: Holdings, tree: QuotaTree,
                  reserved: list[str], now: datetime,
                  release: Callable[[str], None]) -> Settled:
    """Drain, then settle the reservations (``reserved``, keys); ``release`` frees a
    holder's nodes. ``holdings`` and ``tree`` are updated in place."""
    out = Settled()
    for key in sorted(holdings.queue_of):
        cq = holdings.queue_of[key]
        workload = holdings.by_queue[cq][key]
        if workload.state not in _DRAINED:
            continue
        why = drain_reason(snapshot, workload, cq)
        if why is not None:
            tree.remove(cq, holdings.usage[key])
            holdings.remove(key)
            release(key)
            out.evicted.append(EvictionDecision(key, "", None, cq, why))
    for key in reserved:
        queue = holdings.queue_of.get(key)
        if queue is None:  # drained, or its ClusterQueue is gone
            continue
        cq = queue
        workload = holdings.by_queue[cq][key]
        outcome = check_states.judge(snapshot, workload, now)
        assert workload.admission is not None  # it holds quota
        if outcome.admit:
            usage = holdings.usage[key]
            holdings.remove(key)
            holdings.add(cq, transitions.admitted(workload, workload.admission, now), usage)
            out.admitted.append(AdmissionDecision(key, workload.admission, False,
                                                  checked=True))
        elif outcome.reason is not None:
            tree.remove(cq, holdings.usage[key])
            holdings.remove(key)
            release(key)
            check = outcome.check
            details = {} if check is None else {"check": check.name, "message": check.message}
            out.evicted.append(EvictionDecision(key, "", None, cq, outcome.reason, details,
                                                requeue_at=outcome.requeue_at, check=check))
        elif outcome.waiting is not None:
            out.waiting[key] = Waiting(cq, [outcome.waiting])
    return out
