"""``berth mcp``: the read-only MCP server (``api.mcp``) over stdio, for an AI assistant
started on the operator's machine (Claude Desktop, any MCP client).

It reads the ledger directly, with the settings' database, rather than through a running
server's REST API: the tools then run the very code the REST reads run, in one process the
client starts and stops, with no server, URL or token to configure. It sees every
namespace, as whoever holds the database's credentials can; a tenant reaches the same
tools over HTTP at ``/mcp`` with its read token, limited to its namespaces. Every
transaction is read-only, and the ledger is not migrated (a write, refused).
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio

from api import mcp
from api.deps import AppContext, Readiness
from berth import settings
from berth.database import Database
from quota.ledger.reads.queue_cache import QuotaObjectCache


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "mcp", help="serve the read-only MCP tools over stdio (for an AI assistant)"
    )
    return parser


def run(args: argparse.Namespace) -> int:
    # Standard output carries the protocol; logging (``berth.cli.main``) writes to stderr.
    database = Database(settings.load(vars(args)).database)
    database.open(migrate_to_head=False)
    try:
        context = AppContext(
            session_scope=database.session, readiness=lambda: Readiness(True, "stdio")
        )
        server = mcp.build(context, mcp.stdio_caller, QuotaObjectCache())
        anyio.run(server.run_stdio_async)
        return 0
    finally:
        database.close()
