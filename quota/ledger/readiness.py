"""A workload's pods becoming all Ready, or losing it: stored on its row (edge).

As with checkpoints, the report only records (the row's ``readiness`` and
``readiness_since``, a ``PodsReady`` or ``PodsNotReady`` event). Timing the workload out
is the admission loop's: it reads the changed row on its next cycle.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.cycle_writes import Event
from quota.core.pods_ready import Readiness, next_readiness
from quota.core.workload import WorkloadState
from quota.ledger.decisions import add_events
from quota.ledger.errors import translated
from quota.ledger.workloads import lock_current_row


@translated
def record_readiness(
    session: Session, namespace: str, name: str, *, ready: bool, now: datetime
) -> bool:
    """Store that the admitted workload's pods are all Ready (``ready``) or not any more;
    whether anything changed (no such admitted workload, or no change: nothing)."""
    row = lock_current_row(session, namespace, name)
    if row is None or row["state"] != str(WorkloadState.ADMITTED):
        return False
    readiness = next_readiness(Readiness(row["readiness"]), ready)
    if readiness is None:
        return False
    session.execute(
        text(
            "UPDATE workloads SET readiness = :readiness, readiness_since = :now, "
            "version = version + 1, updated_at = now() WHERE id = :id"
        ),
        {"readiness": str(readiness), "now": now, "id": row["id"]},
    )
    event = "PodsReady" if readiness is Readiness.READY else "PodsNotReady"
    add_events(session, [(row["id"], Event(event, str(readiness)))], now)
    return True
