"""The autoscaler's signal, read from the stored verdicts (read-only; one query).

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
