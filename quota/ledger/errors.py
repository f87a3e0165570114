"""Driver errors the ledger can expect, translated into ``quota.errors`` at this edge.

After any of these the transaction is aborted: the caller rolls back (the session's owner
does that anyway when the error leaves its block).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

from sqlalchemy import exc as sa_exc

from quota.core.errors import BerthError, Conflict, DatabaseUnavailable, InvalidInput, Problem

P = ParamSpec("P")
R = TypeVar("R")

# SQLSTATE classes and codes (PostgreSQL appendix A).
_CONNECTION_CLASS = "08"
_SHUTDOWN = {"57P01", "57P02", "57P03"}  # admin/crash shutdown, cannot connect now
_UNIQUE = "23505"
_FOREIGN_KEY = "23503"
_RETRYABLE = {"40001", "40P01"}  # serialization failure, deadlock
# statement_timeout, lock_not_available, idle_in_transaction_session_timeout: the ledger did
# not answer in time (quota.ledger_connect); nothing of the transaction was committed.
_TIMED_OUT = {"57014", "55P03", "25P03"}
_BAD_VALUE = {"23502", "23514", "22003", "22P02", "22007", "22008"}


def translate(error: sa_exc.DBAPIError) -> BerthError | None:
    """The Berth error for a driver error, or ``None`` when it is not one we expect."""
    orig = error.orig
    sqlstate = getattr(orig, "sqlstate", None)
    diag = getattr(orig, "diag", None)
    detail = (getattr(diag, "message_detail", None) or str(orig)).strip()
    if error.connection_invalidated or (
        sqlstate is None and isinstance(error, sa_exc.OperationalError | sa_exc.InterfaceError)
    ):
        return DatabaseUnavailable(f"the ledger database is unreachable: {orig}".strip())
    if sqlstate is None:
        return None
    if sqlstate.startswith(_CONNECTION_CLASS) or sqlstate in _SHUTDOWN:
        return DatabaseUnavailable(f"the ledger database is unreachable: {orig}".strip())
    if sqlstate in _TIMED_OUT:
        return DatabaseUnavailable(f"the ledger database did not answer in time: {orig}".strip())
    if sqlstate == _UNIQUE:
        return Conflict(f"already exists: {detail}")
    if sqlstate == _FOREIGN_KEY:
        return Conflict(f"refers to or is referred to by another row: {detail}")
    if sqlstate in _RETRYABLE:
        return Conflict(f"changed concurrently, retry: {orig}".strip())
    if sqlstate in _BAD_VALUE:
        column = getattr(diag, "column_name", None) or ""
        return InvalidInput([Problem(str(orig).strip(), field=column)])
    return None


@contextmanager
def translated_errors() -> Iterator[None]:
    try:
        yield
    except sa_exc.DBAPIError as error:
        berth = translate(error)
        if berth is None:
            raise
        raise berth from error


def translated(method: Callable[P, R]) -> Callable[P, R]:
    """Decorate a repository method so expected driver errors surface as Berth errors."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with translated_errors():
            return method(*args, **kwargs)

    return wrapper
