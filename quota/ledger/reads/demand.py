"""The autoscaler's signal, read from the stored verdicts, and the quota reservations
waiting for admission checks, counted (read-only; one query each).

Waiting workloads whose primary reason is a capacity or a quota reason, and the quota
reservations waiting for their admission checks, summed by ``quota.core.demand``.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.demand import WAITING_CODES, Demand, Waiter, demand
from quota.ledger import codec
from quota.ledger.errors import translated


@translated
def read_demand(session: Session, namespaces: Sequence[str] | None = None) -> Demand:
    """Capacity and quota-blocked demand, of the workloads of ``namespaces`` (all: None)."""
    where = "" if namespaces is None else "AND namespace = ANY(CAST(:namespaces AS text[]))"
    rows = session.execute(
        text(
            f"""
            SELECT reason_code, reasons -> 0 -> 'details' AS details, admission
            FROM workloads
            WHERE state IN ('Pending', 'QuotaReserved')
              AND reason_code = ANY(CAST(:codes AS text[])) {where}
            """
        ),
        {"codes": list(WAITING_CODES), "namespaces": list(namespaces or ())},
    ).all()
    waiters = []
    for code, details, admission in rows:
        held = codec.from_admission(admission)
        waiters.append(Waiter(code, details or {}, held.usage() if held is not None else {}))
    return demand(waiters)


@translated
def check_counts(session: Session) -> dict[str, dict[tuple[str, str], int]]:
    """Per ClusterQueue, the workloads reserving quota by admission check and its state."""
    rows = session.execute(
        text(
            """
            SELECT w.cluster_queue, c ->> 'name', c ->> 'state', count(*)
            FROM workloads AS w, jsonb_array_elements(w.admission_checks) AS c
            WHERE w.state = 'QuotaReserved' AND w.cluster_queue IS NOT NULL
            GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
            """
        )
    ).all()
    out: dict[str, dict[tuple[str, str], int]] = {}
    for queue, check, state, count in rows:
        out.setdefault(queue, {})[(check, state)] = int(count)
    return out
