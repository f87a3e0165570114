"""Who runs the admission loop: one leader among the replicas, by a lease in the ledger.

``Leadership`` is the small interface the loop needs. ``LedgerLease`` keeps the lease in the
``loop_leader`` row: the holder, the backend pid of its lease connection and when the lease
ends, all on the database's clock (so replicas' clocks do not matter). The loop renews it
itself, before its cycles (``held``), so a leader that stops making progress — frozen by
SIGSTOP, or stuck in a cycle — loses it when it runs out; a follower takes it over then, or
at once when the holder's connection is gone (a crashed process). A resumed old leader
finds the lease taken and stops; should a cycle of it be in flight, the fencing term the
loop checks in every decision transaction refuses its commit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

import psycopg

from quota.core.errors import DatabaseUnavailable
from quota.ledger.connect import ConnectionLimits, libpq_options, libpq_url

log = logging.getLogger(__name__)

LEDGER_LEASE = "the ledger's leader lease"
CHECK_TIMEOUT = 5.0  # seconds: a leader whose database does not answer is not leading


@dataclass(frozen=True, slots=True)
class LeaderView:
    """What this replica last saw of leadership (for ``/readyz`` and ``GET /api/v1/leader``)."""

    leading: bool
    holder: str | None = None  # who holds the lease, as last seen
    live: bool = False  # whether that lease was in force when seen
    seen_at: float | None = None  # monotonic time of the observation
    error: str | None = None  # why the last attempt to look failed
    since: datetime | None = None  # when the holder took the lease, where that is known
    lease: str = "the leader lease"  # where the lease is kept, for the sentences below

    def why_not(self) -> str | None:
        """Why this replica does not lead, in a sentence; ``None`` when it does."""
        if self.leading:
            return None
        if self.error is not None:
            return self.error
        if self.seen_at is None:
            return f"this replica has not tried to take {self.lease} yet"
        if self.live and self.holder:
            return f"{self.holder} leads: it holds {self.lease} and renews it"
        if self.holder:
            return f"the lease of {self.holder} ran out; this replica takes {self.lease} next"
        return f"nobody holds {self.lease}; this replica takes it at its next try"


class Leadership(Protocol):
    identity: str  # this replica, as the lease names its holder
    renew_seconds: float  # the loop must call ``held`` at least this often

    async def acquire(self) -> bool:
        """Try once to become leader (never blocks for long); whether this replica leads."""

    async def held(self) -> bool:
        """Whether this replica still leads; renews the lease when a renewal is due."""

    async def release(self) -> None:
        """Stop leading (idempotent)."""

    def view(self) -> LeaderView:
        """What this replica last saw of leadership."""


_ENSURE_ROW = (
    "INSERT INTO loop_leader (id, term, holder, since) VALUES (1, 0, '', now()) "
    "ON CONFLICT (id) DO NOTHING"
)
_HOLDER_ALIVE = "EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = loop_leader.holder_pid)"
_TAKE = (
    "UPDATE loop_leader SET holder = %(me)s, holder_pid = pg_backend_pid(), "
    "lease_expires = clock_timestamp() + make_interval(secs => %(seconds)s) "
    "WHERE id = 1 AND (holder = %(me)s OR lease_expires IS NULL "
    f"OR lease_expires < clock_timestamp() OR NOT {_HOLDER_ALIVE}) RETURNING holder"
)
_RENEW = (
    "UPDATE loop_leader SET holder_pid = pg_backend_pid(), "
    "lease_expires = clock_timestamp() + make_interval(secs => %(seconds)s) "
    "WHERE id = 1 AND holder = %(me)s RETURNING holder"
)
_OBSERVE = (
    "SELECT holder, lease_expires IS NOT NULL AND lease_expires >= clock_timestamp() "
    f"AND {_HOLDER_ALIVE} FROM loop_leader WHERE id = 1"
)
_RELEASE = "UPDATE loop_leader SET lease_expires = NULL WHERE id = 1 AND holder = %(me)s"


class LedgerLease:
    """Leadership by a lease in the ledger's ``loop_leader`` row, on a dedicated connection."""

    def __init__(
        self,
        url: str,
        *,
        identity: str,
        duration_seconds: float,  # berth.settings: loop.lease_seconds
        limits: ConnectionLimits | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = libpq_url(url)
        self.identity = identity
        self.duration = duration_seconds
        self.renew_seconds = duration_seconds / 3
        self.limits = limits or ConnectionLimits(statement_seconds=CHECK_TIMEOUT)
        self.monotonic = monotonic
        self._connection: psycopg.AsyncConnection[tuple[object, ...]] | None = None
        self._leading = False
        self._renewed_at = 0.0
        self._view = LeaderView(leading=False, lease=LEDGER_LEASE)
        self._since: datetime | None = None  # when this replica took the lease

    async def acquire(self) -> bool:
        if self._leading and await self.held():
            return True
        params = {"me": self.identity, "seconds": self.duration}
        try:
            async with asyncio.timeout(CHECK_TIMEOUT):
                connection = await self._connect()
                await connection.execute(_ENSURE_ROW)
                taken = await (await connection.execute(_TAKE, params)).fetchone()
                seen = (
                    (self.identity, True)
                    if taken
                    else await (await connection.execute(_OBSERVE)).fetchone()
                )
        except (psycopg.OperationalError, TimeoutError) as exc:
            # Say so, so the runner backs off and logs each retry instead of polling quietly
            # as if another replica led.
            await self._drop()
            self._view = LeaderView(
                leading=False,
                seen_at=self.monotonic(),
                lease=LEDGER_LEASE,
                error=f"cannot take {LEDGER_LEASE}: {exc}",
            )
            raise DatabaseUnavailable(
                f"cannot reach PostgreSQL to take the leader lease: {exc or 'timed out'}"
            ) from exc
        except psycopg.Error as exc:
            await self._drop()
            self._view = LeaderView(
                leading=False,
                seen_at=self.monotonic(),
                lease=LEDGER_LEASE,
                error=f"cannot take {LEDGER_LEASE}: {exc}",
            )
            return False
        if taken:
            if not self._leading:
                log.info("took the leader lease as %s", self.identity)
                self._since = datetime.now(UTC)
            self._leading, self._renewed_at = True, self.monotonic()
        holder = str(seen[0]) if seen and seen[0] else None
        self._view = LeaderView(
            leading=self._leading, holder=holder, live=bool(seen and seen[1]),
            seen_at=self.monotonic(), since=self._since if self._leading else None,
            lease=LEDGER_LEASE,
        )  # fmt: skip
        return self._leading

    async def held(self) -> bool:
        if not self._leading or self._connection is None or self._connection.closed:
            return self._lost()
        if self.monotonic() - self._renewed_at < self.renew_seconds:
            return True
        try:
            async with asyncio.timeout(CHECK_TIMEOUT):
                cursor = await self._connection.execute(
                    _RENEW, {"me": self.identity, "seconds": self.duration}
                )
                renewed = await cursor.fetchone()
        except (psycopg.Error, TimeoutError):
            await self._drop()
            return self._lost()
        if renewed is None:
            return self._lost()
        self._renewed_at = self.monotonic()
        self._view = LeaderView(
            leading=True, holder=self.identity, live=True, seen_at=self._renewed_at,
            since=self._since, lease=LEDGER_LEASE,
        )  # fmt: skip
        return True

    async def release(self) -> None:
        if self._connection is not None and not self._connection.closed and self._leading:
            with contextlib.suppress(psycopg.Error, TimeoutError):
                async with asyncio.timeout(CHECK_TIMEOUT):
                    await self._connection.execute(_RELEASE, {"me": self.identity})
        self._leading = False
        self._view = LeaderView(leading=False, seen_at=self.monotonic(), lease=LEDGER_LEASE)
        await self._drop()

    def view(self) -> LeaderView:
        return self._view

    async def _connect(self) -> psycopg.AsyncConnection[tuple[object, ...]]:
        if self._connection is None or self._connection.closed:
            self._connection = await psycopg.AsyncConnection.connect(
                self.url, autocommit=True, **libpq_options(self.limits)
            )
        return self._connection

    def _lost(self) -> bool:
        if self._leading:
            log.warning("lost the leader lease (%s)", self.identity)
        self._leading = False
        self._view = LeaderView(leading=False, seen_at=self.monotonic(), lease=LEDGER_LEASE)
        return False

    async def _drop(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(psycopg.Error):
                await self._connection.close()
            self._connection = None
