"""The audit log is append-only: the database itself refuses to rewrite or erase it."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from builders.ledger import cluster_queue
from sqlalchemy.orm import Session

from quota.ledger.repository import Ledger

TAMPERING = [
    pytest.param("UPDATE audit_log SET actor = 'mallory'", id="rewriting who did it"),
    pytest.param("DELETE FROM audit_log", id="erasing entries"),
    pytest.param("TRUNCATE audit_log", id="truncating the table"),
]


@pytest.mark.parametrize("statement", TAMPERING)
def test_audit_log_refuses_tampering(ledger: Ledger, session: Session, statement: str) -> None:
    ledger.upsert(cluster_queue(), actor="alice")
    session.commit()

    with pytest.raises(sa.exc.DBAPIError, match="append-only"):
        session.execute(sa.text(statement))

    session.rollback()
    assert [e["actor"] for e in ledger.audit_entries()] == ["alice"]
