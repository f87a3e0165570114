"""The audit log as REST reads it: who changed what and when, newest first, one page at a
time (read-only, in the caller's session). Rows are read as their writers left them.

Pages run newest first, in ``id`` order, and a cursor continues below the last id shown.
``id`` is the order rows were written in; ``at`` is the writing transaction's start, so
concurrent transactions interleave in ``at`` but never in ``id``. Newest first also keeps a
paging reader from missing a row: a transaction that took a lower id but committed after
the first page was read still lies below the cursor, where the next pages look.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from quota.core.kinds import KINDS
from quota.ledger.errors import translated
from quota.ledger.objects import table_of
from quota.ledger.repository import WORKLOAD_KIND
from quota.ledger.schema import AuditRow

# Every kind an audit row can name: the object kinds, and workloads.
AUDITED_KINDS = (*(kind.name for kind in KINDS), WORKLOAD_KIND)
_VERSION = "version"
_AUDIT = table_of(AuditRow)


@dataclass(frozen=True, slots=True)
class AuditFilter:
    kind: str | None = None
    name: str | None = None
    since: datetime | None = None  # rows written at or after


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One row of the audit log; ``before``/``after`` as its writer recorded them (``None``
    for a create's before and a delete's after)."""

    id: int
    at: datetime
    actor: str
    action: str  # create | update | delete
    kind: str
    namespace: str | None
    name: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None

    @property
    def version(self) -> int | None:
        """The version the change left (for a delete, the one deleted); ``None`` where the
        row records none (node health moves)."""
        for state in (self.after, self.before):
            found = None if state is None else state.get(_VERSION)
            if isinstance(found, int) and not isinstance(found, bool):
                return found
        return None

    @property
    def changed(self) -> tuple[str, ...]:
        """The recorded fields whose values differ between before and after (a missing side
        holds nothing), ``version`` aside, in name order."""
        before, after = self.before or {}, self.after or {}
        names = (before.keys() | after.keys()) - {_VERSION}
        return tuple(sorted(n for n in names if before.get(n) != after.get(n)))


@translated
def audit_page(
    session: Session, where: AuditFilter, *, below_id: int | None, limit: int
) -> list[AuditEntry]:
    """At most ``limit`` rows matching ``where``, newest first, with ids below ``below_id``."""
    equal = {"kind": where.kind, "name": where.name}
    conditions = [_AUDIT.c[column] == value for column, value in equal.items() if value is not None]
    if where.since is not None:
        conditions.append(_AUDIT.c.at >= where.since)
    if below_id is not None:
        conditions.append(_AUDIT.c.id < below_id)
    query = select(_AUDIT).where(*conditions).order_by(_AUDIT.c.id.desc()).limit(limit)
    # The table's columns are the entry's fields, by name.
    return [AuditEntry(**row) for row in session.execute(query).mappings()]
