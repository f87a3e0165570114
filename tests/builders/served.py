"""Berth's app under a real uvicorn on a free loopback port, as ``berth serve`` builds it:
the same transactions (``quota.ledger_connect``: timeouts, commit before answering)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import httpx
import sqlalchemy as sa
import uvicorn
from fastapi import FastAPI

from api.app import create_app
from api.auth import Grant
from api.deps import AppContext, Readiness
from builders.ports import free_port
from quota.ledger.connect import ConnectionLimits, Transactions, create_engine


@contextlib.contextmanager
def engine_for(url: str, limits: ConnectionLimits | None = None) -> Iterator[sa.Engine]:
    engine = create_engine(url, limits or ConnectionLimits())
    try:
        yield engine
    finally:
        engine.dispose()


@contextlib.contextmanager
def running(app: FastAPI) -> Iterator[str]:
    """``app`` under uvicorn in a thread; its base URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning")
    with running_config(config) as base:
        yield base


@contextlib.contextmanager
def running_config(config: uvicorn.Config) -> Iterator[str]:
    """A uvicorn server of ``config`` (on 127.0.0.1) in a thread; its base URL."""
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "the test API server did not start"
        time.sleep(0.02)
    try:
        scheme = "https" if config.is_ssl else "http"
        yield f"{scheme}://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextlib.contextmanager
def served(
    url: str,
    tokens: Sequence[Grant] = (),
    *,
    limits: ConnectionLimits | None = None,
    timeout: float = 30,
    metrics_open: bool = False,
    app_options: Mapping[str, Any] | None = None,
) -> Iterator[httpx.Client]:
    """Berth's API over the ledger at ``url``; a client for it."""
    with engine_for(url, limits) as engine:
        context = AppContext(
            session_scope=Transactions(engine),
            readiness=lambda: Readiness(True, "test"),
            tokens=tuple(tokens),
            metrics_open=metrics_open,
        )
        with running(create_app(context, **dict(app_options or {}))) as base, httpx.Client(
            base_url=base, timeout=timeout
        ) as client:
            yield client
