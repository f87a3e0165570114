"""Room a preemption vacates (PURE): what the victims evicted in a cycle free beyond what
their preemptor takes is not given, in that cycle, to work a victim would take it back from.

A preempted workload queues again at once. In the next cycle it comes before the
lower-priority work of its own ClusterQueue, and it may reclaim from the borrowers of other
ClusterQueues its queue's ``reclaimWithinCohort`` allows. Had such work taken its room, the
victim would evict it to get the room back: work admitted and evicted again a cycle later,
at one instant (and, where the victim's own preemptor was evicted in between, the same
preemptor evicting the same workload twice). Kueue counts a victim's quota as used until the
victim is gone, a cycle later. So, for the rest of the cycle, the room is kept

- from workloads of the victim's ClusterQueue of lower priority than the victim, and
- from workloads of other ClusterQueues of its pool that would borrow to take it and that
  the victim's queue may reclaim from;

every other workload (higher priority in the victim's queue, within nominal quota in
another) takes it at once. The cycle holds the room in the quota tree only while it decides
such a workload (``keep``, ``give_back``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from admission.engine.preemption import reclaim_allows
from quota.core.model import ClusterQueue
from quota.core.tree import FlavorResource, QuotaTree, TreeMark
from quota.core.workload import Workload

Usage = Mapping[FlavorResource, int]
Held = list[tuple[str, dict[FlavorResource, int]]]  # (ClusterQueue, usage) held in the tree


class Vacated:
    """Room one victim evicted in this cycle left and its preemptor did not take."""

    __slots__ = ("cluster_queue", "usage", "victim")

    def __init__(self, victim: Workload, cluster_queue: str,
                 usage: dict[FlavorResource, int]) -> None:
        self.victim = victim
        self.cluster_queue = cluster_queue
        self.usage = usage


class VacatedRoom:
    """The room victims vacated in this cycle, by ClusterQueue and by pool."""

    __slots__ = ("by_pool", "by_queue", "held", "mark", "queues", "sums", "tree")

    def __init__(self, tree: QuotaTree, queues: Mapping[str, ClusterQueue]) -> None:
        self.tree = tree
        self.queues = queues
        self.by_queue: dict[str, list[Vacated]] = {}
        self.by_pool: dict[str, list[Vacated]] = {}
        # While room is held: the pool's versions before, and its version once held. A
        # decision that changed nothing gets the versions back with the room, so the
        # caches of that state stay valid (most decisions while room is held are failures).
        self.mark: TreeMark | None = None
        self.held = 0
        # (other queues', queue, priority) -> the room kept, summed per ClusterQueue: heads of
        # one queue and priority repeat, and one addition per queue is cheaper than per victim
        self.sums: dict[tuple[bool, str, int], Held] = {}

    def record(self, freed: Iterable[tuple[str, Workload, Usage]], taken: Usage) -> None:
        """Victims ``freed`` (ClusterQueue, workload, the usage it gave back), evicted for a
        preemptor admitted now in ``taken``: its need is counted against the first victims
        first; what is left of each is recorded."""
        need = dict(taken)
        for cq, victim, usage in freed:
            left: dict[FlavorResource, int] = {}
            for fr, amount in usage.items():
                took = min(amount, need.get(fr, 0))
                if took:
                    need[fr] -= took
                if amount > took:
                    left[fr] = amount - took
            if left:
                vacated = Vacated(victim, cq, left)
                self.sums.clear()
                self.by_queue.setdefault(cq, []).append(vacated)
                self.by_pool.setdefault(self.tree.root(cq), []).append(vacated)

    def _own(self, cq: str, workload: Workload) -> list[Vacated]:
        """The room victims of higher priority than ``workload`` left in its queue."""
        return [v for v in self.by_queue.get(cq, ()) if v.victim.priority > workload.priority]

    def _reclaimable(self, cq: str, workload: Workload) -> list[Vacated]:
        """The room victims of other queues of its pool left whose queues may reclaim from
        ``workload`` borrowing."""
        return [v for v in self.by_pool.get(self.tree.root(cq), ())
                if v.cluster_queue != cq and reclaim_allows(
                    self.queues[v.cluster_queue].preemption.reclaim_within_cohort,
                    v.victim, workload)]

    def keep(self, cq: str, workload: Workload) -> Held:
        """Hold in the tree, while ``workload`` of ``cq`` is decided, the room its own
        queue's victims of higher priority left; ``give_back`` after."""
        return self._hold(False, cq, workload) if self.by_queue else []

    def keep_borrowed(self, cq: str, workload: Workload) -> Held:
        """Likewise, once ``workload`` is known to borrow with that room free, the room
        other queues' victims left that may reclaim from it."""
        return self._hold(True, cq, workload) if self.by_queue else []

    def _hold(self, others: bool, cq: str, workload: Workload) -> Held:
        key = (others, cq, workload.priority)
        held = self.sums.get(key)
        if held is None:
            per: dict[str, dict[FlavorResource, int]] = {}
            for vacated in (self._reclaimable if others else self._own)(cq, workload):
                into = per.setdefault(vacated.cluster_queue, {})
                for fr, amount in vacated.usage.items():
                    into[fr] = into.get(fr, 0) + amount
            held = self.sums[key] = list(per.items())
        if not held:
            return held
        tree = self.tree  # every queue held is of cq's pool
        if self.mark is None:
            self.mark = tree.mark(cq)
        for queue, usage in held:
            tree.add(queue, usage)
        self.held = tree.version(cq)
        return held

    def give_back(self, held: Held) -> None:
        """Take the room ``keep`` held out of the tree again."""
        if not held:
            return
        tree, mark = self.tree, self.mark
        unchanged = tree.version(held[0][0]) == self.held
        for queue, usage in held:
            tree.remove(queue, usage)
        if unchanged and mark is not None:
            tree.restore(mark)
        self.mark = None

    def in_pool(self, cq: str) -> bool:
        """Whether any victim of ``cq``'s pool left room this cycle."""
        return bool(self.by_pool) and self.tree.root(cq) in self.by_pool

    def holding(self, cq: str, workload: Workload, usage: Usage) -> Vacated | None:
        """The first room kept from ``workload`` (its own queue's, then another's) of a slot
        ``usage`` takes, whose victim has the higher priority: it waits for that one."""
        if not self.by_queue:
            return None
        for vacated in (*self._own(cq, workload), *self._reclaimable(cq, workload)):
            if vacated.victim.priority > workload.priority and any(
                    fr in usage for fr in vacated.usage):
                return vacated
        return None
