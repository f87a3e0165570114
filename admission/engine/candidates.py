"""Victim candidates of a quota pool (PURE): who could be taken, and a bound on how much.

In a full cohort most preemptors find no victims, and each search used to list and sort
every holder of every borrowing ClusterQueue first. ``reach`` answers from per-queue
usage totals by priority (kept by ``Holdings`` until the queue changes) how much all the
candidates any policy allows could free together; when that is short, the search ends
before any candidate is listed. ``FailedSearches`` remembers searches that found
nothing, so an equal or harder one in the same pool state is not run again.
``MinRuntimes`` keeps victims younger than their ``berth.dev/min-runtime`` out of every
search.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence, Set
from datetime import datetime, timedelta

from admission.engine.workload import Holdings
from quota.core.checkpoints import lost_since
from quota.core.model import ClusterQueue, PriorityClass, WithinClusterQueue
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload, WorkloadState, queue_time

_NEWER_EQUAL = WithinClusterQueue.LOWER_OR_NEWER_EQUAL_PRIORITY


# Per (pool, slots, priority, policy flags): (the slots' versions, evicting changes) when
# computed, what every candidate queue of the pool could free per slot, and the queues
# counted with their share, so one queue's bound is the pool's minus its own part.
ReachMemo = dict[tuple[object, ...],
                 tuple[tuple[tuple[int, ...], int], list[int], dict[str, list[int]]]]


def reach(tree: QuotaTree, holdings: Holdings, protected: Set[str],
          memo: dict[str, tuple[int, tuple[str, ...]]], pools: ReachMemo, cq: str,
          frs: Sequence[FlavorResource], priority: int, *, everything: bool,
          lower: bool) -> list[int]:
    """Per slot of ``frs``, at least what other queues' candidates could free for a
    preemptor of ``priority``: every unprotected holder of a borrowing queue
    (``everything``), or the evicting ones plus, if ``lower``, those of lower priority;
    the evicting holders of the other queues always (``memo``: those queues per pool).
    The pool's sum is kept in ``pools`` until the pool changes: the queues of a pool ask
    with the same few priorities and slots thousands of times a cycle."""
    key = (tree.root(cq), tuple(frs), None if everything or not lower else priority,
           everything, lower)
    # Only the slots asked about: what another flavor's admissions change is not read.
    stamp = (tree.slot_versions(cq, frs), holdings.evicting_changes)
    found = pools.get(key)
    if found is None or found[0] != stamp:
        found = pools[key] = (stamp, *_pool_reach(tree, holdings, protected, memo, cq, frs,
                                                  priority, everything=everything,
                                                  lower=lower))
    _, total, parts = found
    own = parts.get(cq)
    if own is None:
        return list(total)
    return [all_ - mine for all_, mine in zip(total, own, strict=True)]


def _pool_reach(tree: QuotaTree, holdings: Holdings, protected: Set[str],
                memo: dict[str, tuple[int, tuple[str, ...]]], cq: str,
                frs: Sequence[FlavorResource], priority: int, *, everything: bool,
                lower: bool) -> tuple[list[int], dict[str, list[int]]]:
    """``reach`` summed over every queue of ``cq``'s pool (``cq`` included), with each
    counted queue's own part. Neither ``everything`` nor ``lower``: only evicting holders
    count (a borrowing queue's part is then its evicting usage too), so only the queues
    with some are read."""
    borrowing = tree.borrowing_members(cq, frs) if everything or lower else set()
    total = [0] * len(frs)
    parts: dict[str, list[int]] = {}
    slots = tuple(enumerate(frs))
    for other in borrowing:
        part = parts[other] = [0] * len(frs)
        per_slot = holdings.totals(other, protected)
        for j, fr in slots:
            found = per_slot.get(fr)
            if found is None:
                continue
            priorities, sums, evicting = found
            if everything:
                part[j] = sums[-1]
            else:
                part[j] = sums[bisect_left(priorities, priority) if lower else 0] + evicting
            total[j] += part[j]
    for other in _evicting_members(tree, holdings, memo, cq):
        if other not in borrowing:
            part = parts[other] = [0] * len(frs)
            per_slot = holdings.totals(other, protected)
            for j, fr in slots:
                found = per_slot.get(fr)
                if found is not None:
                    part[j] = found[2]
                    total[j] += part[j]
    return total, parts


def _evicting_members(tree: QuotaTree, holdings: Holdings,
                      memo: dict[str, tuple[int, tuple[str, ...]]], cq: str) -> tuple[str, ...]:
    root = tree.root(cq)
    found = memo.get(root)
    if found is None or found[0] != holdings.evicting_changes:
        members = tree.members(cq)
        found = memo[root] = (holdings.evicting_changes,
                              tuple(q for q in members if holdings.evicting.get(q)))
    return found[1]


def cohort_holders(tree: QuotaTree, holdings: Holdings, protected: Set[str], cq: str,
                   frs: Sequence[FlavorResource], *,
                   evicting_only: bool = False) -> list[tuple[Workload, str]]:
    """Unprotected workloads of other queues in the pool that could free what is needed:
    those of queues borrowing a needed slot (unless ``evicting_only``), and any already
    evicting."""
    out: list[tuple[Workload, str]] = []
    borrowing = set() if evicting_only else set(tree.borrowers(cq, frs))
    kept = protected is holdings.protected  # its open holders are kept per queue
    for other in tree.members(cq):
        if other == cq or other not in holdings.by_queue:
            continue
        if other in borrowing:
            if kept:
                out += holdings.open_entries(other)
            else:
                out.extend((w, other) for k, w in holdings.entries(other) if k not in protected)
        elif holdings.evicting.get(other):
            out.extend((w, other) for k, w in holdings.entries(other)
                       if k not in protected and w.state is WorkloadState.EVICTING)
    return out


def lost_work(workload: Workload, held: Mapping[FlavorResource, int],
              needed: Mapping[FlavorResource, int], now: datetime | None) -> float:
    """The work evicting ``workload`` now would throw away: seconds since its last
    checkpoint (or admission) × how much of what the preemptor needs it holds, each slot
    counted as a fraction of the need so that GPUs and bytes of memory weigh alike.
    A ranking, never a quantity: a float is fine here."""
    since = lost_since(workload)
    if now is None or since is None:
        return 0.0
    # Not clipped at zero: with equal holdings, the later start ranks first even when a
    # caller's clock is behind the admission stamps.
    seconds = (now - since).total_seconds()
    share = sum(held.get(fr, 0) / amount for fr, amount in needed.items() if amount > 0)
    return seconds * share


class FailedSearches:
    """Victim searches that found nothing, per (queue, pool version, needed slots): a
    later one in the same state needing no less, with no more candidates open to it (not
    a higher priority, not older under LowerOrNewerEqualPriority), fails too.

    Callers that know the workload's shape id (equal shapes in one queue and pool state
    need the same quota) get the common case answered from one lookup: the last failure
    of that shape, which covers every earlier one (a failure is recorded only when none
    covered it)."""

    __slots__ = ("by_shape", "failures", "timestamp", "tree")

    def __init__(self, tree: QuotaTree,
                 timestamp: RequeuingTimestamp = RequeuingTimestamp.EVICTION) -> None:
        self.tree = tree
        # Ages are queue times (``queue_time`` by ``timestamp``), as ``within_allows`` has.
        self.timestamp = timestamp
        # key -> (priority, queue time, amounts) of each failed search
        self.failures: dict[tuple[str, object, tuple[FlavorResource, ...]],
                            list[tuple[int, datetime, tuple[int, ...]]]] = {}
        # (queue, shape id, pool version) -> (priority, queue time) of the last failure
        self.by_shape: dict[tuple[str, int, object], tuple[int, datetime]] = {}

    def _state(self, cq: ClusterQueue, stamp: object) -> object:
        """The pool version, or the caller's ``stamp`` of a narrower state (only the
        searched slots' versions, for a search that reads no other slot)."""
        return self.tree.version(cq.name) if stamp is None else stamp

    def add(self, cq: ClusterQueue, workload: Workload,
            usage: Mapping[FlavorResource, int], shape: int | None = None, *,
            by_amount: bool = True, stamp: object = None) -> None:
        """Record a failed search; ``by_amount=False`` for one that also had to place
        pods, which proves nothing for other shapes needing as much quota (sixteen 1-GPU
        pods may place where one 16-GPU pod cannot). ``stamp``: the searched slots' state
        for the amounts (see ``_state``); a shape's failure stands for the pool version."""
        priority, age, _ = self.preemptor(cq, workload)
        if by_amount:
            frs = tuple(sorted(usage))
            self.add_at(cq.name, self._state(cq, stamp), frs, tuple([usage[fr] for fr in frs]),
                        priority, age)
        if shape is not None:
            self.by_shape[(cq.name, shape, self.tree.version(cq.name))] = (priority, age)

    def preemptor(self, cq: ClusterQueue, workload: Workload) -> tuple[int, datetime, bool]:
        """What a lookup reads of a preemptor in ``cq``: its priority, its queue time, and
        whether its queue is LowerOrNewerEqualPriority (see ``_covers``)."""
        return (workload.priority, queue_time(workload, self.timestamp),
                cq.preemption.within_cluster_queue is _NEWER_EQUAL)

    def shape_failed(self, cq: ClusterQueue, workload: Workload, shape: int) -> bool:
        """Whether an earlier workload of this shape, in this pool state, found nothing
        with every candidate ``workload`` could have."""
        return self.shape_failed_at(cq.name, shape, *self.preemptor(cq, workload))

    def shape_failed_at(self, cq: str, shape: int, priority: int, age: datetime,
                        newer: bool) -> bool:
        """``shape_failed`` with what it reads of the preemptor given (``preemptor``)."""
        last = self.by_shape.get((cq, shape, self.tree.version(cq)))
        return last is not None and _covers(last[0], last[1], priority, age, newer)

    def add_at(self, cq: str, state: object, frs: tuple[FlavorResource, ...],
               amounts: tuple[int, ...], priority: int, age: datetime) -> None:
        """``add`` by amount with the state and what it reads of the preemptor given."""
        self.failures.setdefault((cq, state, frs), []).append((priority, age, amounts))

    def known(self, cq: ClusterQueue, workload: Workload,
              usage: Mapping[FlavorResource, int], shape: int | None = None,
              stamp: object = None) -> bool:
        """Whether an earlier search in the same pool state already proves none exists."""
        priority, age, newer = self.preemptor(cq, workload)
        if shape is not None and self.shape_failed_at(cq.name, shape, priority, age, newer):
            return True
        frs = tuple(sorted(usage))
        return self.known_at(cq.name, self._state(cq, stamp), frs,
                             tuple([usage[fr] for fr in frs]), priority, age, newer)

    def known_amounts(self, cq: ClusterQueue, workload: Workload,
                      frs: tuple[FlavorResource, ...], amounts: tuple[int, ...],
                      stamp: object = None) -> bool:
        """``known`` by amount, for callers holding the needed slots sorted and their
        amounts in that order already."""
        return self.known_at(cq.name, self._state(cq, stamp), frs, amounts,
                             *self.preemptor(cq, workload))

    def known_at(self, cq: str, state: object, frs: tuple[FlavorResource, ...],
                 amounts: tuple[int, ...], priority: int, age: datetime, newer: bool) -> bool:
        """``known_amounts`` with the state (``_state``) and what it reads of the preemptor
        (``preemptor``) given: a walk asks for one workload many times."""
        failures = self.failures.get((cq, state, frs))
        if not failures:
            return False
        for failed, queued, needed in failures:
            if priority > failed or (priority == failed and newer and age < queued):
                continue  # not covered: see ``_covers``
            for have, need in zip(amounts, needed, strict=True):
                if have < need:
                    break
            else:
                return True
        return False


