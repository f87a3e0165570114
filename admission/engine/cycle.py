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

from admission.engine import reasons, transitions
from admission.engine.candidates import FailedSearches
from admission.engine.capacity import Capacity, demands
from admission.engine.checks import (
    drain_reason,
    inactive_queues,
    queue_reasons,
    static_reasons,
)
from admission.engine.collector import collector_paused
from admission.engine.fairshare import dominant_share
from admission.engine.flavors import Assigner, Mode, Plan, partial_plan
from admission.engine.ordering import CohortKey
from admission.engine.preemption import Search, Victim, Wanted, can_preempt, find_victims
from admission.engine.queues import Entry, caps, entry
from admission.engine.statuses import PendingStatuses, Waiting
from admission.engine.types import (
    AdmissionDecision,
    CycleResult,
    EvictionDecision,
    Reason,
    Snapshot,
)
from admission.engine.verdict import Outcome, Verdict, layout
from admission.engine.workload import (
    Holdings,
    Shape,
    checkpoint_grace,
    grace_ends,
    held_usage,
    holds_quota,
    is_pending,
    request_problem,
    shape,
)
from quota.core.model import ClusterQueue, QueueingStrategy, ReclaimWithinCohort
from quota.core.reasons import WaitReason
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Admission, Workload, WorkloadState, pending_order

Usage = Mapping[FlavorResource, int]

# Reasons that say a workload could be admitted once quota frees up: such a head blocks a
# StrictFIFO queue; one that can never fit (no flavor, over the maximum) does not.
_WAITING = frozenset({WaitReason.WAITING_FOR_QUOTA, WaitReason.WAITING_FOR_PREEMPTED_WORKLOADS})
# Reasons worth adding to a workload that is held back anyway: they will not go away alone.
_PERMANENT = frozenset({WaitReason.NO_MATCHING_FLAVOR, WaitReason.EXCEEDS_MAX_QUOTA})


def run_cycle(snapshot: Snapshot, now: datetime) -> CycleResult:
    """Decide one admission cycle over ``snapshot`` at time ``now``."""
    with collector_paused():
        return _Cycle(snapshot, now).run()


