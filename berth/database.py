"""Where the ledger lives: the embedded PostgreSQL by default, else the server of a URL."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from berth import migrate
from berth.embedded import EmbeddedPostgres
from berth.settings import DatabaseSettings
from quota.core.errors import DatabaseUnavailable
from quota.ledger.connect import Transactions, create_engine

log = logging.getLogger(__name__)

EMBEDDED_DATABASE = "berth"


class Database:
    """Opens the ledger's database (starting the embedded server if needed); hands out sessions."""

    def __init__(self, settings: DatabaseSettings) -> None:
        self.settings = settings
        self.embedded: EmbeddedPostgres | None = None
        self.url = ""
        self._engine: sa.Engine | None = None
        self._transactions: Transactions | None = None

    @property
    def description(self) -> str:
        """Where the data is, in words, for start-up messages (no password)."""
        if self.embedded is not None:
            return f"embedded PostgreSQL, data in {self.embedded.pgdata}"
        return f"PostgreSQL at {make_url(self.url).render_as_string(hide_password=True)}"

    def open(self, *, migrate_to_head: bool = True) -> None:
        """Connect (starting the embedded server when no URL is set) and run migrations."""
        if self.settings.url:
            self.url = self.settings.url
        else:
            self.embedded = EmbeddedPostgres(self.settings.home)
            admin_url = self.embedded.start()
            ensure_database(admin_url, EMBEDDED_DATABASE)
            self.url = self.embedded.url(EMBEDDED_DATABASE)
        self._engine = create_engine(self.url, self.settings.connection, pool_pre_ping=True)
        self._transactions = Transactions(self._engine)
        check_connection(self._engine)
        if migrate_to_head:
            migrate.upgrade(self.url)

    @property
    def engine(self) -> sa.Engine:
        if self._engine is None:
            raise DatabaseUnavailable("the database is not open")
        return self._engine

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction: committed when the block ends normally (a failed commit raises
        ``DatabaseUnavailable``), rolled back on error."""
        if self._transactions is None:
            raise DatabaseUnavailable("the database is not open")
        with self._transactions() as session:
            yield session

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
            self._transactions = None
        if self.embedded is not None:
            self.embedded.stop()
            self.embedded = None


def check_connection(engine: sa.Engine) -> None:
    """Fail with a clear message when the server cannot be reached."""
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        where = engine.url.render_as_string(hide_password=True)
        raise DatabaseUnavailable(f"cannot connect to PostgreSQL at {where}: {exc.orig}") from exc


def ensure_database(admin_url: str, name: str) -> None:
    """Create database ``name`` on the server of ``admin_url`` unless it exists."""
    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            exists = connection.execute(
                sa.text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}
            ).scalar()
            if not exists:
                connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    finally:
        engine.dispose()
