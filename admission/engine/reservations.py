"""Capacity reservations of one cycle (PURE): quota kept for a workload that needs
preemption but found no victims, or that waits for checkpointing victims (``keep``).

Kueue's rule (``reserveCapacityForUnreclaimablePreempt``): a workload that could be
admitted by preempting (the quota's maximum holds it and a policy could free room for it)
but for which no victims exist now keeps the quota it would take reserved in its cohort
for the rest of the cycle, unless its ClusterQueue is guaranteed to get lent quota back
(``reclaimWithinCohort: Any``). Otherwise a lower-priority workload of another
ClusterQueue could borrow that quota in the same cycle, and the queue could not take it
back. A StrictFIFO head is such a workload like any other; its queue waits behind it.

How much is reserved, per (flavor, resource) it would take: within nominal quota, what is
left of the ClusterQueue's nominal quota (never more than it asked); borrowing, all of it,
or up to nominal plus borrowing limit where one is set. A reservation is usage in the
quota tree, made where Kueue's order would decide the workload among the borrowers
(after every workload within nominal quota, by priority among the borrowers), so every
decision after it sees it; it is released when the admission pass ends, and the workloads
it held back wait with ``ReservedByHigherPriority``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from quota.core.model import BorrowWithinCohortPolicy, ClusterQueue, ReclaimWithinCohort
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload

Usage = Mapping[FlavorResource, int]


class Reservation(NamedTuple):
    """Quota one waiting workload keeps in its ClusterQueue for the rest of the cycle."""

    holder: str  # the workload's key (namespace/name)
    priority: int
    cluster_queue: str
    usage: dict[FlavorResource, int]
    preempting: bool = False  # it waits for victims it chose (``keep``), not for any


def preemption_possible(tree: QuotaTree, cq: ClusterQueue, usage: Usage, *,
                        fair_sharing: bool) -> bool:
    """Whether a policy could free room for ``usage`` in every slot it is short of: the
    ClusterQueue's nominal quota holds it, a subtree below the root does (reclaiming from
    work borrowing from further up), or it may preempt while borrowing (Kueue's Preempt
    mode, as opposed to NoFit)."""
    p = cq.preemption
    while_borrowing = p.borrow_within_cohort.policy is not BorrowWithinCohortPolicy.NEVER or (
        fair_sharing and p.reclaim_within_cohort is not ReclaimWithinCohort.NEVER)
    if while_borrowing:
        return True
    name = cq.name
    for fr, amount in usage.items():
        if amount <= tree.available(name, fr) or amount <= tree.nominal(name, fr):
            continue
        if not tree.borrowing_height(name, fr, amount)[1]:
            return False
    return True


def to_reserve(tree: QuotaTree, cq: str, usage: Usage, *,
               borrows: bool) -> dict[FlavorResource, int]:
    """The quota a workload needing ``usage`` keeps (slots of nothing left out)."""
    out: dict[FlavorResource, int] = {}
    for fr, amount in usage.items():
        limits = tree.limits(cq, fr)
        used = tree.usage(cq, fr)
        if not borrows:
            kept = min(amount, limits.nominal - used)
        elif limits.borrowing_limit is None:
            kept = amount
        else:
            kept = min(amount, limits.nominal + limits.borrowing_limit - used)
        if kept > 0:
            out[fr] = kept
    return out


class Reservations:
    """The reservations of one cycle: planned when a workload finds no victims, made when
    the admission pass reaches the point where Kueue would have decided that workload
    among the borrowers (``Reservations.key``), so that only the workloads decided after
    it are held back: its own queue's later ones within nominal quota, and borrowers of
    higher priority, still go first. One per ClusterQueue (Kueue decides one head per
    queue a cycle)."""

    __slots__ = ("by_pool", "fresh", "planned", "queues", "tree")

    def __init__(self, tree: QuotaTree) -> None:
        self.tree = tree
        self.by_pool: dict[str, list[Reservation]] = {}
        # ClusterQueue -> (holder, the quota it would take, whether that borrows)
        self.planned: dict[str, tuple[Workload, dict[FlavorResource, int], bool]] = {}
        self.queues: set[str] = set()  # those that planned one this cycle
        self.fresh: set[str] = set()  # planned, the point where to make it not yet set

    def plan(self, cq: ClusterQueue, workload: Workload, usage: Usage, *, borrows: bool,
             fair_sharing: bool) -> bool:
        """Plan to keep what ``workload`` (which needs preemption and found no victims)
        would take, where Kueue's rule says so; True when planned."""
        tree = self.tree
        if cq.name in self.queues:
            return False  # its first such workload holds the queue's share
        if cq.preemption.reclaim_within_cohort is ReclaimWithinCohort.ANY:
            return False  # lent quota always comes back: no need to hold it
        if not tree.in_cohort(cq.name) or not preemption_possible(
                tree, cq, usage, fair_sharing=fair_sharing):
            return False
        self.queues.add(cq.name)
        self.fresh.add(cq.name)
        self.planned[cq.name] = (workload, dict(usage), borrows)
        return True

    def unscheduled(self, cq: str) -> bool:
        """Whether ``cq`` planned a reservation whose point in the pass is not set yet (it
        is now)."""
        if cq not in self.fresh:
            return False
        self.fresh.discard(cq)
        return True

    def make(self, cq: str) -> None:
        """Reserve what the planned workload of ``cq`` would take, as the queue stands now."""
        holder, usage, borrows = self.planned.pop(cq)
        kept = to_reserve(self.tree, cq, usage, borrows=borrows)
        if kept:
            self.tree.add(cq, kept)
            self.by_pool.setdefault(self.tree.root(cq), []).append(
                Reservation(holder.key, holder.priority, cq, kept))

    def keep(self, cq: ClusterQueue, workload: Workload, usage: Usage) -> None:
        """Reserve at once, for the rest of the pass, what ``workload`` takes once the
        checkpointing victims it waits for are gone: the quota that is free now goes to no
        later workload of the cycle (its plain victims keep running until then, holding
        theirs). Kueue adds a preemptor's usage to the cycle's snapshot when it issues its
        preemptions; without this, work behind it took that room and was evicted for it
        again in the next cycle, at the same instant, until the grace ended."""
        name = cq.name
        tree = self.tree
        kept = to_reserve(tree, name, usage, borrows=tree.borrows_for(name, usage))
        if kept:
            tree.add(name, kept)
            self.by_pool.setdefault(tree.root(name), []).append(
                Reservation(workload.key, workload.priority, name, kept, preempting=True))

    def release(self) -> None:
        """Give every reservation back: the cycle's decisions are made."""
        self.planned.clear()
        for made in self.by_pool.values():
            for reservation in made:
                self.tree.remove(reservation.cluster_queue, reservation.usage)

    def holding(self, cq: str, workload: Workload, usage: Usage) -> Reservation | None:
        """The first reservation in ``cq``'s pool, made for another workload, of a slot
        ``usage`` takes."""
        for reservation in self.by_pool.get(self.tree.root(cq), ()):
            if reservation.holder != workload.key and any(
                    fr in usage for fr in reservation.usage):
                return reservation
        return None
