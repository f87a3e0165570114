"""Where a benchmark's ledger lives: a fresh database per run, never the user's ledger.

Without ``--database-url`` the embedded PostgreSQL is started the way ``berth serve``
starts it (``berth.database.Database``), with its data in a temporary folder removed
afterwards. With a URL, the server it names is used (the role must be able to create
databases) and the benchmark's databases are created, dropped and recreated on it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from berth import migrate
from berth.database import Database, ensure_database
from berth.settings import DatabaseSettings
from berth.settings_parsers import normalise_url
from quota.ledger.apply import apply_objects
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts


@contextmanager
def server(database_url: str | None) -> Iterator[str]:
    """The URL of a database on a running server that may create others."""
    if database_url:
        yield normalise_url(database_url)
        return
    home = Path(tempfile.mkdtemp(prefix="berth-bench-"))
    home.chmod(0o755)  # as root the embedded server runs as another user
    database = Database(DatabaseSettings(home=home))
    try:
        database.open(migrate_to_head=False)
        yield database.url
    finally:
        database.close()
        shutil.rmtree(home, ignore_errors=True)


def fresh(server_url: str, name: str) -> str:
    """A new database ``name`` (dropped first if it exists) migrated to head; its URL."""
    drop(server_url, name)
    admin_url = sa.make_url(server_url).set(database="postgres")
    ensure_database(admin_url.render_as_string(hide_password=False), name)
    url = sa.make_url(server_url).set(database=name).render_as_string(hide_password=False)
    migrate.upgrade(url)
    return url


def drop(server_url: str, name: str) -> None:
    """Drop the benchmark's database ``name``."""
    admin_url = sa.make_url(server_url).set(database="postgres")
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=sa.NullPool)
    with admin.connect() as connection:
        connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@contextmanager
def scratch(server_url: str, name: str) -> Iterator[str]:
    """A fresh migrated database named ``name`` plus this process id (so runs sharing a
    server do not collide), dropped afterwards; its URL."""
    unique = f"{name}_{os.getpid()}"
    try:
        yield fresh(server_url, unique)
    finally:
        drop(server_url, unique)


def apply_text(sessions: sessionmaker[Session], text: str) -> None:
    """Objects into the ledger as ``berth apply`` writes them."""
    with sessions.begin() as session:
        apply_objects(Ledger(session), parse_texts([("bench", text)]), actor="bench")
