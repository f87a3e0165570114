"""Capacity reservations of one cycle (PURE): quota kept for a workload that needs
preemption but found no victims.

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
quota tree, so every later decision of the cycle sees it, and it is released when the
admission pass ends: the workloads it held back wait with ``ReservedByHigherPriority``.
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


_NONE: list[Reservation] = []  # nothing lifted (shared, never changed)


class Reservations:
    """The reservations made in one cycle: per quota pool, per ClusterQueue, one each.

    A reservation holds back the workloads of no higher priority than its holder, its own
    queue's later ones included (Kueue would decide those in later cycles, while the
    holder still waits: the same quota is not theirs either). Workloads of higher priority
    are decided with it out of the tree, where that could change their decision."""

    __slots__ = ("by_pool", "lowest", "queues", "tree")

    def __init__(self, tree: QuotaTree) -> None:
        self.tree = tree
        self.by_pool: dict[str, list[Reservation]] = {}
        self.lowest: dict[str, int] = {}  # per pool, the lowest holder priority
        self.queues: set[str] = set()  # those that reserved: Kueue decides one head each

    def reserve(self, cq: ClusterQueue, workload: Workload, usage: Usage, *, borrows: bool,
                fair_sharing: bool) -> None:
        """Keep what ``workload`` (which needs preemption and found no victims) would take,
        where Kueue's rule says so."""
        tree = self.tree
        if cq.name in self.queues:
            return  # its first such workload holds the queue's share
        if cq.preemption.reclaim_within_cohort is ReclaimWithinCohort.ANY:
            return  # lent quota always comes back: no need to hold it
        if not tree.in_cohort(cq.name) or not preemption_possible(
                tree, cq, usage, fair_sharing=fair_sharing):
            return
        kept = to_reserve(tree, cq.name, usage, borrows=borrows)
        if kept:
            tree.add(cq.name, kept)
            self.queues.add(cq.name)
            root = tree.root(cq.name)
            self.by_pool.setdefault(root, []).append(
                Reservation(workload.key, workload.priority, cq.name, kept))
            self.lowest[root] = min(self.lowest.get(root, workload.priority),
                                    workload.priority)

    def lift(self, cq: str, workload: Workload, usage: Usage, *,
             searching: bool) -> list[Reservation]:
        """Take out of the tree the reservations of ``cq``'s pool made for workloads of
        lower priority than ``workload`` (wanting ``usage``): they do not hold it back.
        Only where it may look for victims (``searching``) or giving them back could make
        ``usage`` fit: elsewhere they change nothing. ``restore`` puts them back."""
        tree = self.tree
        root = tree.root(cq)
        made = self.by_pool.get(root)
        priority = workload.priority
        if not made or priority <= self.lowest[root]:
            return _NONE
        lower = [r for r in made if r.priority < priority]
        if not searching:
            for fr, amount in usage.items():
                if amount > tree.available(cq, fr) + sum(r.usage.get(fr, 0) for r in lower):
                    return _NONE
        for reservation in lower:
            tree.remove(reservation.cluster_queue, reservation.usage)
        return lower

    def restore(self, lifted: list[Reservation]) -> None:
        for reservation in lifted:
            self.tree.add(reservation.cluster_queue, reservation.usage)

    def release(self) -> None:
        """Give every reservation back: the cycle's decisions are made."""
        for made in self.by_pool.values():
            for reservation in made:
                self.tree.remove(reservation.cluster_queue, reservation.usage)

    def holding(self, cq: str, workload: Workload, usage: Usage) -> Reservation | None:
        """The first reservation in ``cq``'s pool made for another workload of no lower
        priority, of a slot ``usage`` takes."""
        for reservation in self.by_pool.get(self.tree.root(cq), ()):
            if (reservation.holder != workload.key and reservation.priority >= workload.priority
                    and any(fr in usage for fr in reservation.usage)):
                return reservation
        return None
