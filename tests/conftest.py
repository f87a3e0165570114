"""Shared fixtures: a PostgreSQL server for the whole run and a clean migrated database per test.

``BERTH_TEST_DATABASE_URL`` names a server to use (any database on it; the tests create their
own, named with this process id so runs sharing a server do not collide); without it the
tests start Berth's embedded PostgreSQL in a temporary folder.

Hypothesis runs under one of two profiles: ``dev`` (the default: fresh random examples each
run, failures remembered in ``.hypothesis``) and ``ci`` (selected by ``HYPOTHESIS_PROFILE=ci``
or any ``CI`` variable; ``.ci/run`` sets it): the same examples on every run, so a red CI
run is red again when rerun, and the blob to reproduce a failure printed with it.
"""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from hypothesis import settings

from berth import migrate

SERVER_ENV = "BERTH_TEST_DATABASE_URL"

# No deadline in either profile: how fast an example runs is for benchmarks to report,
# never for a test to assert (a loaded CI machine would fail healthy code). A property's
# own @settings(max_examples=...) still wins over the profile's count; CI's 100 for the
# others is Hypothesis's default, so CI runs no more examples than before (nor fewer).
settings.register_profile("dev", deadline=None, print_blob=True)
settings.register_profile(
    "ci", derandomize=True, database=None, max_examples=100, deadline=None, print_blob=True
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


class DatabaseServer:
    """Creates and drops throw-away databases on one PostgreSQL server."""

    def __init__(self, url: str) -> None:
        self.url = sa.make_url(url)
        self._admin = sa.create_engine(
            self.url.set(database="postgres"), isolation_level="AUTOCOMMIT", poolclass=sa.NullPool
        )
        self._names = itertools.count(1)
        self.prefix = f"berth_test_{os.getpid()}"

    def url_of(self, database: str) -> str:
        return self.url.set(database=database).render_as_string(hide_password=False)

    def create(self, template: str | None = None, *, name: str | None = None) -> str:
        """A new empty database (or a copy of ``template``); its URL."""
        database = name or f"{self.prefix}_{next(self._names)}"
        source = f' TEMPLATE "{template}"' if template else " TEMPLATE template0"
        with self._admin.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
            connection.execute(sa.text(f'CREATE DATABASE "{database}"{source}'))
        return self.url_of(database)

    def drop(self, url: str) -> None:
        database = sa.make_url(url).database
        with self._admin.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))

    def close(self) -> None:
        self._admin.dispose()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of a running PostgreSQL server: the configured one, else an embedded one."""
    configured = os.environ.get(SERVER_ENV)
    if configured:
        yield configured
        return
    from berth.embedded import EmbeddedPostgres

    # Not pytest's tmp_path: as root the server runs as another user, who cannot traverse
    # pytest's private (mode 700) base folder; the system temp folder is open to all.
    home = Path(tempfile.mkdtemp(prefix="berth-test-postgres-"))
    server = EmbeddedPostgres(home)
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_server(postgres_url: str) -> Iterator[DatabaseServer]:
    server = DatabaseServer(postgres_url)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def migrated_template(pg_server: DatabaseServer) -> Iterator[str]:
    """Name of a database migrated to head once per run, cloned for every test."""
    name = f"{pg_server.prefix}_template"
    url = pg_server.create(name=name)
    migrate.upgrade(url)
    try:
        yield name
    finally:
        pg_server.drop(url)


@pytest.fixture
def db_url(pg_server: DatabaseServer, migrated_template: str) -> Iterator[str]:
    """URL of a fresh database at migration head, dropped after the test."""
    url = pg_server.create(template=migrated_template)
    try:
        yield url
    finally:
        pg_server.drop(url)


@pytest.fixture
def empty_db_url(pg_server: DatabaseServer) -> Iterator[str]:
    """URL of a fresh database with no migration applied, dropped after the test."""
    url = pg_server.create()
    try:
        yield url
    finally:
        pg_server.drop(url)
