"""A workload reporting a checkpoint: stored on its row, where the loop sees it (edge).

The report only records (``berth.dev/checkpointed-at`` and ``…/checkpoint-location`` in
the workload's annotations, a ``Checkpointed`` event, an audit row). Deciding what follows,
such as ending an evicting victim's grace, is the admission loop's: it reads the changed
row on its next cycle, so one place decides and actuates.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.core.checkpoints import CHECKPOINTED_AT, with_checkpoint
from quota.core.cycle_writes import Event
from quota.core.errors import Conflict, NotFound
from quota.core.workload import Workload, WorkloadState
from quota.ledger.audit import AuditEntry, write_audit
from quota.ledger.bulk import dump_json
from quota.ledger.decisions import WORKLOAD_KIND, add_events
from quota.ledger.errors import translated
from quota.ledger.workloads import from_workload_row, lock_current_row


@translated
def record_checkpoint(
    session: Session,
    namespace: str,
    name: str,
    *,
    at: datetime,
    location: str | None,
    now: datetime,
    actor: str,
) -> tuple[Workload, bool]:
    """Store a checkpoint taken at ``at``; the workload and whether anything changed (a
    report no newer than the stored one changes nothing: reports may arrive twice).
    ``NotFound`` without such a workload, ``Conflict`` when it has finished."""
    row = lock_current_row(session, namespace, name)
    if row is None:
        raise NotFound(f"Workload {namespace}/{name} not found", field="name")
    if row["state"] == str(WorkloadState.FINISHED):
        raise Conflict(
            f"Workload {namespace}/{name} has finished; a checkpoint no longer matters",
            field="name",
        )
    previous = row["annotations"].get(CHECKPOINTED_AT)
    annotations = with_checkpoint(row["annotations"], at, location)
    if annotations is None:
        return from_workload_row(row), False  # stale or repeated: the newer one stands
    stamp = annotations[CHECKPOINTED_AT]
    updated = (
        session.execute(
            text(
                "UPDATE workloads SET annotations = CAST(:annotations AS jsonb), "
                "version = version + 1, updated_at = now() WHERE id = :id RETURNING *"
            ),
            {"annotations": dump_json(annotations), "id": row["id"]},
        )
        .mappings()
        .one()
    )
    details: dict[str, object] = {"at": stamp, "state": row["state"]}
    if location is not None:
        details["location"] = location
    add_events(session, [(row["id"], Event("Checkpointed", None, details))], now)
    write_audit(session, actor, [AuditEntry(
        "update", WORKLOAD_KIND, namespace, name,
        {CHECKPOINTED_AT: previous, "version": row["version"]},
        {CHECKPOINTED_AT: stamp, "version": row["version"] + 1},
    )])  # fmt: skip
    return from_workload_row(updated), True
