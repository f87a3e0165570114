"""``berth serve``: open the ledger (embedded PostgreSQL by default), migrate, serve the API."""

from __future__ import annotations

import argparse
import logging

import sqlalchemy as sa
import uvicorn

from api.app import create_app
from api.deps import AppContext, Readiness
from berth import migrate, settings
from berth.database import Database

log = logging.getLogger("berth")


def run(args: argparse.Namespace) -> int:
    config = settings.load(
        database_url=args.database_url, home=args.home, host=args.host, port=args.port
    )
    database = Database(config)
    database.open()
    try:
        log.info("ledger: %s (migrations at head)", database.description)
        app = create_app(AppContext(session_scope=database.session, readiness=_readiness(database)))
        log.info("API and health checks on http://%s:%d (readiness: /readyz)", config.host, config.port)
        uvicorn.run(app, host=config.host, port=config.port, log_level="info")
    finally:
        database.close()
        log.info("ledger closed%s", "; embedded PostgreSQL stopped" if config.database_url is None else "")
    return 0


def _readiness(database: Database) -> ReadinessCheck:
    return ReadinessCheck(database)


class ReadinessCheck:
    """Database reachable and schema at the newest migration."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def __call__(self) -> Readiness:
        try:
            with self.database.engine.connect() as connection:
                connection.execute(sa.text("SELECT 1"))
        except sa.exc.SQLAlchemyError as exc:
            return Readiness(False, f"database unreachable: {exc}")
        if not migrate.at_head(self.database.url):
            return Readiness(False, "database schema is not at the newest migration")
        return Readiness(True, self.database.description)
