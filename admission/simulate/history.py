"""The simulator's own usage history (PURE): what fair sharing with memory and admission
fair sharing read, as the loop reads them from the ledger's usage intervals.

Every admission opens a stretch per slot of its usage, tagged with its ClusterQueue and
LocalQueue; the release of its quota closes it. At each cycle the decayed usage per
ClusterQueue (``berth.fairSharingHalfLife``) and the weighted decayed usage per LocalQueue
(``admissionFairSharing``) are computed from them at the virtual ``now``, with the same
formula (``quota.core.fairness.decayed``) the ledger's query implements.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from quota.core.fairness import Fairness, Held, decayed
from quota.core.tree import FlavorResource
from quota.core.workload import Workload


class _Stretch:
    __slots__ = ("cluster_queue", "held", "local_queue", "slot")

    def __init__(self, cluster_queue: str, local_queue: str, slot: FlavorResource,
                 held: Held) -> None:
        self.cluster_queue, self.local_queue, self.slot, self.held = (
            cluster_queue, local_queue, slot, held)


class History:
    """Stretches of usage on the virtual clock; open ones by workload key."""

    def __init__(self, fairness: Fairness) -> None:
        self.fairness = fairness
        self.closed: list[_Stretch] = []
        self.open: dict[str, list[_Stretch]] = {}

    @property
    def wanted(self) -> bool:
        """Whether anything reads the history (else nothing is kept)."""
        memory = self.fairness.enable and self.fairness.memory_half_life is not None
        return memory or self.fairness.admission is not None

    def admitted(self, workload: Workload, now: datetime) -> None:
        if not self.wanted or workload.admission is None:
            return
        lq = f"{workload.namespace}/{workload.queue_name}"
        cq = workload.admission.cluster_queue
        self.open[workload.key] = [_Stretch(cq, lq, slot, Held(amount, now, None))
                                   for slot, amount in workload.admission.usage().items()]

    def released(self, key: str, now: datetime) -> None:
        for stretch in self.open.pop(key, ()):
            stretch.held.end = now
            self.closed.append(stretch)

    def _all(self) -> list[_Stretch]:
        return [*self.closed, *(s for held in self.open.values() for s in held)]

    def decayed_usage(self, now: datetime) -> dict[str, dict[FlavorResource, int]] | None:
        """Per ClusterQueue and slot, its decayed usage (None without memory)."""
        half_life = self.fairness.memory_half_life
        if not self.fairness.enable or half_life is None:
            return None
        groups: dict[tuple[str, FlavorResource], list[Held]] = {}
        for stretch in self._all():
            groups.setdefault((stretch.cluster_queue, stretch.slot), []).append(stretch.held)
        out: dict[str, dict[FlavorResource, int]] = {}
        for (cq, slot), held in sorted(groups.items()):
            out.setdefault(cq, {})[slot] = round(decayed(held, now, half_life))
        return out

    def queue_usage(self, now: datetime,
                    weights: Mapping[str, int]) -> dict[str, float] | None:
        """Per LocalQueue, its weighted decayed usage (None without admission fair sharing);
        ``weights``: LocalQueue weights in milli-units by key (1000 if absent)."""
        afs = self.fairness.admission
        if afs is None:
            return None
        groups: dict[tuple[str, str], list[Held]] = {}
        for stretch in self._all():
            groups.setdefault((stretch.local_queue, stretch.slot[1]), []).append(stretch.held)
        per_queue: dict[str, dict[str, float]] = {}
        penalty = afs.entry_penalty()
        for (lq, resource), held in sorted(groups.items()):
            amount = decayed(held, now, afs.half_life, penalty) / 1000  # milli-units to units
            usage = per_queue.setdefault(lq, {})
            usage[resource] = usage.get(resource, 0.0) + amount
        return {lq: afs.weighted(usage, weights.get(lq, 1000)) for lq, usage in per_queue.items()}
