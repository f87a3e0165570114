"""A real Berth API server on a free loopback port, over a clean migrated database."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import sqlalchemy as sa
import uvicorn
from sqlalchemy.orm import sessionmaker

from api.app import create_app
from api.deps import AppContext, Readiness


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def api(db_url: str) -> Iterator[httpx.Client]:
    """An httpx client talking HTTP to uvicorn serving Berth on ``db_url``."""
    engine = sa.create_engine(db_url)
    sessions = sessionmaker(engine, expire_on_commit=False)
    app = create_app(
        AppContext(session_scope=sessions.begin, readiness=lambda: Readiness(True, "test"))
    )
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test API server did not start")
        time.sleep(0.02)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
        yield client
    server.should_exit = True
    thread.join(timeout=10)
    engine.dispose()
