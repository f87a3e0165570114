"""A shape in real time through Berth's durable loop, as ``berth serve`` runs it.

The loop runs under ``run_while_leading`` (leader lock, NOTIFY wake-ups, the same runner
``berth serve`` starts); workloads are submitted through the ledger at their arrival times
(``submit_workloads``: due arrivals in a few statements, each created at its own arrival
time; how late each committed is reported as the driver's lag); the simulated runner
finishes each admitted workload after its run time. The figures are read back from the
ledger at the end; a workload counts as admitted when its admission was actuated.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy import text
from sqlalchemy.orm import sessionmaker

from admission.intake.workloads import submit_workloads
from admission.loop.leader import LedgerLease
from admission.loop.loop import AdmissionLoop
from admission.loop.runner import run_while_leading
from berth.bench.figures import RunRecord, WorkloadTimes
from berth.bench.ledger import apply_text
from berth.bench.runner import SessionScope, SimulatedRunner
from berth.bench.shapes import Arrival, Shape
from berth.serve import runner_config
from berth.settings import LoopSettings
from quota.ledger.notify import ChangeListener
from quota.ledger.repository import Ledger

ACTOR = "bench"
SUBMITTERS = 2  # concurrent submitting clients (Kueue's generator creates concurrently too)
CHUNK = 500  # most arrivals per submitting transaction


@dataclass(frozen=True, slots=True)
class Progress:
    elapsed: float
    submitted: int
    admitted: int
    finished: int
    total: int


async def run_shape(
    url: str, shape: Shape, on_progress: Callable[[Progress], None] | None = None
) -> RunRecord:
    """Run ``shape`` against the (fresh, migrated) ledger at ``url``."""
    engine = sa.create_engine(url, pool_size=8)
    try:
        sessions = sessionmaker(engine, expire_on_commit=False)
        apply_text(sessions, shape.manifests())
        return await _Run(url, sessions.begin, shape.arrivals()).run(on_progress)
    finally:
        engine.dispose()


class _Run:
    def __init__(self, url: str, sessions: SessionScope, arrivals: Sequence[Arrival]) -> None:
        self.url = url
        self.sessions = sessions
        self.arrivals = arrivals
        self.runner = SimulatedRunner(sessions, {a.key: a.runtime_ms for a in arrivals})
        self.cycles: list[float] = []
        self.submitted = 0
        self.lags: list[float] = []

    async def run(self, on_progress: Callable[[Progress], None] | None) -> RunRecord:
        stop = asyncio.Event()
        loop = AdmissionLoop(self.sessions, self.runner)
        # berth serve's defaults, never the user's settings, so runs compare (NOTIFY wakes
        # the loop on every change anyway, whatever the interval).
        defaults = LoopSettings()
        config = runner_config(
            defaults, holder="berth-bench", on_cycle=lambda seconds, _: self.cycles.append(seconds)
        )
        leading = asyncio.create_task(
            run_while_leading(
                loop,
                LedgerLease(
                    self.url, identity="berth-bench", duration_seconds=defaults.lease_seconds
                ),
                lambda: ChangeListener(self.url),
                config,
                stop,
            )
        )
        started, start = time.monotonic(), datetime.now(UTC)
        reporter = asyncio.create_task(self._report(on_progress, started, stop))
        try:
            await asyncio.gather(
                self._arrive(started, start), self.runner.run(len(self.arrivals), stop)
            )
        finally:
            stop.set()
            await leading
            await reporter
        return await asyncio.to_thread(self._record, start, started)

    async def _arrive(self, started: float, start: datetime) -> None:
        """Submit each arrival at its time, as concurrent clients would: arrivals due
        together go in chunks, each chunk one transaction, ``SUBMITTERS`` at once (while
        they are busy, what falls due joins the next chunk)."""
        slots = asyncio.Semaphore(SUBMITTERS)
        chunks: set[asyncio.Task[None]] = set()
        upcoming = 0
        while upcoming < len(self.arrivals):
            delay = started + self.arrivals[upcoming].at_ms / 1000 - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            now_ms = (time.monotonic() - started) * 1000
            batch = []
            while upcoming < len(self.arrivals) and self.arrivals[upcoming].at_ms <= now_ms:
                batch.append(self.arrivals[upcoming])
                upcoming += 1
            for first in range(0, len(batch), CHUNK):
                await slots.acquire()
                chunk = asyncio.create_task(
                    self._submit_chunk(batch[first : first + CHUNK], started, start, slots)
                )
                chunks.add(chunk)
                chunk.add_done_callback(chunks.discard)
        await asyncio.gather(*chunks)

    async def _submit_chunk(
        self,
        chunk: Sequence[Arrival],
        started: float,
        start: datetime,
        slots: asyncio.Semaphore,
    ) -> None:
        try:
            await asyncio.to_thread(self._submit, chunk, start)
            done = time.monotonic() - started
            self.lags.extend(max(0.0, done - a.at_ms / 1000) for a in chunk)
            self.submitted += len(chunk)
        finally:
            slots.release()

    def _submit(self, batch: Sequence[Arrival], start: datetime) -> None:
        docs = [(a.manifest(), start + timedelta(milliseconds=a.at_ms)) for a in batch]
        with self.sessions() as session:
            submit_workloads(Ledger(session), docs, actor=ACTOR)

    async def _report(
        self, on_progress: Callable[[Progress], None] | None, started: float, stop: asyncio.Event
    ) -> None:
        while on_progress is not None:
            on_progress(
                Progress(
                    time.monotonic() - started,
                    self.submitted,
                    len(self.runner.admitted_at),
                    self.runner.finished,
                    len(self.arrivals),
                )
            )
            if stop.is_set():
                return
            await asyncio.sleep(0.5)

    def _record(self, start: datetime, started: float) -> RunRecord:
        """The run as the ledger holds it; admission times as the runner saw them."""
        classes = {a.key: a.workload_class for a in self.arrivals}
        with self.sessions() as session:
            rows = session.execute(
                text(
                    "SELECT namespace || '/' || name, created_at, finished_at, eviction_count "
                    "FROM workloads"
                )
            ).all()
            cpu_used = session.execute(
                text(
                    "SELECT COALESCE(SUM(amount * EXTRACT(EPOCH FROM "
                    "(COALESCE(ended_at, now()) - started_at))), 0) "
                    "FROM usage_intervals WHERE resource = 'cpu'"
                )
            ).scalar_one()
            nominal = session.execute(
                text(
                    "SELECT COALESCE(SUM(nominal), 0) FROM quotas "
                    "WHERE owner_kind = 'ClusterQueue' AND resource = 'cpu'"
                )
            ).scalar_one()
        admitted = self.runner.admitted_at
        return RunRecord(
            tuple(
                WorkloadTimes(
                    classes[key],
                    (created - start).total_seconds(),
                    admitted[key] - started if key in admitted else None,
                    None if finished is None else (finished - start).total_seconds(),
                    evictions,
                )
                for key, created, finished, evictions in rows
            ),
            cpu_used=float(cpu_used),
            nominal_milli=int(nominal),
            admissions=self.runner.admissions,
            cycles=tuple(self.cycles),
            lags=tuple(self.lags),
        )
