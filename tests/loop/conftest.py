"""Loop tests: a real PostgreSQL database per test, a loop over it, a recording actuator."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from builders.loop import Ledgered, RecordingActuator
from builders.served import served
from sqlalchemy.orm import sessionmaker

from admission.loop.loop import AdmissionLoop

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.db)


@pytest.fixture
def ledgered(db_url: str) -> Iterator[Ledgered]:
    engine = sa.create_engine(db_url, poolclass=sa.NullPool)
    try:
        yield Ledgered(db_url, sessionmaker(engine, expire_on_commit=False).begin)
    finally:
        engine.dispose()


@pytest.fixture
def actuator() -> RecordingActuator:
    return RecordingActuator()


@pytest.fixture
def loop(ledgered: Ledgered, actuator: RecordingActuator) -> AdmissionLoop:
    return AdmissionLoop(ledgered.sessions, actuator)


@pytest.fixture
def api(db_url: str) -> Iterator[httpx.Client]:
    """The app ``berth serve`` builds, under uvicorn on a loopback port, over ``db_url``."""
    with served(db_url, timeout=10) as client:
        yield client
