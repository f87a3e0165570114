"""The audit log's one writer (edge): who changed what, appended in the caller's transaction.

Objects applied or deleted (``repository``), node health moves (``nodes``), workloads
submitted, decided, checkpointed and finished (``workloads``, ``decisions``,
``checkpoints``, ``lifecycle``) all append through ``write_audit``: one shape of row, one
statement however many rows (COPY). The table refuses updates and deletes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from quota.ledger.bulk import copy_rows, dump_json

_COPY = "COPY audit_log (actor, action, kind, namespace, name, before, after) FROM STDIN"


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One change of one object: ``before``/``after`` its stored form (None: none yet, or
    gone), or the fields that changed."""

    action: str  # create | update | delete (schema.AUDIT_ACTIONS)
    kind: str
    namespace: str | None
    name: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None


def write_audit(session: Session, actor: str, entries: Sequence[AuditEntry]) -> None:
    """Append one audit row per entry, by ``actor``, stamped with the transaction's time."""
    if entries:
        copy_rows(
            session,
            _COPY,
            [
                (actor, e.action, e.kind, e.namespace, e.name,
                 None if e.before is None else dump_json(e.before),
                 None if e.after is None else dump_json(e.after))
                for e in entries
            ],
        )  # fmt: skip
