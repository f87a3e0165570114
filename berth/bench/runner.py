"""The simulated cluster of a real-time run, in its own process: it runs what the loop
admitted, then finishes it, as a Job controller and its pods would.

It learns of admissions from the ledger, as a Job controller learns that a Job was
unsuspended: woken by the NOTIFY the loop's actuator sends on ``ACTUATED`` after each
actuation (the loop's own commits notify no one) or at least every ``NAP``, it reads the
rows written since it last looked (``changes.mark``), starts a run (its class's run time)
for each workload newly admitted (a new ``admitted_at``: preempted and admitted again runs
again; a run whose admission was evicted is dropped when it ends). When a run ends the workload is
finished through the ledger, many at a time (``finish_locked``: a few statements per
batch, so a burst of ends is recorded at once). Rows are locked ``SKIP LOCKED``: a row an
admission cycle is writing is finished on the next pass instead of waiting (so the two
never deadlock); a row found no longer admitted by that run was evicted meanwhile and
runs again when admitted again. The parent gets, per workload, when its finish committed
(seconds after t=0).
"""

from __future__ import annotations

import asyncio
import heapq
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from multiprocessing.sharedctypes import Synchronized

import sqlalchemy as sa
from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from berth.bench.processes import Handshake, StartClock
from berth.bench.shapes import Shape
from quota.core.workload import WorkloadState
from quota.ledger.changes import mark
from quota.ledger.lifecycle import finish_locked
from quota.ledger.notify import ChangeListener

SessionScope = Callable[[], AbstractContextManager[Session]]
TICK = 0.005  # seconds between looks for runs that ended
NAP = 0.5  # longest wait for a change while nothing is due
ADMITTED = str(WorkloadState.ADMITTED)
ACTUATED = "berth_bench_actuated"  # the channel the bench's actuator notifies


def actor(pid: int) -> str:
    """Who the runner of process ``pid`` is in the ledger's audit log."""
    return f"bench-runner pid {pid}"


def run_cluster(
    handshake: Handshake, url: str, shape: Shape, finished: Synchronized[int]
) -> dict[str, float]:
    """The runner process: run and finish every workload; when each finish committed."""
    runtimes = {a.key: a.runtime_ms for a in shape.arrivals()}
    engine = sa.create_engine(url, pool_size=2)
    try:
        return asyncio.run(_serve(handshake, url, engine, runtimes, finished))
    finally:
        engine.dispose()


async def _serve(
    handshake: Handshake,
    url: str,
    engine: sa.Engine,
    runtimes: Mapping[str, int],
    finished: Synchronized[int],
) -> dict[str, float]:
    listener = ChangeListener(url, channel=ACTUATED)
    await listener.open()
    try:
        runner = SimulatedRunner(sessionmaker(engine, expire_on_commit=False).begin, runtimes)
        await asyncio.to_thread(runner.begin)
        clock = await asyncio.to_thread(handshake.ready)
        await runner.run(clock, listener, handshake, finished)
        return runner.recorded
    finally:
        await listener.close()


class SimulatedRunner:
    def __init__(self, sessions: SessionScope, runtimes: Mapping[str, int]) -> None:
        self.sessions = sessions
        self.runtimes = runtimes  # ms by key
        self.since = 0  # change mark: rows written at or after it are read next
        self.running: dict[str, datetime] = {}  # key -> admitted_at of the run in progress
        self.heap: list[tuple[float, str, datetime]] = []  # (end, key, admitted_at)
        self.recorded: dict[str, float] = {}  # key -> seconds after t=0 its finish committed
        self.actor = actor(os.getpid())

    def begin(self) -> None:
        with self.sessions() as session:
            self.since = mark(session)

    async def run(
        self,
        clock: StartClock,
        listener: ChangeListener,
        handshake: Handshake,
        finished: Synchronized[int],
    ) -> None:
        """Run and finish workloads until every one has finished."""
        changed = True
        while len(self.recorded) < len(self.runtimes):
            handshake.check_parent()
            if changed:
                self._started(await asyncio.to_thread(self._admissions), clock)
            now = clock.elapsed()
            ended: list[tuple[str, datetime]] = []
            while self.heap and self.heap[0][0] <= now:
                _, key, admitted = heapq.heappop(self.heap)
                if self.running.get(key) == admitted:
                    ended.append((key, admitted))
            if ended:
                done, locked = await asyncio.to_thread(self._finish, ended)
                committed = clock.elapsed()
                for key in done:
                    self.recorded[key] = committed
                    del self.running[key]
                for key, admitted in locked:  # being written by a cycle: next pass
                    heapq.heappush(self.heap, (clock.elapsed(), key, admitted))
                finished.value = len(self.recorded)
            wait = self.heap[0][0] - clock.elapsed() if self.heap else NAP
            changed = await listener.wait(min(max(wait, TICK), NAP))

    def _started(self, rows: Sequence[tuple[str, datetime]], clock: StartClock) -> None:
        """Start a run for each new admission. An evicted workload's run is left to end:
        ``_finish`` finds the row no longer admitted by that run and drops it."""
        now = clock.elapsed()
        for key, admitted in rows:
            new = key in self.runtimes and key not in self.recorded
            if new and self.running.get(key) != admitted:
                self.running[key] = admitted
                heapq.heappush(self.heap, (now + self.runtimes[key] / 1000, key, admitted))

    def _admissions(self) -> list[tuple[str, datetime]]:
        """Each admitted workload row written since the last look: key, admitted_at."""
        with self.sessions() as session:
            since, self.since = self.since, mark(session)
            rows = session.execute(
                text(
                    "SELECT namespace || '/' || name, admitted_at FROM workloads "
                    "WHERE change_xid >= :since AND state = :admitted"
                ),
                {"since": since, "admitted": ADMITTED},
            ).all()
        return [(key, admitted) for key, admitted in rows]

    def _finish(
        self, ended: Sequence[tuple[str, datetime]]
    ) -> tuple[set[str], list[tuple[str, datetime]]]:
        """Finish the ended runs whose admission still holds; the keys finished, and the
        runs whose rows were locked (tried again). A row admitted otherwise was evicted
        (and perhaps admitted again) meanwhile: the change read says so."""
        now = datetime.now(UTC)
        admitted = dict(ended)
        namespaces, names = zip(*(key.split("/", 1) for key in admitted), strict=True)
        with self.sessions() as session:
            rows = session.execute(
                text(
                    "SELECT id, namespace, name, state, version, admitted_at FROM workloads "
                    "WHERE state <> :finished AND (namespace, name) IN (SELECT * FROM unnest("
                    "CAST(:namespaces AS text[]), CAST(:names AS text[]))) "
                    "ORDER BY id FOR UPDATE SKIP LOCKED"
                ),
                {
                    "finished": str(WorkloadState.FINISHED),
                    "namespaces": list(namespaces),
                    "names": list(names),
                },
            ).mappings().all()
            seen = {f"{row['namespace']}/{row['name']}": row for row in rows}
            running = [
                row
                for key, row in seen.items()
                if row["state"] == ADMITTED and row["admitted_at"] == admitted[key]
            ]
            finish_locked(session, running, now=now, actor=self.actor)
        done = {f"{row['namespace']}/{row['name']}" for row in running}
        return done, [(key, at) for key, at in ended if key not in seen]
