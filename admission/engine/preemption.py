"""Preemption (PURE): the smallest set of victims that lets a preemptor fit.

Victims are chosen here and evicted by the cycle. Which workloads are candidates follows
Kueue's classical rules: while the ClusterQueue is under its nominal quota in the
resources it is short of, the cohort's borrowers are candidates and the preemptor must
then fit without borrowing (``borrowWithinCohort`` lets it borrow past those of low enough
priority); otherwise only its own queue's workloads are, and it may borrow. A request over
the queue's nominal quota in a resource it is short of preempts nobody unless
``borrowWithinCohort`` (or fair sharing) allows preempting while borrowing.
Candidates are tried in a fixed order (already evicting first, then borrowers in other
ClusterQueues, lower priority, least work lost: held resources × time since the last
checkpoint or admission) and removed from the quota tree until the preemptor fits; then
every victim that turns out not to be needed is put back, so no more is evicted than
needed.

"Fits" means placed, not only within quota: where the preemptor's flavors have nodes,
its pods must also fit the nodes with the victims' pods gone (``Wanted.placeable``, the
placement admission uses). Victims that would free quota for a pod no node can then take
are not chosen, and the same search serves a preemptor the quota admits but the full
nodes do not (victims by the same candidate rules and order, removed until it places).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from admission.engine.candidates import (
    MinRuntimes,
    ReachMemo,
    cohort_holders,
    lost_work,
    reach,
)
from admission.engine.fairshare import dominant_share
from admission.engine.victim_sets import hopeless, minimal
from admission.engine.workload import Holdings
from quota.core.fairness import DEFAULT_STRATEGIES, FINAL, PreemptionStrategy
from quota.core.model import (
    BorrowWithinCohortPolicy,
    ClusterQueue,
    ReclaimWithinCohort,
    WithinClusterQueue,
)
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.reasons import PreemptionCause
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload, WorkloadState, queue_time


@dataclass(frozen=True, slots=True)
class Victim:
    workload: Workload
    cluster_queue: str
    cause: PreemptionCause

    @property
    def evicting(self) -> bool:
        """Already evicting (checkpoint grace running): waited for, not evicted again."""
        return self.workload.state is WorkloadState.EVICTING


class Wanted(NamedTuple):
    """What a preemptor needs: its ClusterQueue, the quota its flavors would take (a
    verdict's usage; no ``Plan`` is built for the many searches that find nothing), and
    where its flavors have nodes, whether its pods can be placed once the workloads of
    the given keys gave theirs back (None: quota alone decides)."""

    cluster_queue: str
    usage: Mapping[FlavorResource, int]
    placeable: Callable[[Iterable[str]], bool] | None = None


@dataclass(frozen=True, slots=True)
class Search:
    """Everything victim selection reads; ``protected`` were admitted in this cycle."""

    tree: QuotaTree
    queues: Mapping[str, ClusterQueue]
    holdings: Holdings
    protected: Set[str]
    fair_sharing: bool = False
    now: datetime | None = None  # for the work a victim would lose; None ranks all alike
    strategies: tuple[PreemptionStrategy, ...] = DEFAULT_STRATEGIES
    memory: dict[str, dict[FlavorResource, int]] = field(default_factory=dict)  # with memory
    min_runtimes: MinRuntimes | None = None  # None: no queue or class sets one
    timestamp: RequeuingTimestamp = RequeuingTimestamp.EVICTION  # waitForPodsReady's
    # Victims the last search passed over because they are younger than their minimum
    # runtime: key -> when that protection ends (the preemptor's reason says so).
    held_back: dict[str, datetime] = field(default_factory=dict)
    evicting_memo: dict[str, tuple[int, tuple[str, ...]]] = field(default_factory=dict)
    reach_memo: ReachMemo = field(default_factory=dict)


def within_allows(policy: WithinClusterQueue, preemptor: Workload, victim: Workload,
                  timestamp: RequeuingTimestamp) -> bool:
    """Whether ``withinClusterQueue`` lets ``preemptor`` evict ``victim`` of its own queue;
    "newer" compares queue times (``queue_time``), as Kueue's SatisfiesPreemptionPolicy."""
    if policy is WithinClusterQueue.LOWER_PRIORITY:
        return victim.priority < preemptor.priority
    if policy is WithinClusterQueue.LOWER_OR_NEWER_EQUAL_PRIORITY:
        return victim.priority < preemptor.priority or (
            victim.priority == preemptor.priority
            and queue_time(victim, timestamp) > queue_time(preemptor, timestamp)
        )
    return False


def reclaim_allows(policy: ReclaimWithinCohort, preemptor: Workload, victim: Workload) -> bool:
    if policy is ReclaimWithinCohort.ANY:
        return True
    if policy is ReclaimWithinCohort.LOWER_PRIORITY:
        return victim.priority < preemptor.priority
    return False


def can_preempt(cq: ClusterQueue) -> bool:
    """Whether any policy of ``cq`` could ever choose a victim."""
    p = cq.preemption
    return (
        p.within_cluster_queue is not WithinClusterQueue.NEVER
        or p.reclaim_within_cohort is not ReclaimWithinCohort.NEVER
        or p.borrow_within_cohort.policy is not BorrowWithinCohortPolicy.NEVER
    )


def find_victims(
    search: Search, cq: ClusterQueue, preemptor: Workload, plan: Wanted
) -> tuple[Victim, ...] | None:
    """The minimal victims that let ``plan`` fit, or None when no allowed set does.

    Kueue's classical candidate rules: the cohort's borrowers are candidates only while
    the queue is under its nominal quota in the resources needing preemption, and then
    the preemptor must fit without borrowing, unless ``borrowWithinCohort`` lets it
    borrow past those of priority low enough (at most ``maxPriorityThreshold``); a
    preemptor the queue's nominal quota holds outright (with its current usage) may
    reclaim while borrowing. Otherwise only its own queue's workloads are candidates,
    and it may borrow. Already evicting workloads are waited for, never chosen again."""
    tree, needed, name = search.tree, plan.usage, cq.name
    search.held_back.clear()
    available = {fr: tree.available(name, fr) for fr in needed}
    short = [fr for fr, a in needed.items() if a > available[fr]] or list(needed)
    may_borrow = cq.preemption.borrow_within_cohort.policy is not BorrowWithinCohortPolicy.NEVER
    fair = search.fair_sharing and tree.in_cohort(name)
    if not (may_borrow or fair or tree.in_nested_cohort(name)) and any(
            needed[fr] > tree.nominal(name, fr) for fr in short):
        return None  # it would borrow what it is short of: it may not preempt for that
    under = all(tree.usage(name, fr) < tree.nominal(name, fr) for fr in short)
    mine = _own_holders(search, cq, preemptor)  # Victims are built only if a search runs
    own_held = dict.fromkeys(needed, 0)
    held_by = search.holdings.usage
    for key, _ in mine:
        for fr, amount in held_by[key].items():
            if fr in own_held:
                own_held[fr] += amount
    # Without room to get within nominal by evicting its own work, no pass that must fit
    # without borrowing can succeed: the other queues' holders open to such a pass only
    # are not listed, nor counted in the bound.
    room = _own_room(tree, cq, plan, own_held)
    unborrowed_open = (under or may_borrow) and room
    if _unreachable(search, cq, preemptor, plan, own_held, available,
                    unborrowed=unborrowed_open, borrowing=may_borrow):
        return None
    own = [Victim(w, name, PreemptionCause.IN_CLUSTER_QUEUE) for _, w in mine]
    others = cohort_holders(tree, search.holdings, search.protected, cq.name, list(needed),
                            evicting_only=not (fair or unborrowed_open or may_borrow))
    if fair:
        found = _fair(search, cq, preemptor, plan, own, others)
        if found is not None:
            return found
    outright = all(tree.usage(cq.name, fr) + a <= tree.nominal(cq.name, fr)
                   for fr, a in needed.items())
    free, unborrowed = _cohort_candidates(cq, preemptor, others, outright=outright,
                                          unborrowed=unborrowed_open, borrowing=may_borrow)
    if not room or (not unborrowed and not any(not v.evicting for v in free)):
        passes: tuple[bool, ...] = (True,)
    elif not may_borrow and not outright:
        passes = (False, True)
    else:
        passes = (True, False)
    for borrow in passes:
        pool = free + own if borrow else free + unborrowed + own
        # Every pass first runs the order-free proof (``hopeless``): it reads the tree as if
        # all candidates were gone, without touching it, so it costs less than one failing
        # pass, which removes and puts back every candidate; most searches find nobody.
        if hopeless(search, plan, pool, borrow=borrow):
            continue
        found = minimal(search, plan, _ordered(search, plan, pool), borrow=borrow)
        if found is not None:
            return found
    return None


def _cohort_candidates(cq: ClusterQueue, preemptor: Workload,
                       others: Sequence[tuple[Workload, str]], *, outright: bool,
                       unborrowed: bool, borrowing: bool) -> tuple[list[Victim], list[Victim]]:
    """The other queues' candidates: those the preemptor may take while it borrows (the
    evicting ones; all when the queue's nominal quota holds it outright; with
    ``borrowing`` (borrowWithinCohort), those of lower priority up to its threshold), and
    (if ``unborrowed``) those it may take only if it then fits without borrowing."""
    policy = cq.preemption
    bwc = policy.borrow_within_cohort
    threshold = bwc.max_priority_threshold
    free: list[Victim] = []
    kept_back: list[Victim] = []
    for w, q in others:
        if w.state is WorkloadState.EVICTING:
            free.append(Victim(w, q, PreemptionCause.IN_COHORT_RECLAMATION))
        elif not reclaim_allows(policy.reclaim_within_cohort, preemptor, w):
            continue
        elif outright:
            free.append(Victim(w, q, PreemptionCause.IN_COHORT_RECLAMATION))
        elif (not borrowing or w.priority >= preemptor.priority
              or (threshold is not None and w.priority > threshold)):
            if unborrowed:
                kept_back.append(Victim(w, q, PreemptionCause.IN_COHORT_RECLAMATION))
        else:
            free.append(Victim(w, q, PreemptionCause.IN_COHORT_RECLAIM_WHILE_BORROWING))
    return free, kept_back


def _unreachable(search: Search, cq: ClusterQueue, preemptor: Workload, plan: Wanted,
                 own_held: Mapping[FlavorResource, int],
                 available: Mapping[FlavorResource, int], *, unborrowed: bool,
                 borrowing: bool) -> bool:
    """Whether even every candidate any policy below allows, all evicted together, would
    leave some needed slot short: removing usage u anywhere in the pool raises what the
    queue may take by at most u (``own_held``: what the own candidates hold per needed
    slot; ``available``: what it may take now; ``unborrowed``: whether other queues'
    holders open to a fit without borrowing are candidates; ``borrowing``: whether
    borrowWithinCohort opens lower-priority ones).
    Most failing searches end here, before any sorting."""
    tree, policy = search.tree, cq.preemption
    reclaims = unborrowed or (search.fair_sharing and tree.in_cohort(cq.name))
    reclaim = policy.reclaim_within_cohort
    everything = reclaims and reclaim is ReclaimWithinCohort.ANY
    lower = (reclaims and reclaim is ReclaimWithinCohort.LOWER_PRIORITY) or (
        borrowing and reclaim is not ReclaimWithinCohort.NEVER)
    frs = list(plan.usage)
    most_freed = reach(tree, search.holdings, search.protected, search.evicting_memo,
                       search.reach_memo, cq.name,
                       frs, preemptor.priority, everything=everything, lower=lower)
    for fr, most in zip(frs, most_freed, strict=True):
        if most + available[fr] + own_held[fr] < plan.usage[fr]:
            return True
    return False


def _own_room(tree: QuotaTree, cq: ClusterQueue, plan: Wanted,
              own_held: Mapping[FlavorResource, int]) -> bool:
    """Whether evicting every own candidate (holding ``own_held``) could bring the queue
    within its nominal quota with the preemptor admitted: reclaiming from other queues
    never lowers its own usage, so without that room no search that must fit without
    borrowing can succeed."""
    return all(tree.usage(cq.name, fr) - own_held[fr] + amount <= tree.nominal(cq.name, fr)
               for fr, amount in plan.usage.items())


def _own_holders(search: Search, cq: ClusterQueue,
                 preemptor: Workload) -> list[tuple[str, Workload]]:
    """The own queue's holders ``withinClusterQueue`` lets ``preemptor`` take, by key."""
    policy, protected = cq.preemption.within_cluster_queue, search.protected
    timestamp = search.timestamp
    if policy is WithinClusterQueue.NEVER:  # only the evicting ones: no policy check to pay
        return [(key, w) for key, w in search.holdings.entries(cq.name)
                if key not in protected and w.state is WorkloadState.EVICTING]
    return [
        (key, w)
        for key, w in search.holdings.entries(cq.name)
        if key not in protected
        and (w.state is WorkloadState.EVICTING
             or within_allows(policy, preemptor, w, timestamp))
    ]


def _lost(search: Search, plan: Wanted, victim: Victim) -> float:
    key = victim.workload.key
    return lost_work(victim.workload, search.holdings.usage[key], plan.usage, search.now)


def _ordered(search: Search, plan: Wanted, victims: Sequence[Victim]) -> list[Victim]:
    own_queue, held, needed, now = plan.cluster_queue, search.holdings.usage, plan.usage, search.now

    def key(v: Victim) -> tuple[bool, bool, int, float, str]:
        workload = v.workload
        name = workload.key
        return (workload.state is not WorkloadState.EVICTING, v.cluster_queue == own_queue,
                workload.priority, lost_work(workload, held[name], needed, now), name)

    return sorted(victims, key=key)


def _fair(
    search: Search,
    cq: ClusterQueue,
    preemptor: Workload,
    plan: Wanted,
    own: list[Victim],
    others: list[tuple[Workload, str]],
) -> tuple[Victim, ...] | None:
    """Fair-sharing preemption: take from the queues whose share stays above ours, by
    Kueue's strategies in their order. The first is tried alone; when it does not make
    room, the second (``LessThanInitialShare``) may add one victim per queue whose share
    before the eviction is above the preemptor's with the workload (rule S2-b)."""
    tree, queues = search.tree, search.queues
    policy = cq.preemption.reclaim_within_cohort
    memory = search.memory
    mine = dominant_share(tree, cq.name, cq.fair_sharing_weight, plan.usage,
                          memory.get(cq.name))
    candidates = [
        Victim(w, q, PreemptionCause.IN_COHORT_FAIR_SHARING)
        for w, q in others
        if w.state is WorkloadState.EVICTING
        or reclaim_allows(policy, preemptor, w)
    ]

    def share(name: str, delta: Mapping[FlavorResource, int] | None = None) -> int:
        return dominant_share(tree, name, queues[name].fair_sharing_weight, delta,
                              memory.get(name))

    def passes(strategy: PreemptionStrategy, victim: Victim) -> bool:
        if strategy is FINAL:
            usage = search.holdings.usage[victim.workload.key]
            return share(victim.cluster_queue, {fr: -a for fr, a in usage.items()}) >= mine
        return share(victim.cluster_queue) > mine

    def by(strategy: PreemptionStrategy, once_more: PreemptionStrategy | None = None,
           ) -> Callable[[Victim], bool]:
        taken: set[str] = set()  # queues the second strategy took its one victim from

        def allowed(victim: Victim) -> bool:
            if victim.evicting or victim.cluster_queue == cq.name:
                return True
            if passes(strategy, victim):
                return True
            if once_more is None or victim.cluster_queue in taken:
                return False
            if passes(once_more, victim):
                taken.add(victim.cluster_queue)
                return True
            return False

        return allowed

    ordered = sorted(
        candidates,
        key=lambda v: (-share(v.cluster_queue), v.workload.priority,
                       _lost(search, plan, v), v.workload.key),
    )
    pool = [*ordered, *_ordered(search, plan, own)]
    strategies = search.strategies
    found = minimal(search, plan, pool, borrow=True, allowed=by(strategies[0]))
    if found is None and len(strategies) > 1:
        found = minimal(search, plan, pool, borrow=True,
                         allowed=by(strategies[0], strategies[1]))
    return found
