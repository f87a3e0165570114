"""Berth's settings: command-line flags over environment variables over defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from berth.embedded import default_home

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str | None  # None: the embedded PostgreSQL under ``home``
    home: Path
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT


def load(
    *,
    database_url: str | None = None,
    home: str | None = None,
    host: str | None = None,
    port: int | None = None,
) -> Settings:
    """Settings from explicit values, then ``BERTH_*`` environment variables, then defaults."""
    url = database_url or os.environ.get("BERTH_DATABASE_URL") or None
    return Settings(
        database_url=normalise_url(url) if url else None,
        home=Path(home).expanduser() if home else default_home(),
        host=host or os.environ.get("BERTH_HOST") or DEFAULT_HOST,
        port=port or int(os.environ.get("BERTH_PORT") or DEFAULT_PORT),
    )


def normalise_url(url: str) -> str:
    """Accept plain ``postgresql://`` URLs and use the psycopg 3 driver for them."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url
