"""Wake-ups on ledger changes: LISTEN on the channel the ledger's triggers NOTIFY.

Triggers (migration 0002) notify ``berth_changes`` with the table name, in the writing
transaction, so a wake-up always follows a commit. Notifications are hints: a missed one
costs at most one timer period, never a decision.
"""

from __future__ import annotations

import asyncio
import contextlib

import psycopg

from quota.ledger.connect import ConnectionLimits, libpq_options, libpq_url

CHANNEL = "berth_changes"


class ChangeListener:
    """Holds one LISTEN connection; ``wait`` returns early when a change is notified."""

    def __init__(
        self, url: str, limits: ConnectionLimits | None = None, *, channel: str = CHANNEL
    ) -> None:
        self.url = libpq_url(url)
        self.channel = channel
        self.limits = limits or ConnectionLimits()
        self._connection: psycopg.AsyncConnection[tuple[object, ...]] | None = None
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.failed: BaseException | None = None

    async def open(self) -> None:
        self._connection = await psycopg.AsyncConnection.connect(
            self.url, autocommit=True, **libpq_options(self.limits)
        )
        await self._connection.execute(f"LISTEN {self.channel}")
        self._task = asyncio.create_task(self._listen(self._connection))

    async def _listen(self, connection: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
        try:
            async for _ in connection.notifies():
                self._changed.set()
        except psycopg.Error as exc:
            self.failed = exc
            self._changed.set()

    async def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a change; whether one came."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), seconds)
        changed = self._changed.is_set()
        self._changed.clear()
        if self.failed is not None:
            raise self.failed
        return changed

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, psycopg.Error):
                await self._task
            self._task = None
        if self._connection is not None:
            with contextlib.suppress(psycopg.Error):
                await self._connection.close()
            self._connection = None