def _covers(priority: int, queued: datetime, preemptor: int, age: datetime,
            newer: bool) -> bool:
    """Whether a failed search by a preemptor of ``priority`` queued at ``queued`` had every
    candidate one of priority ``preemptor`` queued at ``age`` could have: it is not of
    higher priority, nor older at equal priority where LowerOrNewerEqualPriority opens
    newer equal ones to the older."""
    if preemptor > priority:
        return False
    return not (preemptor == priority and newer and age < queued)


class MinRuntimes:
    """``berth.dev/min-runtime`` of ClusterQueues and WorkloadPriorityClasses: a holder
    admitted less than that long ago is no victim (the longer of its queue's and its
    class's). Built only when some queue or class sets one."""

    __slots__ = ("classes", "now", "queues")

    def __init__(self, queues: Mapping[str, ClusterQueue],
                 classes: Mapping[str, PriorityClass], now: datetime) -> None:
        self.now = now
        self.queues = {n: q.min_runtime for n, q in queues.items() if q.min_runtime}
        self.classes = {n: c.min_runtime for n, c in classes.items() if c.min_runtime}

    @classmethod
    def of(cls, queues: Mapping[str, ClusterQueue], classes: Mapping[str, PriorityClass],
           now: datetime) -> MinRuntimes | None:
        found = cls(queues, classes, now)
        return found if found.queues or found.classes else None

    def protected_until(self, workload: Workload, cluster_queue: str) -> datetime | None:
        """When ``workload`` (held in ``cluster_queue``) may be preempted, if not yet."""
        if workload.admitted_at is None:
            return None
        runtime = max(self.queues.get(cluster_queue) or timedelta(0),
                      self.classes.get(workload.priority_class or "") or timedelta(0))
        until = workload.admitted_at + runtime
        return until if until > self.now else None
