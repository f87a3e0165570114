"""Room a preemption vacates (PURE): what the victims evicted in a cycle free beyond what
their preemptor takes is not given, in that cycle, to lower-priority work of the victims'
own ClusterQueues.

A preempted workload queues again at once, and in the next cycle it comes before that work
in its queue. Had the work taken its room, the victim would preempt it to get the room back:
work admitted and evicted again a cycle later, at one instant, and the victim's own
preemptor (when that one was evicted in turn) evicting the same workload twice. Kueue
counts a victim's quota as used until the victim is gone, a cycle later, so there the
victim is back first. Every other ClusterQueue of the pool may take the room: none of its
work comes after the victim in a queue.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload

Usage = Mapping[FlavorResource, int]


class Vacated(NamedTuple):
    """Room one victim evicted in this cycle left and its preemptor did not take."""

    key: str  # the victim's (namespace/name)
    priority: int
    usage: dict[FlavorResource, int]


class VacatedRoom:
    """The room victims vacated in this cycle, per ClusterQueue they were evicted from."""

    __slots__ = ("by_queue",)

    def __init__(self) -> None:
        self.by_queue: dict[str, list[Vacated]] = {}

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
                self.by_queue.setdefault(cq, []).append(Vacated(victim.key, victim.priority, left))

    def above(self, cq: str, priority: int) -> list[Vacated]:
        """The room vacated in ``cq`` by victims of higher priority than ``priority``: kept
        from a workload of that priority."""
        found = self.by_queue.get(cq)
        if not found:
            return []
        return [vacated for vacated in found if vacated.priority > priority]

    def keep(self, tree: QuotaTree, cq: str, priority: int) -> list[Vacated]:
        """Hold the room ``above`` in ``tree`` while a workload of ``priority`` in ``cq`` is
        decided; ``give_back`` after."""
        kept = self.above(cq, priority) if self.by_queue else []
        for vacated in kept:
            tree.add(cq, vacated.usage)
        return kept

    @staticmethod
    def give_back(tree: QuotaTree, cq: str, kept: list[Vacated]) -> None:
        for vacated in kept:
            tree.remove(cq, vacated.usage)

    def holding(self, cq: str, priority: int, usage: Usage) -> Vacated | None:
        """The first such room of a slot ``usage`` takes."""
        for vacated in self.above(cq, priority):
            if any(fr in usage for fr in vacated.usage):
                return vacated
        return None
