"""A shape in real time through Berth's durable loop, as ``berth serve`` runs it.

This process runs the loop under ``run_while_leading`` (leader lock, NOTIFY wake-ups, the
same runner ``berth serve`` starts) and nothing else of weight. The arrival driver
(``driver``) and the simulated runner (``runner``) run in their own processes and meet the
loop only in PostgreSQL, as clients and a Job controller would (``processes``). The loop's
actuator here notes when each admission was actuated, the workload's admission time, and
sends the runner a NOTIFY (where a Kubernetes actuator would patch the Job). The figures are
read back from the ledger at the end; the driver's lag (a submission's commit after its
arrival time) and the runner's (a finish's commit after its due time, admission actuated +
run time) are reported beside them, and this process's resident memory once every workload
has finished (``berth serve``'s as far as the loop goes: no REST API is served here).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import psycopg
import sqlalchemy as sa
from sqlalchemy import text
from sqlalchemy.orm import sessionmaker

from admission.loop.actuation import ADMIT, EVICT, Actuation
from admission.loop.leader import LedgerLease
from admission.loop.loop import AdmissionLoop
from admission.loop.runner import run_while_leading
from berth.bench.driver import drive
from berth.bench.figures import RunRecord, WorkloadTimes
from berth.bench.ledger import apply_text
from berth.bench.processes import (
    CONTEXT,
    START_LEAD,
    ChildFailed,
    Children,
    StartClock,
    memory_of,
)
from berth.bench.runner import ACTUATED, SessionScope, run_cluster
from berth.bench.shapes import Shape
from berth.serve import runner_config
from berth.settings import LoopSettings
from quota.ledger.connect import libpq_url
from quota.ledger.notify import ChangeListener

DRIVER = "arrival driver"
RUNNER = "simulated runner"
REPORT_EVERY = 0.5  # seconds between progress reports
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Progress:
    elapsed: float
    submitted: int
    admitted: int
    finished: int
    total: int
    pids: dict[str, int] = field(default_factory=dict)  # the run's processes by role


class ActuationClock:
    """The loop's actuator in the bench: notes when each admission was actuated (monotonic)
    and tells the simulated runner by a NOTIFY, as a Kubernetes actuator's patch tells the
    Job controller."""

    def __init__(self, url: str, keys: Collection[str]) -> None:
        self.url = url
        self.keys = keys
        self.connection: psycopg.AsyncConnection[tuple[object, ...]] | None = None
        self.running: set[str] = set()
        self.admitted_at: dict[str, float] = {}  # key -> its last admission
        self.admissions = 0

    async def actuate(self, actions: Sequence[Actuation]) -> None:
        now = time.monotonic()
        changed = False
        for action in actions:
            if action.action == ADMIT and action.key in self.keys:
                if action.key in self.running:
                    continue  # re-actuated after a restart: already running
                self.running.add(action.key)
                self.admitted_at[action.key] = now
                self.admissions += 1
                changed = True
            elif action.action == EVICT:
                self.running.discard(action.key)
                changed = True
        if changed:
            if self.connection is None:
                self.connection = await psycopg.AsyncConnection.connect(
                    libpq_url(self.url), autocommit=True
                )
            await self.connection.execute("SELECT pg_notify(%s, '')", (ACTUATED,))

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()


async def run_shape(
    url: str, shape: Shape, on_progress: Callable[[Progress], None] | None = None
) -> RunRecord:
    """Run ``shape`` against the (fresh, migrated) ledger at ``url``."""
    engine = sa.create_engine(url, pool_size=4)
    try:
        sessions = sessionmaker(engine, expire_on_commit=False)
        apply_text(sessions, shape.manifests())
        return await _Run(url, sessions.begin, shape).run(on_progress)
    finally:
        engine.dispose()


class _Run:
    def __init__(self, url: str, sessions: SessionScope, shape: Shape) -> None:
        self.url = url
        self.sessions = sessions
        self.shape = shape
        self.runtimes = {a.key: a.runtime_ms for a in shape.arrivals()}
        self.actuator = ActuationClock(url, self.runtimes.keys())
        self.cycles: list[float] = []
        self.submitted = CONTEXT.Value("q", 0, lock=False)
        self.finished = CONTEXT.Value("q", 0, lock=False)
        self.pids: dict[str, int] = {"loop": os.getpid()}

    async def run(self, on_progress: Callable[[Progress], None] | None) -> RunRecord:
        stop = asyncio.Event()
        loop = AdmissionLoop(self.sessions, self.actuator)
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
        reporter: asyncio.Task[None] | None = None
        try:
            with Children() as children:
                children.spawn(DRIVER, drive, self.url, self.shape, self.submitted)
                children.spawn(RUNNER, run_cluster, self.url, self.shape, self.finished)
                await _unless_stopped(children.ready(), leading)
                self.pids.update(children.pids)
                clock = StartClock.after(START_LEAD)
                children.start(clock)
                reporter = asyncio.create_task(self._report(on_progress, clock, stop))
                results = await _unless_stopped(children.results(), leading)
                # Every workload has finished; the loop still leads, as berth serve would.
                memory = memory_of(self.pids["loop"])
        finally:
            stop.set()
            await leading
            await self.actuator.close()
            if reporter is not None:
                await reporter
        lags, recorded = results[DRIVER], results[RUNNER]
        assert isinstance(lags, list) and isinstance(recorded, dict)
        record = await asyncio.to_thread(self._record, clock, lags, recorded)
        return replace(record, memory=memory)

    async def _report(
        self, on_progress: Callable[[Progress], None] | None, clock: StartClock, stop: asyncio.Event
    ) -> None:
        while on_progress is not None:
            on_progress(
                Progress(
                    max(0.0, clock.elapsed()),
                    self.submitted.value,
                    len(self.actuator.admitted_at),
                    self.finished.value,
                    len(self.runtimes),
                    dict(self.pids),
                )
            )
            if stop.is_set():
                return
            await asyncio.sleep(REPORT_EVERY)

    def _record(
        self, clock: StartClock, lags: Sequence[float], recorded: dict[str, float]
    ) -> RunRecord:
        """The run as the ledger holds it; admission times as the loop actuated them."""
        classes = {a.key: a.workload_class for a in self.shape.arrivals()}
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
            writers = session.execute(
                text(
                    "SELECT actor, count(*) FROM audit_log WHERE kind = 'Workload' "
                    "GROUP BY actor ORDER BY actor"
                )
            ).all()
        admitted = {key: at - clock.monotonic for key, at in self.actuator.admitted_at.items()}
        start = clock.wall
        return RunRecord(
            tuple(
                WorkloadTimes(
                    classes[key],
                    (created - start).total_seconds(),
                    admitted.get(key),
                    None if finished is None else (finished - start).total_seconds(),
                    evictions,
                )
                for key, created, finished, evictions in rows
            ),
            cpu_used=float(cpu_used),
            nominal_milli=int(nominal),
            admissions=self.actuator.admissions,
            cycles=tuple(self.cycles),
            lags=tuple(lags),
            runner_lags=tuple(
                max(0.0, at - admitted[key] - self.runtimes[key] / 1000)
                for key, at in recorded.items()
                if key in admitted
            ),
            processes=dict(self.pids),
            writers={actor: int(count) for actor, count in writers},
        )


async def _unless_stopped(waiting: Awaitable[T], leading: asyncio.Task[None]) -> T:
    """``waiting``'s result, unless the loop stops first (it raises, or it ended)."""
    task = asyncio.ensure_future(waiting)
    await asyncio.wait({task, leading}, return_when=asyncio.FIRST_COMPLETED)
    if not task.done():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        leading.result()  # the loop's own error
        raise ChildFailed("the admission loop stopped before the run ended")
    return task.result()
