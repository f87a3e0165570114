"""``berth serve --demo`` running: the pool loaded, then the stream played as its users would.

Admission itself is the ordinary loop's job; the demo only submits Jobs, reports their
checkpoints and finishes them after their run time. ``Demo.advance`` does everything due
by a given number of seconds since the start, so a test can drive it, and the loop, on a
virtual clock; ``run_demo`` drives it from the real one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime

from sqlalchemy.orm import Session

from admission.intake.workloads import finish_workload, submit_workload
from admission.simulate.scenario import RUNTIME_ANNOTATION, parse_duration
from berth.demo.opening import LOCAL_QUEUE
from berth.demo.pool import QUEUES
from berth.demo.stream import DemoCheckpoint, DemoEvent, DemoJob, JobStream, pool_text
from quota.core.errors import BerthError
from quota.core.metering import IntervalEnd
from quota.core.workload import WorkloadState
from quota.ledger.apply import apply_objects
from quota.ledger.checkpoints import record_checkpoint
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts

log = logging.getLogger(__name__)

SessionScope = Callable[[], AbstractContextManager[Session]]
ACTOR = "demo"
_UNFINISHED = [WorkloadState.PENDING, WorkloadState.ADMITTED, WorkloadState.EVICTING,
               WorkloadState.DEACTIVATED]


class Demo:
    """The demo's users on one ledger: what they have done up to ``advance(seconds)``."""

    def __init__(self, sessions: SessionScope, *, seed: int = 42, max_pending: int = 60) -> None:
        self._sessions = sessions
        self._stream = JobStream(seed)
        self._upcoming: DemoEvent = next(self._stream)
        self._max_pending = max_pending

    def start(self, now: datetime) -> None:
        """Load the pool; end what an earlier demo on this ledger left, so that the
        opening's names (the README's) are free again."""
        with self._sessions() as session:
            ledger = Ledger(session)
            apply_objects(ledger, parse_texts([("demo-pool", pool_text())]), actor=ACTOR)
            left = [w for w in ledger.list_workloads(_UNFINISHED) if w.namespace in LOCAL_QUEUE]
            for workload in left:
                finish_workload(ledger, workload.namespace, workload.name, now=now,
                                actor=ACTOR, end=IntervalEnd.DELETED)
        if left:
            log.info("demo: ended %d workloads an earlier demo left", len(left))

    def advance(self, seconds: float, now: datetime) -> None:
        """Play every event due by ``seconds`` after the start, then finish what ran its
        time. While ``max_pending`` workloads wait, arriving Jobs are skipped, not queued
        up for later, so a long-running demo stays readable."""
        crowded = self._pending() >= self._max_pending
        while self._upcoming.at <= seconds:
            event = self._upcoming
            if isinstance(event, DemoCheckpoint):
                self._checkpoint(event, now)
            elif not crowded:
                self._submit(event, now)
            self._upcoming = next(self._stream)
        self._finish_due(now)

    def _submit(self, job: DemoJob, now: datetime) -> None:
        try:
            with self._sessions() as session:
                submit_workload(Ledger(session), job.manifest, now=now, actor=ACTOR)
        except BerthError as exc:
            log.debug("demo: %s not submitted: %s", job.key, exc.message)

    def _checkpoint(self, event: DemoCheckpoint, now: datetime) -> None:
        namespace, name = event.key.split("/")
        try:
            with self._sessions() as session:
                record_checkpoint(session, namespace, name, at=now,
                                  location=f"s3://demo-checkpoints/{event.key}",
                                  now=now, actor=ACTOR)
        except BerthError as exc:  # it finished already
            log.debug("demo: %s checkpoint not recorded: %s", event.key, exc.message)

    def _pending(self) -> int:
        with self._sessions() as session:
            return len(Ledger(session).list_workloads([WorkloadState.PENDING]))

    def _finish_due(self, now: datetime) -> None:
        """Finish every admitted workload whose run time has passed."""
        with self._sessions() as session:
            running = Ledger(session).list_workloads([WorkloadState.ADMITTED])
        for workload in running:
            runtime = workload.annotations.get(RUNTIME_ANNOTATION)
            if runtime is None or workload.admitted_at is None:
                continue
            if workload.admitted_at + parse_duration(runtime) <= now:
                with self._sessions() as session:
                    finish_workload(Ledger(session), workload.namespace, workload.name,
                                    now=now, actor=ACTOR)


def _utcnow() -> datetime:
    return datetime.now(UTC)


async def run_demo(
    sessions: SessionScope,
    stop: asyncio.Event,
    *,
    seed: int = 42,
    now_fn: Callable[[], datetime] = _utcnow,
    tick: float = 1.0,
    max_pending: int = 60,
) -> None:
    """Load the demo pool, then play the stream on the real clock until ``stop`` is set."""
    demo = Demo(sessions, seed=seed, max_pending=max_pending)
    await asyncio.to_thread(demo.start, now_fn())
    started = time.monotonic()
    log.info("demo: pool loaded (%d queues); feeding jobs", len(QUEUES))
    while not stop.is_set():
        await asyncio.to_thread(demo.advance, time.monotonic() - started, now_fn())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), tick)
