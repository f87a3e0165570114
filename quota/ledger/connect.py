"""How every connection to the ledger is opened: timeouts on the server and on the wire.

No statement may hang a caller for good. On the server, ``statement_timeout`` ends a
statement that runs (or waits on a lock) too long, and ``idle_in_transaction_session_timeout``
ends the session of a client that stopped in the middle of a transaction (a frozen process
must not hold its locks forever). On the client, TCP keepalives and ``tcp_user_timeout``
drop a connection whose peer went silent (a partition sends no reset, so without them a
read waits as long as the kernel's defaults, which is hours).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from quota.ledger.errors import translated_errors

DEFAULT_STATEMENT_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """Per-connection timeouts; see the module docstring for what each one protects."""

    statement_seconds: float = DEFAULT_STATEMENT_SECONDS
    connect_seconds: int = 5
    keepalive_idle_seconds: int = 5
    keepalive_interval_seconds: int = 2
    keepalive_count: int = 3

    @property
    def idle_in_transaction_seconds(self) -> float:
        # Longer than any statement, so only a client that stopped talking is cut off.
        return 2 * self.statement_seconds

    @property
    def wire_silence_seconds(self) -> int:
        """How long sent data may stay unacknowledged before the connection is dropped."""
        return max(
            10, self.keepalive_idle_seconds + self.keepalive_interval_seconds * self.keepalive_count
        )


def libpq_options(limits: ConnectionLimits) -> dict[str, Any]:
    """libpq connection parameters (psycopg ``connect`` keywords, SQLAlchemy ``connect_args``)."""
    statement_ms = max(1, int(limits.statement_seconds * 1000))
    idle_ms = max(1, int(limits.idle_in_transaction_seconds * 1000))
    return {
        "connect_timeout": limits.connect_seconds,
        "keepalives": 1,
        "keepalives_idle": limits.keepalive_idle_seconds,
        "keepalives_interval": limits.keepalive_interval_seconds,
        "keepalives_count": limits.keepalive_count,
        "tcp_user_timeout": limits.wire_silence_seconds * 1000,
        "options": f"-c statement_timeout={statement_ms} "
        f"-c idle_in_transaction_session_timeout={idle_ms}",
    }


def sqlalchemy_url(url: str) -> str:
    """libpq's multi-host URL (``postgresql://u@h1:p1,h2:p2/db``: libpq tries each host, and
    ``target_session_attrs=read-write`` keeps the primary, so a promoted standby is found
    after a failover) in the form SQLAlchemy's parser takes: one ``host=h:p`` query item per
    host. Any other URL is returned as it is."""
    scheme, sep, rest = url.partition("://")
    netloc, _, tail = rest.partition("/")
    user, at, hosts = netloc.rpartition("@")
    if not sep or "," not in hosts:
        return url
    path, _, query = tail.partition("?")
    items = [f"host={host}" for host in hosts.split(",")] + ([query] if query else [])
    return f"{scheme}://{user}{at}/{path}?{'&'.join(items)}"


def libpq_url(url: str) -> str:
    """A SQLAlchemy URL (``postgresql+psycopg://…``) as psycopg itself takes it (several
    ``host`` query items back into libpq's ``h1:p1,h2:p2``)."""
    for prefix in ("postgresql+psycopg://", "postgresql+psycopg2://"):
        if url.startswith(prefix):
            url = "postgresql://" + url[len(prefix) :]
    head, _, query = url.partition("?")
    items = query.split("&") if query else []
    hosts = [item.removeprefix("host=") for item in items if item.startswith("host=")]
    if len(hosts) < 2 or "://" not in head:
        return url
    scheme, _, rest = head.partition("://")
    netloc, _, path = rest.partition("/")
    user, at, _ = netloc.rpartition("@")
    others = "&".join(item for item in items if not item.startswith("host="))
    return f"{scheme}://{user}{at}{','.join(hosts)}/{path}" + (f"?{others}" if others else "")


def create_engine(url: str, limits: ConnectionLimits, **kwargs: Any) -> sa.Engine:
    """An engine whose every connection carries ``limits``."""
    return sa.create_engine(url, connect_args=libpq_options(limits), **kwargs)


class Transactions:
    """``with transactions() as session``: one transaction, committed when the block ends
    normally (before the caller goes on, so a caller that answers after the block answers
    only for committed work), rolled back on error. Driver errors, those of the commit
    included, surface as Berth errors: a commit the server did not confirm is
    ``DatabaseUnavailable`` (503), never success."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    @contextmanager
    def __call__(self) -> Iterator[Session]:
        with translated_errors(), self._sessions.begin() as session:
            yield session


ReadOnlyScope = Callable[[], AbstractContextManager[Session]]


def read_only(scope: ReadOnlyScope) -> ReadOnlyScope:
    """``scope``'s transactions, each declared ``READ ONLY`` before its first statement:
    PostgreSQL refuses any write in them (the MCP tools' guarantee that they change nothing)."""

    @contextmanager
    def read_only_scope() -> Iterator[Session]:
        with scope() as session:
            session.execute(sa.text("SET TRANSACTION READ ONLY"))
            yield session

    return read_only_scope

