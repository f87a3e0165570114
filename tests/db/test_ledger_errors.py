"""Driver errors surface as Berth errors at the ledger's edge."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from builders.ledger import cluster_queue, workload
from sqlalchemy.orm import Session

from quota.core.errors import Conflict, DatabaseUnavailable, InvalidInput
from quota.core.model import PriorityClass
from quota.ledger.repository import Ledger


def test_unreachable_database_is_unavailable() -> None:
    engine = sa.create_engine(
        "postgresql+psycopg://postgres@127.0.0.1:1/nowhere?connect_timeout=2",
        poolclass=sa.NullPool,
    )
    with Session(engine) as session, pytest.raises(DatabaseUnavailable, match="unreachable"):
        Ledger(session).get("ClusterQueue", "team-a")


def test_connection_killed_mid_transaction_is_unavailable(
    engine: sa.Engine, ledger: Ledger, session: Session
) -> None:
    ledger.upsert(cluster_queue(), actor="a")
    pid = session.execute(sa.text("SELECT pg_backend_pid()")).scalar()
    with engine.begin() as admin:
        admin.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    with pytest.raises(DatabaseUnavailable):
        ledger.get("ClusterQueue", "team-a")


def test_concurrent_creation_of_one_name_is_a_conflict(engine: sa.Engine, ledger: Ledger) -> None:
    ledger.add_workload(workload(), actor="first")
    ledger.session.commit()
    with Session(engine) as other, pytest.raises(Conflict, match=r"\(namespace, name\)"):
        Ledger(other).add_workload(workload(), actor="second")


def test_value_outside_the_column_range_is_invalid_input(ledger: Ledger) -> None:
    with pytest.raises(InvalidInput, match="out of range"):
        ledger.upsert(PriorityClass("huge", 2**63), actor="a")
