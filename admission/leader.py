"""Who runs the admission loop: one leader among the replicas.

``Leadership`` is the small interface the loop needs; ``AdvisoryLockLeadership`` holds a
PostgreSQL session-level advisory lock on its own connection, so it works in standalone
mode. If that connection dies the server drops the lock and another replica takes over;
the old leader learns it from ``held()`` and, should a cycle be in flight, from the
fencing term the loop checks in every decision transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

import psycopg

from quota.errors import DatabaseUnavailable
from quota.ledger_notify import libpq_url

LEADER_LOCK = 7_266_400_000  # "berth" leadership; any fixed bigint shared by replicas
CHECK_TIMEOUT = 5.0  # seconds: a leader whose database does not answer is not leading


class Leadership(Protocol):
    async def acquire(self) -> bool:
        """Try once to become leader (never blocks for long); whether this replica leads."""

    async def held(self) -> bool:
        """Whether this replica still leads (checked before every cycle)."""

    async def release(self) -> None:
        """Stop leading (idempotent)."""


class AdvisoryLockLeadership:
    """Leadership by ``pg_try_advisory_lock`` on a dedicated connection."""

    def __init__(self, url: str, *, key: int = LEADER_LOCK) -> None:
        self.url = libpq_url(url)
        self.key = key
        self._connection: psycopg.AsyncConnection[tuple[object, ...]] | None = None
        self._leading = False

    async def acquire(self) -> bool:
        if self._leading and await self.held():
            return True
        try:
            if self._connection is None or self._connection.closed:
                self._connection = await psycopg.AsyncConnection.connect(
                    self.url, autocommit=True, connect_timeout=int(CHECK_TIMEOUT)
                )
            cursor = await self._connection.execute("SELECT pg_try_advisory_lock(%s)", (self.key,))
            row = await cursor.fetchone()
        except psycopg.OperationalError as exc:
            # The server is unreachable: say so, so the runner backs off and logs each retry
            # instead of polling quietly as if another replica led.
            await self._drop()
            raise DatabaseUnavailable(
                f"cannot reach PostgreSQL to take the leader lock: {exc}"
            ) from exc
        except psycopg.Error:
            await self._drop()
            return False
        self._leading = bool(row and row[0])
        return self._leading

    async def held(self) -> bool:
        if not self._leading or self._connection is None or self._connection.closed:
            return False
        try:
            async with asyncio.timeout(CHECK_TIMEOUT):
                cursor = await self._connection.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND pid = pg_backend_pid() AND classid = %s AND objid = %s AND objsubid = 1",
                    (self.key >> 32, self.key & 0xFFFFFFFF),
                )
                row = await cursor.fetchone()
        except (psycopg.Error, TimeoutError):
            await self._drop()
            return False
        self._leading = bool(row and row[0])
        return self._leading

    async def release(self) -> None:
        if self._connection is not None and not self._connection.closed and self._leading:
            with contextlib.suppress(psycopg.Error):
                await self._connection.execute("SELECT pg_advisory_unlock(%s)", (self.key,))
        await self._drop()

    async def _drop(self) -> None:
        self._leading = False
        if self._connection is not None:
            with contextlib.suppress(psycopg.Error):
                await self._connection.close()
            self._connection = None
