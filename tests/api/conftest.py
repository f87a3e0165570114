"""A real Berth API server on a free loopback port, over a clean migrated database."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from builders.served import served


@pytest.fixture
def api(db_url: str) -> Iterator[httpx.Client]:
    """An httpx client talking HTTP to uvicorn serving Berth on ``db_url``."""
    with served(db_url, timeout=10) as client:
        yield client
