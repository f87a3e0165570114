"""Rows in bulk on the session's own connection (edge): COPY, and JSON as one text.

A cycle of thousands of decisions appends thousands of event, usage, timeline and audit
rows: COPY sends them with no statement to parse and no JSON to unpack server-side.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, cast

import psycopg
from sqlalchemy import exc as sa_exc
from sqlalchemy.orm import Session


def dump_json(value: object) -> str:
    """Compact JSON; values JSON does not know (times) as their ``str``."""
    return json.dumps(value, separators=(",", ":"), default=str)


def copy_rows(session: Session, statement: str, rows: Iterable[Sequence[object]]) -> None:
    """Append ``rows`` with COPY on the session's own connection (same transaction).
    Driver errors surface as the SQLAlchemy errors ``translated`` expects."""
    raw = cast("psycopg.Connection[Any]", session.connection().connection.driver_connection)
    try:
        with raw.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
    except psycopg.Error as error:
        raise sa_exc.DBAPIError.instance(
            statement, None, error, psycopg.Error, connection_invalidated=raw.closed
        ) from error
