"""One admission cycle (PURE): snapshot in, decisions and wait reasons out.

Every ClusterQueue's pending workloads are queued by priority and age. The heads of all
queues compete in one heap, non-borrowing (or, with fair sharing, lowest-share) first;
after a head is decided its queue offers the next one, so a single pass admits as many
workloads as fit, across and within ClusterQueues.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from admission.engine import check_states, reasons, transitions
from admission.engine.candidates import FailedSearches, MinRuntimes
from admission.engine.capacity import Capacity, demands
from admission.engine.checks import (
    inactive_queues,
    queue_reasons,
    static_reasons,
)
from admission.engine.cohort_order import CohortKey, cohort_key, optimistic, reservation_key
from admission.engine.collector import collector_paused
from admission.engine.cycle_holders import sweep_holders
from admission.engine.cycle_memo import CycleMemo
from admission.engine.cycle_reasons import WaitReasons
from admission.engine.cycle_victims import VictimSearches
from admission.engine.fairshare import memory_offsets
from admission.engine.flavors import Assigner, Mode, Plan, flexible, partial_plan
from admission.engine.fungible import walk_outcome
from admission.engine.pods_ready import unready_holder
from admission.engine.preemption import Search, Victim
from admission.engine.queues import Entry, entry, order_queue
from admission.engine.quick_filter import QuickFilter
from admission.engine.reservations import Reservations
from admission.engine.statuses import PendingStatuses, Waiting
from admission.engine.types import (
    AdmissionDecision,
    CycleResult,
    EvictionDecision,
    Snapshot,
)
from admission.engine.verdict import Outcome
from admission.engine.workload import (
    Holdings,
    checkpoint_grace,
    grace_ends,
    held_usage,
    holds_quota,
    is_pending,
    request_problem,
)
from quota.core.model import ClusterQueue, QueueingStrategy
from quota.core.reasons import WaitReason
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Admission, Workload, WorkloadState

Usage = Mapping[FlavorResource, int]
# Heap entries: a queue's head, a borrowing head put back, where a reservation is made.
_HEAD, _REQUEUED, _RESERVE = 0, 1, 2

# Reasons worth adding to a workload that is held back anyway: they will not go away alone.
_PERMANENT = frozenset({WaitReason.NO_MATCHING_FLAVOR, WaitReason.EXCEEDS_MAX_QUOTA})


def run_cycle(snapshot: Snapshot, now: datetime) -> CycleResult:
    """Decide one admission cycle over ``snapshot`` at time ``now``."""
    with collector_paused():
        return _Cycle(snapshot, now).run()


class _Cycle(VictimSearches):
    def __init__(self, snapshot: Snapshot, now: datetime) -> None:
        self.snapshot = snapshot
        self.now = now
        self.queues = snapshot.cluster_queues
        self.tree = QuotaTree(
            [snapshot.cluster_queues[name] for name in sorted(snapshot.cluster_queues)],
            snapshot.cohorts,
        )
        self.inactive = inactive_queues(snapshot, self.tree)
        self.open_holders: dict[str, int] = {}
        # Node capacity (None without nodes for any flavor: quota alone decides).
        self.capacity = Capacity.of(snapshot)
        self.assigner = Assigner(self.tree, snapshot.flavors, self.capacity,
                                 snapshot.topologies)
        self.memo = CycleMemo(snapshot, self.tree, self.assigner, self.capacity)
        self.filter = QuickFilter(self.tree, self.capacity, self.queues, self.memo.slots)
        self.holdings = Holdings()
        self.admitted: list[AdmissionDecision] = []
        self.evicted: list[EvictionDecision] = []
        self.waiting: dict[str, Waiting] = {}
        # Admitted in this cycle, or chosen as victims: no later search may pick them.
        self.protected = self.holdings.protected  # grown through ``Holdings.protect``
        timestamp = snapshot.pods_ready.timestamp
        self.failed = FailedSearches(self.tree, timestamp)
        # (queue, shape, pool version) -> (priority, victims min-runtime kept) of a failure
        self.held_back: dict[tuple[str, int, int], tuple[int, dict[str, datetime]]] = {}
        # Per (queue, shape, pool version): no partial admission fits, nor by preempting.
        self.no_partial = FailedSearches(self.tree, timestamp)
        # Quota kept for workloads needing preemption that found no victims, this cycle.
        self.reservations = Reservations(self.tree)
        # blockAdmission: the admitted workload whose pods are not all Ready yet, if any;
        # while there is one, nothing is admitted (and, once one is, nothing more).
        policy = snapshot.pods_ready
        self.blocking_ready = policy.enable and policy.block_admission
        self.unready = unready_holder(snapshot.workloads) if self.blocking_ready else None
        self.why = WaitReasons(self.queues, self.tree, self.holdings, self.memo,
                               self.assigner, self.capacity, self.reservations)
        self.search = Search(self.tree, self.queues, self.holdings, self.protected,
                             snapshot.fair_sharing, now=now,
                             strategies=snapshot.fair_strategies,
                             min_runtimes=MinRuntimes.of(self.queues,
                                                         snapshot.priority_classes, now),
                             timestamp=timestamp)
        # Most of the snapshot is pending: pick the holders out before sorting them.
        holders = sorted((key, w) for key, w in snapshot.workloads.items()
                         if w.admission is not None and holds_quota(w))
        # Reservations waiting for admission checks, in key order (few: checks are rare).
        self.reserved = [key for key, w in holders if w.state is WorkloadState.QUOTA_RESERVED]
        for _, workload in holders:
            assert workload.admission is not None
            cq = workload.admission.cluster_queue
            if self.tree.has_queue(cq):
                usage = held_usage(workload)
                self.tree.add(cq, usage)
                self.holdings.add(cq, workload, usage)
        if self.capacity is not None:
            self.capacity.occupy_admitted(self.holdings.by_queue)
        if snapshot.fair_sharing and snapshot.decayed_usage is not None:
            self.search.memory.update(memory_offsets(self.tree, snapshot.decayed_usage))

    def run(self) -> CycleResult:
        settled = sweep_holders(self.snapshot, self.holdings, self.tree, self.reserved,
                                self.now, self._release)
        self.admitted += settled.admitted
        self.evicted += settled.evicted
        self.waiting.update(settled.waiting)
        self.open_holders = self._open_holders()
        pending = self._classify()
        outside = list(self.waiting)  # held back before the queues: in none of them
        self._admit(pending)
        return CycleResult(
            now=self.now,
            admitted=tuple(self.admitted),
            evicted=tuple(self.evicted),
            pending=PendingStatuses(self.waiting, self.snapshot.workloads, self.queues,
                                    self.why.quota, self.snapshot.queue_usage,
                                    timestamp=self.snapshot.pods_ready.timestamp,
                                    queued=pending, outside=outside, shape=self.memo.shape),
        )

    # --- before admission ----------------------------------------------------------------

    def _open_holders(self) -> dict[str, int]:
        """Holders a victim search could pick, per pool: those admitted in this cycle or
        already chosen are protected, so a pool without any needs no search at all."""
        out: dict[str, int] = {}
        for cq in self.holdings.queue_of.values():
            root = self.tree.root(cq)
            out[root] = out.get(root, 0) + 1
        return out

    def _classify(self) -> dict[str, list[Entry]]:
        """Split pending workloads into per-queue lists; record what holds the rest back."""
        queued: dict[str, list[Entry]] = {}
        # What a LocalQueue says of every workload sent through it: (ClusterQueue, clear).
        routes: dict[tuple[str, str], tuple[str | None, bool]] = {}
        classes = self.snapshot.priority_classes
        pending = WorkloadState.PENDING
        timestamp = self.snapshot.pods_ready.timestamp
        kept = self.snapshot.entries  # entries kept across cycles, when the loop has them
        if kept is not None:
            kept.prune(self.snapshot.workloads)
        make = entry if kept is None else kept.entry
        for key, workload in self.snapshot.workloads.items():
            if workload.state is not pending:
                if is_pending(workload):
                    self._hold(key, workload)
                continue
            lq = (workload.namespace, workload.queue_name)
            route = routes.get(lq)
            if route is None:
                cq_name, held = queue_reasons(self.snapshot, *lq, self.inactive)
                route = routes[lq] = (cq_name, not held and cq_name is not None)
            target, clear = route
            pc = workload.priority_class
            if clear and workload.requeue_at is not None:  # an admission check's Retry
                backoff = check_states.backing_off(workload, self.now)
                if backoff is not None:
                    self.waiting[key] = Waiting(target, [backoff])
                    continue
            if not clear or not workload.active or (pc is not None and pc not in classes):
                self._hold(key, workload)
                continue
            found = make(key, workload, timestamp)
            if found is None:  # an invalid request
                self._hold(key, workload)
                continue
            assert target is not None  # clear: the LocalQueue names a ClusterQueue
            until = workload.requeue_at
            if until is not None and until > self.now:  # backing off after PodsReadyTimeout
                self.waiting[key] = Waiting(
                    target, [reasons.pods_ready_backoff(until, workload.requeue_count)])
                continue
            queued.setdefault(target, []).append(found)
        used = self.snapshot.queue_usage
        for name, entries in queued.items():
            fair = used is not None and self.queues[name].usage_based_admission
            order_queue(entries, used if fair else None, _workload_of)
        return queued

    def _hold(self, key: str, workload: Workload) -> None:
        """Record what holds a pending workload back before any quota is measured."""
        cq_name, held = static_reasons(self.snapshot, workload, self.inactive)
        if (cq_name is not None and cq_name in self.queues
                and cq_name not in self.inactive and request_problem(workload) is None):
            cq = self.queues[cq_name]
            plan = self.assigner.assign(cq, workload)
            held += [r for r in self.why.plan_reasons(plan) if r.code in _PERMANENT]
            too_big = self.why.oversized(cq, workload, self.memo.shape(workload, key))
            held += [too_big] if too_big else []
        self.waiting[key] = Waiting(cq_name, held)

    # --- admission -----------------------------------------------------------------------

    def _admit(self, queued: dict[str, list[Entry]]) -> None:
        """Decide queue heads, cohort order first, until every queue is through."""
        heap: list[tuple[CohortKey, int, str]] = []
        index = dict.fromkeys(queued, 0)
        push, pop = heapq.heappush, heapq.heappop
        short = self.filter.short
        for name in sorted(queued):
            push(heap, (optimistic(queued[name][0]), _HEAD, name))
        while heap:
            if self.unready is not None:
                self._wait_ready(queued, index,
                                 [name for _, kind, name in heap if kind != _RESERVE])
                break
            key, kind, name = pop(heap)
            if kind == _RESERVE:
                self.reservations.make(name)
                continue
            requeued = kind == _REQUEUED
            cq = self.queues[name]
            mine = queued[name]
            at = index[name]
            settled = not requeued and self._settled(cq)
            if settled and name in short:
                start, at = at, self.filter.park_tail(name, mine, at, self.waiting)
                if at == len(mine):
                    continue
                if at > start:
                    index[name] = at
                    push(heap, (optimistic(mine[at]), _HEAD, name))
                    continue
            head = mine[at]
            workload = head.workload
            shape_id = self.memo.shape(workload, head.key)
            outcome = self.memo.outcome(cq, workload, shape_id)
            # A borrower waits for the non-borrowing heads of its cohort; one that does
            # not fit in a settled pool is decided at once: waiting cannot help it. Nor
            # can it help a head no node can hold, and waiting would hold back its queue.
            if not requeued and (outcome.mode is Mode.FIT or not settled) and not (
                    self.capacity is not None and self.why.oversized(cq, workload, shape_id)):
                actual = cohort_key(self.tree, cq, outcome, key,
                                    fair_sharing=self.snapshot.fair_sharing,
                                    memory=self.search.memory.get(cq.name))
                if actual > key:
                    push(heap, (actual, _REQUEUED, name))
                    continue
            # Once a head fails, its queue's room is short: the quick filter starts paying.
            if outcome.mode is Mode.FIT:
                short.discard(name)
            else:
                short.add(name)
            blocking = self._decide(cq, workload, outcome, shape_id)
            if self.reservations.unscheduled(name):
                push(heap, (reservation_key(self.tree, cq, workload, outcome), _RESERVE, name))
            at = index[name] = at + 1
            if blocking and cq.queueing_strategy is QueueingStrategy.STRICT_FIFO:
                for behind in mine[at:]:
                    self._block(cq, behind.workload, workload.key)
                continue
            if at < len(mine):
                push(heap, (optimistic(mine[at]), _HEAD, name))
        # Reasons are written against the state the workloads wait in: without reservations.
        self.reservations.release()

    def _settled(self, cq: ClusterQueue) -> bool:
        """Whether the quick filter may park workloads of ``cq`` unevaluated: a
        BestEffortFIFO queue (a StrictFIFO head's mode decides what it blocks) in a pool
        where nothing can be evicted any more this cycle, so its room only shrinks."""
        if cq.queueing_strategy is QueueingStrategy.STRICT_FIFO:
            return False
        if cq.name in self.filter.node_flavors:  # nodes serve every pool: any eviction frees some
            return not any(self.open_holders.values())
        return not self.open_holders.get(self.tree.root(cq.name))

    def _decide(self, cq: ClusterQueue, workload: Workload, outcome: Outcome,
                shape_id: int) -> bool:
        """Admit, preempt for, or park ``workload``; True when it waits at the head."""
        roomless = False
        if self.why.oversized(cq, workload, shape_id):
            # No node can ever hold one of its pods: no victims, and it blocks nobody.
            # Its reasons are written after the pass, with the quota's.
            self.waiting[workload.key] = Waiting(cq.name, [], quota=True)
            return False
        walked = None
        if outcome.mode is Mode.PREEMPT and self.capacity is None:
            # Victims may decide the flavor; a node-backed flavor's room is the plan's.
            walked = walk_outcome(self.memo.verdict(cq, workload, shape_id), outcome,
                                  self.search, self.failed, cq, workload, shape_id,
                                  lambda: self._searchable(cq))
        if walked is not None:
            outcome = walked.outcome
            if outcome.mode is Mode.FIT:  # another flavor fits: its queue is not short
                self.filter.short.discard(cq.name)
        mode, usage = outcome.mode, outcome.usage
        if mode is Mode.FIT:
            if self.capacity is None:  # quota alone decides: the verdict's flavors suffice
                admission = self.memo.verdict(cq, workload, shape_id).admission(
                    cq.name, workload, outcome.picks)
                self._admit_as(cq.name, workload, admission, usage, outcome.borrows)
                return False
            # Not even its least pods fit any flavor's free nodes: no plan places it now.
            roomless = self.filter.no_room_for(cq.name, workload)
            if not roomless and self._grant(workload, self.memo.plan(cq, workload, shape_id)):
                return False
        # Short of quota, or (FIT) of free nodes: evict what the policy allows, if that
        # lets it be admitted and placed.
        held_back = None  # victims it would take but for their minimum runtime
        if mode is not Mode.NO_FIT:
            if walked is not None and walked.known:
                victims = walked.victims
                if not victims and walked.searched:
                    self.failed.add(cq, workload, usage, shape_id, by_amount=False)
            else:
                victims = self._victims(cq, workload, usage, shape_id)
            if victims:
                return self._preempt(cq, workload, victims, shape_id, usage,
                                     outcome if walked is not None else None)
            held_back = dict(self.search.held_back) if self.search.held_back else None
        if roomless:  # its reason is written after the pass, like a quota reason
            self.filter.short.add(cq.name)
            self.waiting[workload.key] = self.filter.parking(cq.name)
            return True
        if flexible(workload) and not self.no_partial.shape_failed(cq, workload, shape_id):
            partial = partial_plan(self.assigner, cq, workload,
                                   lambda plan: self._victims(cq, workload, plan.usage,
                                                              shape_id, plan))
            if partial is not None:
                plan, found = partial
                if found:
                    counts = {p.name: p.count for p in plan.pod_sets}
                    return self._preempt(cq, workload, found, shape_id, plan.usage,
                                         counts=counts)
                if self._grant(workload, plan):
                    return False
            self.no_partial.add(cq, workload, {}, shape_id, by_amount=False)
        if mode is Mode.FIT:  # the quota fits, the nodes do not
            self.filter.short.add(cq.name)
            plan = self.memo.plan(cq, workload, shape_id)
            self.waiting[workload.key] = self.why.no_room(cq, workload, plan)
            return True
        # Quota reasons are written after the pass, against the final usage: that is the
        # state the workload waits in, and one evaluation then serves every equal shape.
        self.waiting[workload.key] = Waiting(cq.name, [], quota=True, held_back=held_back)
        if mode is Mode.PREEMPT:
            self.reservations.plan(cq, workload, usage, borrows=outcome.borrows,
                                   fair_sharing=self.snapshot.fair_sharing)
            return True
        return False

    def _grant(self, workload: Workload, plan: Plan) -> bool:
        """Admit ``workload`` by ``plan``; False when its pods do not fit the nodes."""
        capacity = self.capacity
        if capacity is None:
            admission = plan.admission()
        else:
            if not plan.room:
                return False
            placement = capacity.place(demands(workload, plan.pod_sets))
            if placement is None:
                return False
            admission = plan.admission(placement or None)
            capacity.occupy(workload.key, placement, workload.pod_sets)
        self._admit_as(plan.cluster_queue, workload, admission, plan.usage, plan.borrows)
        return True

    def _admit_as(self, cq: str, workload: Workload, admission: Admission,
                  usage: Usage, borrows: bool) -> None:
        self.tree.add(cq, usage)
        # A queue with admission checks for these flavors only reserves the quota.
        checks = check_states.checks_for(self.queues[cq].admission_checks, admission)
        admitted = (check_states.reserved(workload, admission, checks, self.now) if checks
                    else transitions.admitted(workload, admission, self.now))
        self.holdings.add(cq, admitted, dict(usage))
        self.holdings.protect((workload.key,))
        self.admitted.append(AdmissionDecision(workload.key, admission, borrows, checks))
        if self.blocking_ready and not checks:
            self.unready = workload.key  # its pods start now: the rest waits for them

    def _wait_ready(self, queued: dict[str, list[Entry]], index: Mapping[str, int],
                    names: Sequence[str]) -> None:
        """blockAdmission: every workload still queued waits for ``self.unready``."""
        assert self.unready is not None
        reason = reasons.pods_ready_blocked(self.unready)
        for name in sorted(set(names)):
            for behind in queued[name][index[name]:]:
                self.waiting[behind.key] = Waiting(name, [reason])

    def _release(self, key: str) -> None:
        if self.capacity is not None:
            self.capacity.release(key)

    def _preempt(self, cq: ClusterQueue, workload: Workload, victims: Sequence[Victim],
                 shape_id: int, usage: Usage, walked: Outcome | None = None,
                 counts: Mapping[str, int] | None = None) -> bool:
        """Evict ``victims`` for ``workload`` (they free room for ``usage``), admitting it
        at once when none is still checkpointing: in ``walked``'s flavors when the victims
        chose them, at ``counts`` pods when a partial admission did."""
        waiting_on: list[str] = []
        deadline: datetime | None = None
        root = self.tree.root(cq.name)
        # When it must wait for a checkpoint anyway, the victims without a grace keep
        # running until it can be admitted: evicted now, their room would sit idle, go to
        # other work in a later cycle and be taken back from it, and their work is lost
        # minutes early. They are spoken for meanwhile.
        graces = [checkpoint_grace(v.workload) for v in victims]
        defer = any(v.evicting or grace is not None
                    for v, grace in zip(victims, graces, strict=True))
        deferred: list[str] = []
        for victim, grace in zip(victims, graces, strict=True):
            key = victim.workload.key
            # Every victim is now evicted or waited for: protected from later searches.
            self.open_holders[root] -= 1
            if defer and not victim.evicting and grace is None:
                deferred.append(key)
                continue
            if victim.evicting:
                waiting_on.append(key)
                ends = grace_ends(victim.workload)
                if ends is not None:
                    deadline = max(deadline, ends) if deadline else ends
                continue
            self.evicted.append(
                EvictionDecision(key, workload.key, victim.cause, victim.cluster_queue)
            )
            if grace is None:
                self.tree.remove(victim.cluster_queue, self.holdings.usage[key])
                self.holdings.remove(key)
                self._release(key)
                continue
            # Checkpointing victims keep their quota until they checkpoint or time runs out.
            held = self.holdings.usage[key]
            self.holdings.remove(key)
            self.holdings.add(victim.cluster_queue, replace(
                victim.workload, state=WorkloadState.EVICTING, evicted_at=self.now), held)
            waiting_on.append(key)
            deadline = max(deadline, self.now + grace) if deadline else self.now + grace
        if not waiting_on and walked is not None:
            # The flavors the victims were chosen for, not the verdict's first choice.
            admission = self.memo.verdict(cq, workload, shape_id).admission(
                cq.name, workload, walked.picks)
            borrows = self.tree.borrows_for(cq.name, walked.usage)
            self._admit_as(cq.name, workload, admission, walked.usage, borrows)
            return False
        if not waiting_on:
            plan = self.assigner.assign(cq, workload, counts)
            if plan.mode is Mode.FIT:
                if self._grant(workload, plan):
                    return False
                self.waiting[workload.key] = self.why.no_room(cq, workload, plan)
                return True
        # What it waits for is spoken for: no later preemptor in this cycle counts on it,
        # and no later workload takes the quota or the free nodes it will need beside its
        # victims' (else one would, and be evicted for it again next cycle).
        self.holdings.protect(waiting_on + deferred)
        self.reservations.keep(cq, workload, usage)
        if self.capacity is not None:
            plan = (self.memo.plan(cq, workload, shape_id) if counts is None
                    else self.assigner.assign(cq, workload, counts))
            self.capacity.reserve(workload.key, waiting_on, demands(workload, plan.pod_sets))
        found = [reasons.waiting_for_preempted(sorted(waiting_on), deadline)]
        self.waiting[workload.key] = Waiting(cq.name, found)
        return True

    def _block(self, cq: ClusterQueue, workload: Workload, head: str) -> None:
        self.waiting[workload.key] = Waiting(cq.name, [], blocked_by=head, quota=True)


def _workload_of(found: Entry) -> Workload:
    return found.workload
