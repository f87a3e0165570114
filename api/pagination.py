"""Cursor pagination: an opaque cursor naming the last row of the previous page."""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Annotated

from fastapi import Query

from quota.core.errors import InvalidInput, Problem

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000

_ALPHABET = re.compile(r"[A-Za-z0-9_-]*")  # what urlsafe_b64decode would otherwise skip
MAX_CURSOR = 512  # longer than any cursor this API gives out (one after a 253-character name)

Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description=f"page size (at most {MAX_LIMIT})")]
# A cursor is URL-safe base64 without padding, declared so; which of those strings name a
# row the API could have given out, JSON Schema cannot say. ``_decode`` refuses any other
# with a 422 naming ``cursor``.
Cursor = Annotated[
    str | None,
    Query(
        description="the `nextCursor` of the previous page, as it was; omit for the first",
        json_schema_extra={"pattern": f"^{_ALPHABET.pattern}$", "maxLength": MAX_CURSOR},
    ),
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
    if len(cursor) > MAX_CURSOR or not _ALPHABET.fullmatch(cursor):
        raise _bad_cursor()
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return json.loads(raw)["after"]
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise _bad_cursor() from exc


def _bad_cursor() -> InvalidInput:
    return InvalidInput(
        [Problem("not a cursor this API gave out: pass nextCursor as it was", field="cursor")]
    )
