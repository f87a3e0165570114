"""Cursor pagination: an opaque cursor naming the last row of the previous page."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Annotated

from fastapi import Query

from quota.core.errors import InvalidInput, Problem

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000

Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description=f"page size (at most {MAX_LIMIT})")]
Cursor = Annotated[
    str | None, Query(description="the `nextCursor` of the previous page; omit for the first")
]


def encode_cursor(last: int | str) -> str:
    """The cursor that continues after the row whose key is ``last`` (an id or a name)."""
    raw = json.dumps({"after": last}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> int | None:
    """The row id a cursor continues after; ``InvalidInput`` naming ``cursor`` if malformed."""
    after = _decode(cursor)
    if after is None:
        return None
    if not isinstance(after, int) or isinstance(after, bool) or after < 0:
        raise _bad_cursor()
    return after


def decode_name_cursor(cursor: str | None) -> str | None:
    """The name a cursor continues after (for lists in name order)."""
    after = _decode(cursor)
    if after is not None and not isinstance(after, str):
        raise _bad_cursor()
    return after


def _decode(cursor: str | None) -> object:
    if cursor is None or cursor == "":
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return json.loads(raw)["after"]
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise _bad_cursor() from exc


def _bad_cursor() -> InvalidInput:
    return InvalidInput(
        [Problem("not a cursor this API gave out: pass nextCursor as it was", field="cursor")]
    )
