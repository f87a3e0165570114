"""Alembic environment: migrate the database named in the configuration, online only."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine, pool

from quota.ledger.schema import Base


def _migrate(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        compare_type=True,
        compare_server_default=True,
        transaction_per_migration=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run() -> None:
    config = context.config
    # A caller may lend its own connection (tests, readiness checks) via config.attributes.
    lent = config.attributes.get("connection")
    if isinstance(lent, Connection):
        _migrate(lent)
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("migrations.config(url) sets sqlalchemy.url; it is missing")
    engine = create_engine(url, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            _migrate(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("offline (--sql) migrations are not supported; give a database URL")
run()