class _Cycle:
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
        self.floors = any(f.min_priority is not None for f in snapshot.flavors.values())
        # ClusterQueues of one resource group with nodes behind some flavor: the flavors the
        # quick filter asks the nodes about.
        self.rooms: dict[str, tuple[str, ...]] = {}
        if self.capacity is not None:
            pools = self.capacity.pools
            for name, queue in snapshot.cluster_queues.items():
                if len(queue.resource_groups) == 1:
                    flavors = tuple(q.flavor for q in queue.resource_groups[0].flavors)
                    if any(f in pools for f in flavors):
                        self.rooms[name] = flavors
        self.holdings = Holdings()
        self.admitted: list[AdmissionDecision] = []
        self.evicted: list[EvictionDecision] = []
        self.waiting: dict[str, Waiting] = {}
        self.fresh: set[str] = set()
        # Workload key -> a small number per distinct shape: cache keys hash an int instead
        # of re-hashing a nested tuple on every lookup.
        self.shapes: dict[str, int] = {}
        self.memo = snapshot.shapes
        if self.memo is not None:
            self.memo.prune(snapshot.workloads)
        self.shape_ids: dict[Shape, int] = {}
        # Plans keyed by what assignment reads of the pool: the queue's own (available,
        # used) per quota it names. Admissions elsewhere in a full cohort change the pool
        # version but rarely this view, so most plans survive them.
        self.plans: dict[tuple[str, int, tuple[int, ...]], Plan] = {}
        self.views: dict[str, tuple[int, tuple[int, ...]]] = {}
        self.numbers: dict[str, tuple[int, dict[FlavorResource, tuple[int, int, int]]]] = {}
        # Verdicts per (queue layout, shape), and outcomes per (queue, shape, pool version):
        # the admission pass needs only these for the many workloads that do not fit.
        layouts: dict[object, int] = {}
        self.layouts = {name: layouts.setdefault(layout(cq), len(layouts))
                        for name, cq in snapshot.cluster_queues.items()}
        self.verdicts: dict[tuple[int, int], Verdict] = {}
        self.outcomes: dict[tuple[str, int, int], Outcome] = {}
        self.view_keys = {
            name: tuple((quotas.flavor, resource) for group in cq.resource_groups
                        for quotas in group.flavors for resource in group.covered_resources)
            for name, cq in snapshot.cluster_queues.items()
        }
        self.failed = FailedSearches(self.tree)
        self.holder_cache: dict[tuple[str, tuple[str, str], int], list[str]] = {}
        self.no_partial: set[tuple[str, int, int]] = set()
        self.parked: dict[tuple[str, int, int], tuple[list[Reason], list[str]]] = {}
        self.reason_memo: dict[object, Reason] = {}
        self.hint_memo: dict[object, list[str]] = {}
        self.search = Search(self.tree, self.queues, self.holdings, self.fresh,
                             snapshot.fair_sharing, now=now)
        # Most of the snapshot is pending: pick the holders out before sorting them.
        holders = sorted((key, w) for key, w in snapshot.workloads.items()
                         if w.admission is not None and holds_quota(w))
        for _, workload in holders:
            assert workload.admission is not None
            cq = workload.admission.cluster_queue
            if self.tree.has_queue(cq):
                usage = held_usage(workload)
                self.tree.add(cq, usage)
                self.holdings.add(cq, workload, usage)
        self.caps: dict[str, tuple[int, dict[str, int]]] = {}
        self.parking: dict[str, Waiting] = {}
        self.dry: set[str] = set()
        if self.capacity is not None:
            self.capacity.occupy_admitted(self.holdings.by_queue)

    def run(self) -> CycleResult:
        self._drain()
        self.open_holders = self._open_holders()
        pending = self._classify()
        self._admit(pending)
        return CycleResult(
            now=self.now,
            admitted=tuple(self.admitted),
            evicted=tuple(self.evicted),
            pending=PendingStatuses(self.waiting, self.snapshot.workloads, self.queues,
                                    self._quota_reasons),
        )

    # --- before admission ----------------------------------------------------------------

    def _drain(self) -> None:
        """Evict what stopped queues drain and what an admin deactivated."""
        for key in sorted(self.holdings.queue_of):
            cq = self.holdings.queue_of[key]
            workload = self.holdings.by_queue[cq][key]
            if workload.state is not WorkloadState.ADMITTED:
                continue
            why = drain_reason(self.snapshot, workload, cq)
            if why is not None:
                self.tree.remove(cq, self.holdings.usage[key])
                self.holdings.remove(key)
                self._release(key)
                self.evicted.append(EvictionDecision(key, "", None, cq, why))

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
            pc = workload.priority_class
            if not route[1] or not workload.active or (pc is not None and pc not in classes):
                self._hold(key, workload)
                continue
            found = entry(key, workload)
            if found is None:  # an invalid request
                self._hold(key, workload)
                continue
            queued.setdefault(route[0], []).append(found)  # type: ignore[arg-type]
        for entries in queued.values():
            entries.sort()
        return queued

    def _hold(self, key: str, workload: Workload) -> None:
        """Record what holds a pending workload back before any quota is measured."""
        cq_name, held = static_reasons(self.snapshot, workload, self.inactive)
        if (cq_name is not None and cq_name in self.queues
                and cq_name not in self.inactive and request_problem(workload) is None):
            plan = self.assigner.assign(self.queues[cq_name], workload)
            held += [r for r in self._plan_reasons(plan) if r.code in _PERMANENT]
        self.waiting[key] = Waiting(cq_name, held)

    # --- admission -----------------------------------------------------------------------

    def _admit(self, queued: dict[str, list[Entry]]) -> None:
        heap: list[tuple[CohortKey, bool, str]] = []
        index = dict.fromkeys(queued, 0)
        for name in sorted(queued):
            first = queued[name][0]
            heapq.heappush(heap, ((False, 0, first[0], first[1], first[2]), False, name))
        push, pop = heapq.heappush, heapq.heappop
        while heap:
            key, requeued, name = pop(heap)
            cq = self.queues[name]
            mine = queued[name]
            at = index[name]
            settled = not requeued and self._settled(cq)
            if settled and name in self.dry:
                start, at = at, self._park_tail(cq, mine, at)
                if at == len(mine):
                    continue
                if at > start:
                    index[name] = at
                    top = mine[at]
                    push(heap, ((False, 0, top[0], top[1], top[2]), False, name))
                    continue
            workload = mine[at][3]
            shape_ = self._shape(workload, mine[at][2])
            outcome = self._outcome(cq, workload, shape_)
            # A borrower waits for the non-borrowing heads of its cohort; one that does
            # not fit in a settled pool is decided at once: waiting cannot help it.
            if not requeued and (outcome[0] is Mode.FIT or not settled):
                actual = self._cohort_key(cq, workload, outcome, key)
                if actual > key:
                    push(heap, (actual, True, name))
                    continue
            # Once a head fails, its queue's room is short: the quick filter starts paying.
            if outcome[0] is Mode.FIT:
                self.dry.discard(name)
            else:
                self.dry.add(name)
            blocking = self._decide(cq, workload, outcome, shape_)
            at = index[name] = at + 1
            if blocking and cq.queueing_strategy is QueueingStrategy.STRICT_FIFO:
                for behind in mine[at:]:
                    self._block(cq, behind[3], workload.key)
                continue
            if at < len(mine):
                top = mine[at]
                push(heap, ((False, 0, top[0], top[1], top[2]), False, name))

    def _may_search(self, root: str) -> bool:
        """Whether a victim search in the pool could find anyone not yet protected."""
        return bool(self.open_holders.get(root))

    def _settled(self, cq: ClusterQueue) -> bool:
        """Whether the quick filter may park workloads of ``cq`` unevaluated: a
        BestEffortFIFO queue (a StrictFIFO head's mode decides what it blocks) in a pool
        where nothing can be evicted any more this cycle, so its room only shrinks."""
        if cq.queueing_strategy is QueueingStrategy.STRICT_FIFO:
            return False
        if cq.name in self.rooms:  # nodes serve every pool: an eviction anywhere frees some
            return not any(self.open_holders.values())
        return not self.open_holders.get(self.tree.root(cq.name))

    def _park_tail(self, cq: ClusterQueue, mine: list[Entry], at: int) -> int:
        """Park the workloads from ``at`` on that cannot fit now (so not later either);
        return the index of the first one that might."""
        name = cq.name
        version = self.tree.version(name)
        cached = self.caps.get(name)
        if cached is None or cached[0] != version:
            cached = self.caps[name] = (version, caps(self.tree, name, self.view_keys[name]))
        limit = cached[1]
        parked = self._parking(name)
        waiting = self.waiting
        get = limit.get
        rooms = self.rooms.get(name)
        end = len(mine)
        while at < end:
            top = mine[at]
            # It cannot fit if it needs more of some resource than ``caps`` allows, or if
            # its pods fit the free nodes of none of the queue's flavors.
            for resource, amount in top[4]:
                if amount > get(resource, -1):
                    break
            else:
                if rooms is None or not self._no_room_for(top[3], rooms):
                    break
            waiting[top[2]] = parked
            at += 1
        return at

    def _parking(self, name: str) -> Waiting:
        """The waiting entry shared by a queue's workloads parked before their reasons are
        written (read, never changed)."""
        parked = self.parking.get(name)
        if parked is None:
            parked = self.parking[name] = Waiting(name, [], quota=True)
        return parked

    def _no_room_for(self, workload: Workload, flavors: tuple[str, ...]) -> bool:
        """Whether even the least pods of a one-pod-set workload fit no flavor's nodes."""
        if self.capacity is None or len(workload.pod_sets) != 1:
            return False
        pod_set = workload.pod_sets[0]
        return self.capacity.cannot_place(pod_set, pod_set.min_count or pod_set.count, flavors)

    def _cohort_key(
        self, cq: ClusterQueue, workload: Workload, outcome: Outcome, optimistic: CohortKey
    ) -> CohortKey:
        _, borrows, usage, _ = outcome
        if not borrows:
            return optimistic  # (False, 0, ...): the key it was queued with
        share = 0
        if self.snapshot.fair_sharing:
            share = dominant_share(self.tree, cq.name, cq.fair_sharing_weight, usage)
        return (True, share, *pending_order(workload))

    def _decide(self, cq: ClusterQueue, workload: Workload, outcome: Outcome,
                shape_: int) -> bool:
        """Admit, preempt for, or park ``workload``; True when it waits at the head."""
        mode, borrows, usage, _ = outcome
        if mode is Mode.FIT:
            if self.capacity is None:  # quota alone decides: the verdict's flavors suffice
                self._admit_as(cq.name, workload,
                               self._admission(cq, workload, outcome, shape_), usage, borrows)
                return False
            rooms = self.rooms.get(cq.name)
            if rooms is not None and self._no_room_for(workload, rooms):
                # Not even its least pods fit any flavor's nodes: no plan can place it.
                # Its reason is written after the pass, like a quota reason.
                self.dry.add(cq.name)
                self.waiting[workload.key] = self._parking(cq.name)
                return True
            if self._grant(workload, self._plan(cq, workload, shape_)):
                return False
        # Failures are cached by shape and pool state: in a full cohort most pending
        # workloads repeat a few shapes, and nothing changes between them.
        state = (cq.name, shape_, self.tree.version(cq.name))
        if (mode is Mode.PREEMPT and self._may_search(self.tree.root(cq.name))
                and (can_preempt(cq) or self._any_evicting(cq))
                and not self.failed.known(cq, workload, usage, shape_)):
            victims = find_victims(self.search, cq, workload, Wanted(cq.name, usage))
            if victims:
                return self._preempt(cq, workload, victims)
            self.failed.add(cq, workload, usage, shape_)
        if state not in self.no_partial:
            partial = partial_plan(self.assigner, cq, workload)
            if partial is not None and self._grant(workload, partial):
                return False
            self.no_partial.add(state)
        if mode is Mode.FIT:  # the quota fits, the nodes do not
            self.dry.add(cq.name)
            self.waiting[workload.key] = self._no_room(cq, workload, self._plan(cq, workload,
                                                                                shape_))
            return True
        # Quota reasons are written after the pass, against the final usage: that is the
        # state the workload waits in, and one evaluation then serves every equal shape.
        self.waiting[workload.key] = Waiting(cq.name, [], quota=True)
        return mode is Mode.PREEMPT

    def _quota_reasons(
        self, name: str, key: str, workload: Workload
    ) -> tuple[list[Reason], list[str]]:
        cq = self.queues[name]
        shape_ = self._shape(workload, key)
        state = (cq.name, shape_, self.tree.version(cq.name))
        parked = self.parked.get(state)
        if parked is None:
            # From the verdict's numbers, not a Plan: tens of thousands of workloads wait
            # in distinct (queue, shape) states, and a Plan per state cost more than the
            # whole admission pass.
            found = self._verdict(cq, workload, shape_).explain(self._numbers(cq.name))
            if found.mode is Mode.FIT:
                parked = self._room_reasons(workload, found.usage)
            else:
                tree = self.tree
                reclaimable = self._reclaimable(cq, found.usage)
                hints = reasons.short_hints(cq.name, sorted(found.short), tree, reclaimable,
                                            self.hint_memo)
                parked = (reasons.explained_reasons(cq.name, found.findings, tree,
                                                    self._holders, self.reason_memo), hints)
            self.parked[state] = parked
        return parked

    def _room_reasons(self, workload: Workload,
                      usage: Usage) -> tuple[list[Reason], list[str]]:
        """Why a workload its quota admits in the final state waits: its flavors' nodes are
        short (the quick filter parked it), or room was freed after it was evaluated and
        the next cycle takes it."""
        if self.capacity is not None and len(workload.pod_sets) == 1:
            pod_set = workload.pod_sets[0]
            flavors = tuple(dict.fromkeys(flavor for flavor, _ in usage))
            found = self.capacity.shortage([(pod_set, pod_set.count, flavors)])
            if found is not None:
                return [found.reason], list(found.hints)
        return [reasons.pending_evaluation()], []

    def _numbers(self, name: str) -> dict[FlavorResource, tuple[int, int, int]]:
        """Per slot of the queue: (available, potential, nominal - used), for ``explain``."""
        version = self.tree.version(name)
        cached = self.numbers.get(name)
        if cached is not None and cached[0] == version:
            return cached[1]
        tree = self.tree
        numbers = {fr: (tree.available(name, fr), tree.potential(name, fr),
                        tree.nominal(name, fr) - tree.usage(name, fr))
                   for fr in self.view_keys[name]}
        self.numbers[name] = (version, numbers)
        return numbers

    def _shape(self, workload: Workload, key: str | None = None) -> int:
        key = workload.key if key is None else key
        if self.memo is not None:
            return self.memo.id_of(key, workload, self.floors)
        found = self.shapes.get(key)
        if found is None:
            seen = shape(workload)
            if self.floors:  # a flavor's min-priority makes the priority part of the shape
                seen = (*seen, (workload.priority,))
            found = self.shape_ids.setdefault(seen, len(self.shape_ids))
            self.shapes[key] = found
        return found

    def _view(self, name: str) -> tuple[int, ...]:
        version = self.tree.version(name)
        cached = self.views.get(name)
        if cached is not None and cached[0] == version:
            return cached[1]
        tree = self.tree
        view = tuple(value for fr in self.view_keys[name]
                     for value in (tree.available(name, fr), tree.usage(name, fr)))
        self.views[name] = (version, view)
        return view

    def _outcome(self, cq: ClusterQueue, workload: Workload, shape_: int) -> Outcome:
        """The verdict alone (mode, borrows, usage); a ``Plan`` is built only when needed."""
        state = (cq.name, shape_, self.tree.version(cq.name))
        found = self.outcomes.get(state)
        if found is None:
            found = self.outcomes[state] = self._verdict(cq, workload, shape_).measure(
                self.tree, cq.name)
        return found

    def _verdict(self, cq: ClusterQueue, workload: Workload, shape_: int) -> Verdict:
        compiled = (self.layouts[cq.name], shape_)
        verdict = self.verdicts.get(compiled)
        if verdict is None:
            verdict = self.verdicts[compiled] = Verdict(cq, workload, self.assigner.mismatch)
        return verdict

    def _plan(self, cq: ClusterQueue, workload: Workload, shape_: int) -> Plan:
        view = self._view(cq.name)
        if self.capacity is not None:  # a plan also reads what the nodes have free
            view = (*view, self.capacity.version)
        state = (cq.name, shape_, view)
        plan = self.plans.get(state)
        if plan is None:
            plan = self.assigner.assign(cq, workload)
            self.plans[state] = plan
        return plan

    def _any_evicting(self, cq: ClusterQueue) -> bool:
        return any(self.holdings.evicting.get(name) for name in self.tree.members(cq.name))

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

    def _admission(self, cq: ClusterQueue, workload: Workload, outcome: Outcome,
                   shape_: int) -> Admission:
        """The admission of a FIT outcome, from the flavors its verdict chose."""
        return self._verdict(cq, workload, shape_).admission(cq.name, workload, outcome[3])

    def _admit_as(self, cq: str, workload: Workload, admission: Admission,
                  usage: Usage, borrows: bool) -> None:
        self.tree.add(cq, usage)
        admitted = transitions.admitted(workload, admission, self.now)
        self.holdings.add(cq, admitted, dict(usage))
        self.fresh.add(workload.key)
        self.admitted.append(AdmissionDecision(workload.key, admission, borrows))

    def _release(self, key: str) -> None:
        if self.capacity is not None:
            self.capacity.release(key)

    def _no_room(self, cq: ClusterQueue, workload: Workload, plan: Plan) -> Waiting:
        """Why a workload the quota admits waits for its flavors' nodes."""
        assert self.capacity is not None
        found = self.capacity.shortage(demands(workload, plan.pod_sets))
        if found is None:  # room appeared after the decision: the next cycle takes it
            return Waiting(cq.name, [reasons.pending_evaluation()])
        return Waiting(cq.name, [found.reason], list(found.hints))

    def _preempt(self, cq: ClusterQueue, workload: Workload, victims: Sequence[Victim]) -> bool:
        waiting_on: list[str] = []
        deadline: datetime | None = None
        root = self.tree.root(cq.name)
        for victim in victims:
            key = victim.workload.key
            # Every victim is now evicted or waited for: protected from later searches.
            self.open_holders[root] -= 1
            if victim.evicting:
                waiting_on.append(key)
                ends = grace_ends(victim.workload)
                if ends is not None:
                    deadline = max(deadline, ends) if deadline else ends
                continue
            self.evicted.append(
                EvictionDecision(key, workload.key, victim.cause, victim.cluster_queue)
            )
            grace = checkpoint_grace(victim.workload)
            if grace is None:
                self.tree.remove(victim.cluster_queue, self.holdings.usage[key])
                self.holdings.remove(key)
                self._release(key)
                continue
            # Checkpointing victims keep their quota until they checkpoint or time runs out.
            usage = self.holdings.usage[key]
            self.holdings.remove(key)
            self.holdings.add(victim.cluster_queue, replace(
                victim.workload, state=WorkloadState.EVICTING, evicted_at=self.now), usage)
            waiting_on.append(key)
            deadline = max(deadline, self.now + grace) if deadline else self.now + grace
        if not waiting_on:
            plan = self.assigner.assign(cq, workload)
            if plan.mode is Mode.FIT:
                if self._grant(workload, plan):
                    return False
                self.waiting[workload.key] = self._no_room(cq, workload, plan)
                return True
        # What it waits for is spoken for: no later preemptor in this cycle counts on it.
        self.fresh.update(waiting_on)
        found = [reasons.waiting_for_preempted(sorted(waiting_on), deadline)]
        self.waiting[workload.key] = Waiting(cq.name, found)
        return True

    def _block(self, cq: ClusterQueue, workload: Workload, head: str) -> None:
        self.waiting[workload.key] = Waiting(cq.name, [], blocked_by=head, quota=True)

    # --- reasons -------------------------------------------------------------------------

    def _plan_reasons(self, plan: Plan) -> list[Reason]:
        return reasons.plan_reasons(plan, self.tree, self._holders, self.reason_memo)

    def _holders(self, cq: str, fr: tuple[str, str]) -> list[str]:
        key = (self.tree.root(cq), fr, self.tree.version(cq))
        found = self.holder_cache.get(key)
        if found is None:
            found = self.holdings.top(self.tree.members(cq), fr)
            self.holder_cache[key] = found
        return found

    def _reclaimable(self, cq: ClusterQueue, usage: Usage) -> bool:
        return cq.preemption.reclaim_within_cohort is not ReclaimWithinCohort.NEVER and all(
            amount <= self.tree.nominal(cq.name, fr) for fr, amount in usage.items()
        )
