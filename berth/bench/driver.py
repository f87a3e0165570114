"""The arrival driver of a real-time run, in its own process: clients submitting workloads.

Workloads go into the ledger at their arrival times as concurrent clients would submit
them (``submit_workloads``: what falls due together in a few statements, each created at
its own arrival time); the loop hears of them by NOTIFY, as it hears of any client's. How
late each committed after its arrival time is the driver's lag: it counts as waiting
(``created_at`` is the arrival time) though Berth never saw the workload meanwhile.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from datetime import timedelta
from multiprocessing.sharedctypes import Synchronized

import sqlalchemy as sa
from sqlalchemy.orm import sessionmaker

from admission.intake.workloads import submit_workloads
from berth.bench.processes import POLL, Handshake, StartClock
from berth.bench.runner import SessionScope
from berth.bench.shapes import Arrival, Shape
from quota.ledger.repository import Ledger

SUBMITTERS = 2  # concurrent submitting clients (Kueue's generator creates concurrently too)
CHUNK = 500  # most arrivals per submitting transaction
NAP = 10 * POLL  # longest sleep between looks at the parent


def actor(pid: int) -> str:
    """Who the driver of process ``pid`` is in the ledger's audit log."""
    return f"bench-driver pid {pid}"


def drive(
    handshake: Handshake, url: str, shape: Shape, submitted: Synchronized[int]
) -> list[float]:
    """The driver process: submit every arrival on time; each one's lag (seconds)."""
    engine = sa.create_engine(url, pool_size=SUBMITTERS)
    try:
        with engine.connect():
            pass  # connect before t=0
        arrivals = shape.arrivals()
        clock = handshake.ready()
        driver = _Driver(sessionmaker(engine, expire_on_commit=False).begin, clock, submitted)
        asyncio.run(driver.arrive(arrivals, handshake))
        return driver.lags
    finally:
        engine.dispose()


class _Driver:
    def __init__(
        self, sessions: SessionScope, clock: StartClock, submitted: Synchronized[int]
    ) -> None:
        self.sessions = sessions
        self.clock = clock
        self.submitted = submitted
        self.lags: list[float] = []
        self.actor = actor(os.getpid())

    async def arrive(self, arrivals: Sequence[Arrival], handshake: Handshake) -> None:
        """Submit each arrival at its time: arrivals due together go in chunks, each chunk
        one transaction, ``SUBMITTERS`` at once (while they are busy, what falls due joins
        the next chunk)."""
        slots = asyncio.Semaphore(SUBMITTERS)
        chunks: set[asyncio.Task[None]] = set()
        upcoming = 0
        while upcoming < len(arrivals):
            handshake.check_parent()
            self._raise_failed(chunks)
            delay = arrivals[upcoming].at_ms / 1000 - self.clock.elapsed()
            if delay > 0:
                await asyncio.sleep(min(delay, NAP))
                continue
            now_ms = self.clock.elapsed() * 1000
            batch = []
            while upcoming < len(arrivals) and arrivals[upcoming].at_ms <= now_ms:
                batch.append(arrivals[upcoming])
                upcoming += 1
            for first in range(0, len(batch), CHUNK):
                await slots.acquire()
                chunk = asyncio.create_task(self._submit_chunk(batch[first : first + CHUNK], slots))
                chunks.add(chunk)
        await asyncio.gather(*chunks)

    def _raise_failed(self, chunks: set[asyncio.Task[None]]) -> None:
        """A submission that failed fails the driver now, not after the last arrival."""
        for chunk in list(chunks):
            if chunk.done():
                chunks.discard(chunk)
                chunk.result()

    async def _submit_chunk(self, chunk: Sequence[Arrival], slots: asyncio.Semaphore) -> None:
        try:
            await asyncio.to_thread(self._submit, chunk)
            done = self.clock.elapsed()
            self.lags.extend(max(0.0, done - a.at_ms / 1000) for a in chunk)
            self.submitted.value += len(chunk)
        finally:
            slots.release()

    def _submit(self, batch: Sequence[Arrival]) -> None:
        start = self.clock.wall
        docs = [(a.manifest(), start + timedelta(milliseconds=a.at_ms)) for a in batch]
        with self.sessions() as session:
            submit_workloads(Ledger(session), docs, actor=self.actor)
