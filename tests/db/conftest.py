"""Fixtures for tests against a real PostgreSQL: a session on a fresh migrated database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import Session

from quota.ledger.repository import Ledger

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.db)


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    engine = sa.create_engine(db_url, poolclass=sa.NullPool)
    try:
        yield engine
    finally:
        engine.dispose()


@pytest.fixture
def session(engine: sa.Engine) -> Iterator[Session]:
    """A session on the test's own database; whatever it did is rolled back afterwards."""
    with Session(engine) as session:
        try:
            yield session
        finally:
            session.rollback()


@pytest.fixture
def ledger(session: Session) -> Ledger:
    return Ledger(session)
