"""What the admission loop reads: unfinished workloads, what changed since, the fences.

Change tracking rests on transaction ids. Triggers stamp each workload row with the id of
the transaction that wrote it (``change_xid``) and each object table in ``object_changes``.
A reader notes ``pg_snapshot_xmin`` *before* reading: every transaction that commits after
that read has an id at or above it, so "rows with change_xid >= mark" next time misses
nothing (it may re-read a few rows, which is harmless).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.orm import Session

from quota.core.cycle_writes import Verdict, WorkloadRecord
from quota.core.workload import WorkloadState
from quota.ledger.errors import translated
from quota.ledger.workloads import WORKLOADS, from_workload_row

# Object writers take this lock exclusively (by trigger); a decision transaction takes it
# shared. Must equal OBJECTS_LOCK in migration 0002.
OBJECTS_LOCK = 7_266_400_001


def mark(session: Session) -> int:
    """The oldest transaction still running: the lower bound for the next change query."""
    value: int = session.execute(
        text("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
    ).scalar_one()
    return value


def _record(row: Mapping[Any, Any]) -> WorkloadRecord:
    verdict = Verdict(
        row["reason_code"], tuple(row["reasons"]), tuple(row["hints"]), row["queue_position"]
    )
    return WorkloadRecord(row["id"], row["version"], from_workload_row(row), verdict)


@translated
def unfinished_workloads(session: Session) -> list[WorkloadRecord]:
    """Every workload not finished, oldest row first."""
    query = (
        select(WORKLOADS)
        .where(WORKLOADS.c.state != str(WorkloadState.FINISHED))
        .order_by(WORKLOADS.c.id)
    )
    return [_record(row) for row in session.execute(query).mappings()]


@translated
def changed_workloads(
    session: Session, since: int, *, skip_xids: Iterable[int] = (), ids: Iterable[int] = ()
) -> list[WorkloadRecord]:
    """Rows written at or after ``since`` (finished ones included, so they can be dropped),
    except by the transactions in ``skip_xids``, plus the rows ``ids``; oldest row first."""
    skip, wanted = sorted(set(skip_xids)), sorted(set(ids))
    changed = (WORKLOADS.c.change_xid >= since) & WORKLOADS.c.change_xid.not_in(skip)
    query = select(WORKLOADS).where(changed | WORKLOADS.c.id.in_(wanted))
    return [_record(row) for row in session.execute(query.order_by(WORKLOADS.c.id)).mappings()]


ObjectsVersion = tuple[tuple[str, int], ...]


@translated
def objects_version(session: Session) -> ObjectsVersion:
    """Which transaction last wrote each object table (flavors, queues, quotas, nodes, …).

    Read it *before* the objects: a write that commits in between then shows as a change
    next time (a needless reload, never a missed one). Unlike a transaction-id mark it does
    not depend on what else runs on the server: a long transaction in any database holds
    ``pg_snapshot_xmin`` back, and every object written since would look changed forever,
    so no cycle could ever commit while it ran."""
    rows = session.execute(
        text("SELECT table_name, change_xid FROM object_changes ORDER BY table_name")
    )
    return tuple((str(name), int(xid)) for name, xid in rows)


@translated
def fence_objects(session: Session, version: ObjectsVersion) -> bool:
    """Hold object writers off until this transaction ends; ``False`` if one got in after
    ``version`` was read (the quota decided on may be stale: reload before deciding again)."""
    session.execute(text("SELECT pg_advisory_xact_lock_shared(:key)"), {"key": OBJECTS_LOCK})
    return objects_version(session) == version


@translated
def begin_term(session: Session, holder: str, now: datetime) -> int:
    """Start a new leadership term; its number (the fencing token)."""
    term: int = session.execute(
        text(
            "INSERT INTO loop_leader (id, term, holder, since) VALUES (1, 1, :holder, :now) "
            "ON CONFLICT (id) DO UPDATE SET term = loop_leader.term + 1, holder = :holder, "
            "since = :now RETURNING term"
        ),
        {"holder": holder, "now": now},
    ).scalar_one()
    return term


@translated
def term_is_current(session: Session, term: int) -> bool:
    """Whether ``term`` is still the newest; a new leader's bump waits for this transaction."""
    found = session.execute(text("SELECT term FROM loop_leader WHERE id = 1 FOR SHARE"))
    return found.scalar_one_or_none() == term


@translated
def current_xid(session: Session) -> int:
    """This transaction's id (assigning one if it has none yet)."""
    value: int = session.execute(text("SELECT pg_current_xact_id()::text::bigint")).scalar_one()
    return value


def quiet(session: Session) -> None:
    """Suppress the change NOTIFY for this transaction (the loop's own writes)."""
    session.execute(text("SELECT set_config('berth.quiet', 'on', true)"))
