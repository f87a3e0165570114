"""The durable admission loop: refresh the snapshot, decide, commit once, then actuate.

A cycle writes every decision in one transaction. Each workload row is changed only at the
version the snapshot holds; if one moved on, the whole cycle is rolled back (its other
decisions counted on that row), the row is reread and the next cycle decides again. The
same transaction holds object writers off (quota cannot change under it) and checks the
leader term (a deposed leader cannot commit). Actuation follows the commit and is
idempotent, so a crash between the two is repaired by re-actuating on start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy.orm import Session

from admission.engine.collector import collector_paused
from admission.engine.cycle import run_cycle
from admission.engine.node_faults import node_evictions
from admission.engine.pods_ready import pods_ready_evictions
from admission.engine.stored_form import primary_of
from admission.engine.workload import checkpoint_grace
from admission.loop.actuation import (
    ADMIT,
    CHECKPOINT,
    EVICT,
    REASON,
    Actuation,
    Actuator,
    NodeFollower,
    Reconciler,
)
from admission.loop.crash_hook import CrashHook
from admission.loop.plan import CyclePlan, plan_cycle, plan_evictions, plan_requeues
from admission.loop.reason_budget import cycle_share
from admission.loop.snapshot_cache import Refreshed, SnapshotCache
from quota.core.errors import BerthError
from quota.core.fairness import Fairness
from quota.core.pods_ready import DISABLED, PodsReadyPolicy
from quota.core.workload import WorkloadState
from quota.ledger import changes, decisions, lifecycle

log = logging.getLogger(__name__)

SessionScope = Callable[[], AbstractContextManager[Session]]
ACTOR = "admission-loop"


class LostLeadership(BerthError):
    """Another replica started a newer leader term: this one must stop deciding."""

    status = 503
    code = "LostLeadership"


class _Retry(Exception):  # control flow inside one cycle, never escapes
    def __init__(self, stale: Sequence[int] = (), *, objects: bool = False) -> None:
        super().__init__("retry next cycle")
        self.stale = tuple(stale)
        self.objects = objects


@dataclass(frozen=True, slots=True)
class CycleSummary:
    refreshed: Refreshed
    admitted: int = 0
    evicted: int = 0
    requeued: int = 0
    reasons: int = 0
    stale: int = 0  # rows found at another version (cycle retried or reasons skipped)
    retried: bool = False  # nothing committed: decided again next cycle
    seconds: float = 0.0


def _utcnow() -> datetime:
    return datetime.now(UTC)


class AdmissionLoop:
    """One leader's admission loop over the ledger; call ``begin`` then ``cycle`` repeatedly."""

    def __init__(
        self,
        sessions: SessionScope,
        actuator: Actuator,
        *,
        clock: Callable[[], datetime] = _utcnow,
        fair_sharing: bool = False,
        fairness: Fairness | None = None,
        pods_ready: PodsReadyPolicy = DISABLED,
        crash: CrashHook | None = None,
    ) -> None:
        self.sessions = sessions
        self.actuator = actuator
        self.clock = clock
        self.cache = SnapshotCache(fair_sharing=fair_sharing, fairness=fairness,
                                   pods_ready=pods_ready)
        self.crash = crash if crash is not None else CrashHook()  # berth serve passes its own
        self.term: int | None = None
        self._reasons_after = 0  # rotation point of detail-only verdict writes
        self._reasons_at = time.perf_counter()  # when the last cycle's budget was given

    async def begin(
        self, holder: str | None = None, *, keep: Callable[[], Awaitable[bool]] | None = None
    ) -> None:
        """Start leading: new fencing term (when ``holder`` is given), full reload,
        reconcile, and re-actuate everything in force (actuations are idempotent).

        ``keep`` is awaited between the steps (a big ledger makes each take a while): it
        renews the leader's lease, and ``LostLeadership`` ends the start when it is gone."""

        async def still_leading() -> None:
            if keep is not None and not await keep():
                raise LostLeadership("the leader lease ran out while the loop was starting")

        if holder is not None:
            self.term = await asyncio.to_thread(self._begin_term, holder)
            log.info("admission loop leading as %s (term %d)", holder, self.term)
        self.cache.reset()
        await asyncio.to_thread(self._refresh)
        await still_leading()
        await self.reconcile()
        await still_leading()
        await self._actuate(self._in_force())
        await still_leading()
        if isinstance(self.actuator, Reconciler):
            await self.actuator.reconcile(self.cache.snapshot())
        await self._follow_nodes()

    async def cycle(self) -> CycleSummary:
        """One admission cycle; returns what it did."""
        summary, actions = await asyncio.to_thread(self._cycle)
        log.debug("admission cycle: %s", summary)
        for action in actions:
            if action.action == ADMIT and action.admission is not None:
                log.info(
                    "admitted %s to ClusterQueue %s", action.key, action.admission.cluster_queue
                )
            elif action.action == EVICT and action.reason is not None:
                log.info("evicted %s", action.reason.message)
        await self._actuate(actions)
        await self._follow_nodes()
        return summary

    async def _follow_nodes(self) -> None:
        """Node health states carried out (taints), by an actuator that does that."""
        if isinstance(self.actuator, NodeFollower):
            await self.actuator.follow_nodes(self.cache.snapshot().nodes)

    async def reconcile(self) -> None:
        """Repair and report what the ledger should never hold: usage left open for work
        that holds no quota (closed), holders without usage or without a queue (logged)."""
        closed, unmetered, orphaned = await asyncio.to_thread(self._reconcile)
        if closed:
            log.warning(
                "reconcile: closed %d usage intervals of workloads holding no quota", closed
            )
        for key in unmetered:
            log.warning("reconcile: %s holds quota but has no open usage interval", key)
        for key in orphaned:
            log.warning("reconcile: %s holds quota in a ClusterQueue that no longer exists", key)

    # --- the synchronous part (runs in a worker thread) ----------------------------------

    def _begin_term(self, holder: str) -> int:
        with self.sessions() as session:
            return changes.begin_term(session, holder, self.clock())

    def _refresh(self) -> Refreshed:
        with self.sessions() as session:
            refreshed = self.cache.refresh(session)
            self.cache.read_usage(session, self.clock())
            return refreshed

    def _reconcile(self) -> tuple[int, list[str], list[str]]:
        with self.sessions() as session:
            changes.quiet(session)
            closed = lifecycle.close_stray_usage(session, self.clock())
            return (
                closed,
                lifecycle.holders_without_usage(session),
                lifecycle.holders_in_missing_queues(session),
            )

    def _cycle(self) -> tuple[CycleSummary, list[Actuation]]:
        with collector_paused():
            return self._cycle_once()

    def _cycle_once(self) -> tuple[CycleSummary, list[Actuation]]:
        started = time.perf_counter()
        refreshed = self._refresh()
        now = self.clock()
        requeues = plan_requeues(self.cache.records, now)
        view = self.cache.snapshot()
        # What no engine decision causes: node faults, then pods that are late to be Ready.
        faults = [*node_evictions(view.workloads, view.nodes),
                  *pods_ready_evictions(view.workloads, view.nodes, view.pods_ready, now)]
        plan_evictions(requeues, self.cache.records, faults, now)
        stale_requeues = self._commit(requeues, now) if not requeues.empty else ()
        if stale_requeues is None:
            return CycleSummary(refreshed, retried=True), []
        snapshot = self.cache.snapshot()
        result = run_cycle(snapshot, now)
        plan = plan_cycle(self.cache.records, result, snapshot.flavors,
                          budget=self._reason_budget(started, len(result.pending)),
                          after=self._reasons_after)
        self._reasons_after = plan.after
        stale = self._commit(plan, now) if not plan.empty else ()
        seconds = time.perf_counter() - started
        if stale is None:
            return CycleSummary(
                refreshed, requeued=len(requeues.transitions), retried=True, seconds=seconds
            ), requeues.actions
        if result.admitted or result.evicted:
            self.cache.usage_changed()  # fair sharing's next cycle counts them (entry penalty)
        summary = CycleSummary(
            refreshed,
            admitted=len(result.admitted),
            evicted=len(result.evicted),
            requeued=len(requeues.transitions),
            reasons=len(plan.reasons) - len(stale),
            stale=len(stale),
            seconds=seconds,
        )
        return summary, requeues.actions + plan.actions

    def _reason_budget(self, started: float, waiting: int) -> tuple[int, int]:
        elapsed, self._reasons_at = started - self._reasons_at, started
        return cycle_share(elapsed, waiting)

    def _commit(self, plan: CyclePlan, now: datetime) -> tuple[int, ...] | None:
        """Write ``plan`` in one transaction; the reason rows skipped as stale, or ``None``
        when nothing was committed (a state change was stale, or objects changed)."""
        try:
            with self.sessions() as session:
                changes.quiet(session)
                if self.term is not None and not changes.term_is_current(session, self.term):
                    raise LostLeadership(f"leader term {self.term} is over: another replica leads")
                version = self.cache.objects_version
                if version is None or not changes.fence_objects(session, version):
                    raise _Retry(objects=True)
                stale = decisions.write_transitions(session, plan.transitions, now=now, actor=ACTOR)
                if stale:
                    raise _Retry(stale)
                stale = decisions.write_reasons(session, plan.reasons, now=now)
                xid = changes.current_xid(session)
                self.crash.passed("before-commit")
        except _Retry as retry:
            log.info(
                "admission cycle not committed: %s; deciding again next cycle",
                "objects changed" if retry.objects else f"{len(retry.stale)} stale rows",
            )
            self.cache.invalidate(retry.stale)
            if retry.objects:
                self.cache.invalidate_objects()
            return None
        skipped = set(stale)
        self.cache.invalidate(skipped)
        self.cache.committed({k: r for k, r in plan.records.items() if r.id not in skipped}, xid)
        self.crash.passed("after-commit")
        return stale

    def _in_force(self) -> list[Actuation]:
        """Every decision currently in force, for re-actuation after a (re)start."""
        flavors = self.cache.snapshot().flavors
        actions = []
        for key in sorted(self.cache.records):
            record = self.cache.records[key]
            workload = record.workload
            if workload.state is WorkloadState.ADMITTED and workload.admission is not None:
                named = {f for p in workload.admission.pod_sets for f in p.flavors.values()}
                actions.append(
                    Actuation(
                        key,
                        workload.kind,
                        ADMIT,
                        workload.admission,
                        {f: flavors[f] for f in sorted(named) if f in flavors},
                    )
                )
            elif workload.state is WorkloadState.EVICTING:
                # Still running to its checkpoint: ask again (idempotent), never suspend.
                requested = workload.evicted_at or self.clock()
                grace = checkpoint_grace(workload) or timedelta(0)
                actions.append(Actuation(key, workload.kind, CHECKPOINT, requested_at=requested,
                                         deadline=requested + grace))
            else:
                actions.append(
                    Actuation(key, workload.kind, REASON, reason=primary_of(record.verdict, key))
                )
        return actions

    async def _actuate(self, actions: Sequence[Actuation]) -> None:
        if not actions:
            return
        limit = self.crash.limit("mid-actuation")
        if limit is not None and limit < len(actions):
            await self.actuator.actuate(actions[:limit])
            self.crash.passed("mid-actuation", limit)
        await self.actuator.actuate(actions)
        self.crash.passed("mid-actuation", len(actions))
