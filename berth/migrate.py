"""Ledger schema migrations: upgrade, downgrade, and where a database stands."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from alembic import command
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

import migrations
from quota.core.errors import DatabaseUnavailable


@contextmanager
def _reachable(url: str) -> Iterator[None]:
    try:
        yield
    except sa.exc.OperationalError as exc:
        where = sa.make_url(url).render_as_string(hide_password=True)
        raise DatabaseUnavailable(f"cannot reach PostgreSQL at {where}: {exc.orig}") from exc


def upgrade(url: str, rev: str = "head") -> None:
    """Migrate the database at ``url`` up to ``rev``."""
    with _reachable(url):
        command.upgrade(migrations.config(url), rev)


def downgrade(url: str, rev: str) -> None:
    """Migrate the database at ``url`` down to ``rev`` (``"base"`` empties it)."""
    with _reachable(url):
        command.downgrade(migrations.config(url), rev)


def current(url: str) -> str | None:
    """The revision the database at ``url`` is at; ``None`` when no migration was applied."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with _reachable(url), engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def head() -> str:
    """The newest revision the migrations know (they form one line, so there is one head)."""
    revision = ScriptDirectory.from_config(migrations.config("")).get_current_head()
    if revision is None:  # pragma: no cover - the package always ships a migration
        raise RuntimeError("no migrations found")
    return revision


def history(url: str) -> list[str]:
    """One line per known revision, oldest first, marking the head and where ``url`` stands."""
    scripts = ScriptDirectory.from_config(migrations.config(url))
    at = current(url)
    lines = []
    for script in reversed(list(scripts.walk_revisions())):
        marks = [
            mark
            for mark, on in (("head", script.is_head), ("current", script.revision == at))
            if on
        ]
        suffix = f" ({', '.join(marks)})" if marks else ""
        lines.append(f"{script.revision} {script.doc}{suffix}")
    return lines


def at_head(url: str) -> bool:
    """Whether the database at ``url`` has every migration applied."""
    return current(url) == head()
