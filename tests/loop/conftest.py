"""Loop tests: a real PostgreSQL database per test, a loop over it, a recording actuator."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
import uvicorn
from loop_builders import Ledgered, RecordingActuator, free_port
from sqlalchemy.orm import sessionmaker

from admission.loop import AdmissionLoop
from api.app import create_app
from api.deps import AppContext, Readiness

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
    engine = sa.create_engine(db_url)
    context = AppContext(
        session_scope=sessionmaker(engine, expire_on_commit=False).begin,
        readiness=lambda: Readiness(True, "test"),
    )
    server = uvicorn.Server(
        uvicorn.Config(create_app(context), host="127.0.0.1", port=free_port(), log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the test API server did not start"
        time.sleep(0.02)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.config.port}", timeout=10) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        engine.dispose()
