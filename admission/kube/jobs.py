"""The workload watcher, one per kind (``kinds``): objects naming a queue become workloads,
finished ones release their quota, and one that started unsuspended (no webhook, or the
webhook failed open) is stopped. Objects owned by another kind Berth queues (a JobSet's
Jobs, a RayJob's RayCluster) are admitted with their owner and left alone here.

Every replica of Berth runs these watchers (a follower's ledger is the leader's), so each
write is idempotent: when another replica wrote first (``Conflict``), the ledger is read
again, and what it now holds makes the write a no-op."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from sqlalchemy.orm import Session

from admission.kube import events, templates
from admission.kube.client import Kube, Obj
from admission.kube.kinds.adapter import FAILED, Adapter
from admission.kube.kinds.job import JOB
from admission.kube.kinds.registry import by_kind, managed_owner
from quota.core.checkpoints import CHECKPOINTED_AT, checkpointed_at, parse_time
from quota.core.errors import BerthError, Conflict, InvalidInput
from quota.core.metering import IntervalEnd
from quota.core.workload import RUNS, Workload, WorkloadState
from quota.ledger.checkpoints import record_checkpoint
from quota.ledger.repository import Ledger

log = logging.getLogger(__name__)

ACTOR = "kubernetes:job-watcher"
_ATTEMPTS = 3  # a Conflict means another replica wrote; reading again settles it
SessionScope = Callable[[], AbstractContextManager[Session]]


class Submit(Protocol):
    def __call__(self, ledger: Ledger, doc: Obj, *, now: datetime, actor: str) -> Workload: ...


class Finish(Protocol):
    def __call__(
        self,
        ledger: Ledger,
        namespace: str,
        name: str,
        *,
        now: datetime,
        actor: str,
        end: IntervalEnd = IntervalEnd.FINISHED,
    ) -> Workload: ...


@dataclass(frozen=True, slots=True)
class _Outcome:
    workload: Workload | None
    changed: bool  # the ledger changed: the loop has something new to look at
    problem: str = ""  # why the Job cannot become a workload


class JobWatcher:
    """The handler of one workload kind's informer (batch/v1 Jobs unless ``adapter``)."""

    def __init__(
        self,
        kube: Kube,
        sessions: SessionScope,
        notify: Callable[[], None],
        *,
        submit: Submit,
        finish: Finish,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        adapter: Adapter = JOB,
    ) -> None:
        self.adapter = adapter
        self.kube = kube
        self.sessions = sessions
        self.notify = notify
        self.submit = submit
        self.finish = finish
        self.clock = clock

    async def handle(self, kind: str, job: Obj) -> None:
        now = self.clock()
        if managed_owner(job) is not None:
            return  # its owner is the workload
        if kind == "DELETED":
            outcome = await asyncio.to_thread(self.forget, job, now)
        else:
            outcome = await asyncio.to_thread(self.record, job, now)
        if outcome.changed:
            self.notify()
        if kind == "DELETED" or templates.finished(job):
            return
        if outcome.problem and kind == "ADDED":
            problem, why = outcome.problem, f"Invalid{self.adapter.kind}"
            await events.record(self.kube, job, why, problem, now=now, warning=True)
        runs = outcome.workload is not None and outcome.workload.state in RUNS
        if not runs and (patch := templates.suspend_patch(job)) is not None:
            meta = job["metadata"]
            what = self.adapter.kind
            log.warning("%s %s/%s started unsuspended; suspending it until admission",
                        what, meta["namespace"], meta["name"])  # fmt: skip
            await self.kube.patch(self.adapter.ref, meta["namespace"], meta["name"], patch)
            message = (
                f"the {what} was created unsuspended; Berth suspended it until it is admitted"
            )
            await events.record(self.kube, job, "Suspended", message, now=now, warning=True)

    def record(self, job: Obj, now: datetime) -> _Outcome:
        """Bring the ledger up to the object: a new workload, its end, its checkpoint."""
        return self._settled(self._record, job, now)

    def forget(self, job: Obj, now: datetime) -> _Outcome:
        """The object is gone: its workload ends (deleted)."""
        return self._settled(self._forget, job, now)

    def _settled(self, step: Callable[[Obj, datetime], _Outcome], job: Obj,
                 now: datetime) -> _Outcome:  # fmt: skip
        for _ in range(_ATTEMPTS - 1):
            try:
                return step(job, now)
            except Conflict as exc:  # another replica wrote first: read the ledger again
                meta = job["metadata"]
                log.debug("%s %s/%s: %s; reading the ledger again", self.adapter.kind,
                          meta["namespace"], meta["name"], exc.message)  # fmt: skip
        return step(job, now)

    def _record(self, job: Obj, now: datetime) -> _Outcome:
        meta = job["metadata"]
        namespace, name, uid = meta["namespace"], meta["name"], meta.get("uid")
        with self.sessions() as session:
            ledger = Ledger(session)
            current = ledger.get_workload(namespace, name)
            if self._taken(current):
                assert current is not None
                why = (f"the name is taken by the unfinished workload of {current.kind} "
                       f"{current.key}; one of them must be renamed")  # fmt: skip
                return _Outcome(None, changed=False, problem=why)
            same = current is not None and _job_uid(current) in (None, uid)
            if current is not None and same:
                if current.state == WorkloadState.FINISHED:
                    return _Outcome(current, changed=False)
                if not templates.finished(job):
                    return self._checkpointed(ledger, current, job, now)
                end = _end_of(job)
                done = self.finish(ledger, namespace, name, now=now, actor=ACTOR, end=end)
                return _Outcome(done, changed=True)
            changed = False
            if current is not None and current.state != WorkloadState.FINISHED:
                # The name now belongs to a new Job: the old one's workload is over.
                gone = IntervalEnd.DELETED
                self.finish(ledger, namespace, name, now=now, actor=ACTOR, end=gone)
                changed = True
            if templates.finished(job):
                return _Outcome(None, changed=changed)
        try:
            with self.sessions() as session:
                document = templates.workload_document(job)
                submitted = self.submit(Ledger(session), document, now=now, actor=ACTOR)
        except InvalidInput as exc:
            return _Outcome(None, changed=changed, problem=exc.message)
        return _Outcome(submitted, changed=True)

    def _taken(self, current: Workload | None) -> bool:
        """Another kind Berth queues holds the name (workloads are keyed namespace/name)."""
        return (
            current is not None
            and current.state != WorkloadState.FINISHED
            and current.kind != self.adapter.kind
            and by_kind(current.kind) is not None
        )

    def _checkpointed(
        self, ledger: Ledger, current: Workload, job: Obj, now: datetime
    ) -> _Outcome:
        """Record a checkpoint the Job reports on itself (once: the ledger keeps the
        newest), so that the loop can end a victim's grace early."""
        stamp, location = templates.reported_checkpoint(job)
        if stamp is None or stamp == current.annotations.get(CHECKPOINTED_AT):
            return _Outcome(current, changed=False)
        try:
            at = parse_time(stamp)
        except ValueError as exc:
            meta = job["metadata"]
            log.warning("Job %s/%s: %s %s", meta["namespace"], meta["name"], CHECKPOINTED_AT, exc)
            return _Outcome(current, changed=False, problem=f"{CHECKPOINTED_AT}: {exc}")
        known = checkpointed_at(current)
        if known is not None and known >= at:
            return _Outcome(current, changed=False)  # spelled differently, already known
        workload, changed = record_checkpoint(
            ledger.session, current.namespace, current.name, at=at,
            location=location, now=now, actor=ACTOR,
        )
        return _Outcome(workload, changed=changed)

    def _forget(self, job: Obj, now: datetime) -> _Outcome:
        meta = job["metadata"]
        namespace, name = meta["namespace"], meta["name"]
        with self.sessions() as session:
            ledger = Ledger(session)
            current = ledger.get_workload(namespace, name)
            if current is None or current.state == WorkloadState.FINISHED:
                return _Outcome(current, changed=False)
            if self._taken(current):
                return _Outcome(current, changed=False)
            if _job_uid(current) not in (None, meta.get("uid")):
                return _Outcome(current, changed=False)
            try:
                gone = IntervalEnd.DELETED
                done = self.finish(ledger, namespace, name, now=now, actor=ACTOR, end=gone)
            except Conflict:
                raise
            except BerthError as exc:
                log.warning("%s %s/%s deleted; its workload: %s",
                            self.adapter.kind, namespace, name, exc.message)  # fmt: skip
                return _Outcome(current, changed=False)
        return _Outcome(done, changed=True)


def _end_of(job: Obj) -> IntervalEnd:
    return IntervalEnd.FAILED if templates.finished(job) == FAILED else IntervalEnd.FINISHED


def _job_uid(workload: Workload) -> str | None:
    return workload.annotations.get(templates.JOB_UID)
