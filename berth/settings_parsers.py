"""The settings' leaf parsers (``berth.settings``): a raw value, text from a ``BERTH_*``
variable or flag or a YAML value from the settings file, to the leaf's type, or
``ValueError`` saying what is wrong with it. None of them reads the environment.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from quota.ledger.connect import sqlalchemy_url

__all__ = [
    "Parser", "_exit_codes", "_flag", "_items", "_names", "_path", "_path_text", "_seconds",
    "_server", "_text", "_url", "_whole", "normalise_url",
]

Parser = Callable[[object], object]


def _text(raw: object) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise ValueError(f"{raw!r} is not a text value")
    return raw.strip()


def _path(raw: object) -> Path:
    return Path(_text(raw)).expanduser()


def _path_text(raw: object) -> str:
    return str(_path(raw))


def normalise_url(url: str) -> str:
    """Accept plain ``postgresql://`` URLs (libpq's multi-host form too) and use the
    psycopg 3 driver for them."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return sqlalchemy_url("postgresql+psycopg://" + url[len(prefix) :])
    return sqlalchemy_url(url)


def _url(raw: object) -> str:
    url = normalise_url(_text(raw))
    if not url.startswith("postgresql+psycopg://"):
        raise ValueError(f"{raw!r} is not a PostgreSQL URL (postgresql://user@host:port/db)")
    return url


def _server(raw: object) -> str:
    return _text(raw).rstrip("/")


def _whole(low: int, high: int | None = None, *, unit: str = "", note: str = "") -> Parser:
    span = f"{low}-{high}" if high is not None else f"{low} or more"

    def parse(raw: object) -> int:
        text = "" if isinstance(raw, bool) else str(raw).strip()
        if not text.isdigit() or int(text) < low or (high is not None and int(text) > high):
            raise ValueError(f"{raw!r} is not a whole number{unit} ({span}{note})")
        return int(text)

    return parse


def _seconds(low: float = 0.1, high: float = 86_400) -> Parser:
    def parse(raw: object) -> float:
        try:
            value = -1.0 if isinstance(raw, bool) else float(str(raw).strip())
        except ValueError:
            value = -1.0
        if not low <= value <= high:  # nan fails too
            raise ValueError(f"{raw!r} is not a number of seconds ({low:g}-{high:g})")
        return value

    return parse


def _flag(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text not in ("true", "false", "1", "0"):
        raise ValueError(f"{raw!r} is not true or false")
    return text in ("true", "1")


def _items(raw: object) -> list[str]:
    """A comma-separated text or a YAML list, as stripped non-empty items."""
    parts = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(parts, list) or isinstance(raw, bool):
        raise ValueError(f"{raw!r} is not a list")
    return [str(p).strip() for p in parts if str(p).strip()]


def _names(raw: object) -> tuple[str, ...]:
    return tuple(_items(raw))


def _exit_codes(raw: object) -> frozenset[int]:
    codes = set()
    for part in _items(raw):
        if not part.isdigit() or not 1 <= int(part) <= 255:
            raise ValueError(f"{part!r} is not an exit code (1-255)")
        codes.add(int(part))
    return frozenset(codes)
