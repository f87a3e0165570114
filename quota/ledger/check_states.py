"""An admission check's controller setting its state on a workload (edge).

Only recorded here (the workload row's ``admission_checks``, a ``CheckChanged`` event, an
audit row); what the state means (admit, requeue, deactivate) is the admission loop's to
decide on its next cycle, as for every other change.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.checks import CheckState, CheckStatus, with_state
from quota.core.cycle_writes import Event
from quota.core.errors import Conflict, NotFound
from quota.core.workload import Workload, WorkloadState
from quota.ledger import codec
from quota.ledger.audit import AuditEntry, write_audit
from quota.ledger.bulk import dump_json
from quota.ledger.decisions import WORKLOAD_KIND, add_events
from quota.ledger.errors import translated
from quota.ledger.workloads import from_workload_row, lock_current_row


@translated
def set_check_state(
    session: Session,
    namespace: str,
    name: str,
    check: str,
    *,
    state: CheckState,
    message: str,
    requeue_after: timedelta | None,
    now: datetime,
    actor: str,
) -> Workload:
    """Store ``check``'s new state on the workload. ``NotFound`` without the workload,
    ``Conflict`` when it is not reserving quota or has no such check."""
    row = lock_current_row(session, namespace, name)
    if row is None:
        raise NotFound(f"Workload {namespace}/{name} not found", field="name")
    workload = from_workload_row(row)
    if workload.state is not WorkloadState.QUOTA_RESERVED:
        raise Conflict(
            f"Workload {namespace}/{name} is {workload.state}, not reserving quota: "
            "its admission checks have no state to set", field="check")
    old = next((c for c in workload.checks if c.name == check), None)
    checks = None if old is None else with_state(workload.checks, CheckStatus(
        check, state, message, requeue_after, now, old.retries))
    if old is None or checks is None:
        names = ", ".join(c.name for c in workload.checks) or "none"
        raise Conflict(f"Workload {namespace}/{name} has no admission check {check} "
                       f"(it has: {names})", field="check")
    stored = codec.check_statuses_json(checks)
    updated = session.execute(
        text("UPDATE workloads SET admission_checks = CAST(:checks AS jsonb), "
             "version = version + 1, updated_at = now() WHERE id = :id RETURNING *"),
        {"checks": dump_json(stored), "id": row["id"]},
    ).mappings().one()
    details: dict[str, object] = {"check": check, "state": str(state), "message": message,
                                  "before": str(old.state)}
    add_events(session, [(row["id"], Event("CheckChanged", str(state), details))], now)
    write_audit(session, actor, [AuditEntry(
        "update", WORKLOAD_KIND, namespace, name,
        {"admissionChecks": codec.check_statuses_json(workload.checks),
         "version": row["version"]},
        {"admissionChecks": stored, "version": row["version"] + 1},
    )])  # fmt: skip
    return from_workload_row(updated)
