"""Workload helpers for the engine (PURE): who holds quota, how much, validity, grace."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence, Set
from datetime import datetime

# Re-exported: the cycle and its plan read grace through the engine.
from quota.core.checkpoints import CHECKPOINT_GRACE as CHECKPOINT_GRACE
from quota.core.checkpoints import checkpoint_grace as checkpoint_grace
from quota.core.tree import FlavorResource
from quota.core.workload import (
    HOLDS_QUOTA,
    PREFERRED_TOPOLOGY,
    REQUIRED_TOPOLOGY,
    WAITING,
    Workload,
    WorkloadState,
)


def holds_quota(workload: Workload) -> bool:
    """Admitted or still checkpointing after eviction: its admission counts as usage."""
    return workload.admission is not None and workload.state in HOLDS_QUOTA


def grace_ends(workload: Workload) -> datetime | None:
    """When an evicting victim's checkpoint grace runs out, where known."""
    grace = checkpoint_grace(workload)
    if grace is None or workload.evicted_at is None:
        return None
    return workload.evicted_at + grace


def is_pending(workload: Workload) -> bool:
    return workload.state in WAITING


def is_deactivated(workload: Workload) -> bool:
    return not workload.active or workload.state is WorkloadState.DEACTIVATED


def held_usage(workload: Workload) -> dict[FlavorResource, int]:
    """Total quota the workload holds per (flavor, resource); empty if it holds none."""
    return workload.admission.usage() if workload.admission is not None else {}


def request_problem(workload: Workload) -> str | None:
    """Why the workload's request is invalid, or None when it is fine."""
    if not workload.pod_sets:
        return "the workload has no pod sets"
    names: set[str] = set()
    for pod_set in workload.pod_sets:
        if pod_set.name in names:
            return f"pod set {pod_set.name} appears twice"
        names.add(pod_set.name)
        if pod_set.count < 1:
            return f"pod set {pod_set.name} has count {pod_set.count}, at least 1 is needed"
        if pod_set.min_count is not None and not 1 <= pod_set.min_count <= pod_set.count:
            return (
                f"pod set {pod_set.name} has minCount {pod_set.min_count}, "
                f"which must be between 1 and count {pod_set.count}"
            )
        for resource, amount in pod_set.requests.items():
            if amount < 0:
                return f"pod set {pod_set.name} requests a negative amount of {resource}"
    return None


Shape = tuple[tuple[object, ...], ...]


def shape(workload: Workload) -> Shape:
    """What flavor assignment reads from a workload: equal shapes get equal plans."""
    return tuple([
        (
            p.name, p.count, p.min_count, tuple(sorted(p.requests.items())),
            tuple(sorted(p.node_selector.items())) if p.node_selector else (),
            p.affinity_terms, p.tolerations,
            # Topology annotations change which flavors match and where pods go.
            (p.annotations.get(REQUIRED_TOPOLOGY), p.annotations.get(PREFERRED_TOPOLOGY))
            if p.annotations else None,
        )
        for p in workload.pod_sets
    ])


# (priorities ascending, cumulative usage in that order, usage by evicting holders)
Totals = tuple[list[int], list[int], int]


class Holdings:
    """Who holds quota in which ClusterQueue; changes as a cycle admits and evicts."""

    def __init__(self) -> None:
        self.by_queue: dict[str, dict[str, Workload]] = {}
        self.usage: dict[str, dict[FlavorResource, int]] = {}
        self.queue_of: dict[str, str] = {}
        self.evicting: dict[str, int] = {}  # ClusterQueue -> how many are evicting
        self.evicting_changes = 0  # bumped when ``evicting`` changes: lets callers cache
        # ClusterQueue -> its holders sorted by key: victim searches read them thousands
        # of times per cycle, and they change only on admission and eviction.
        self._sorted: dict[str, list[tuple[str, Workload]]] = {}
        self._totals: dict[str, dict[FlavorResource, Totals]] = {}
        # Keys no victim search may pick (a cycle's: admitted in it, or chosen as victims).
        # Grown through ``protect`` only, which keeps ``open_entries`` current.
        self.protected: set[str] = set()
        # ClusterQueue -> its holders not protected: the candidates searches list.
        self._open: dict[str, list[tuple[Workload, str]]] = {}

    def add(self, cq: str, workload: Workload, usage: dict[FlavorResource, int]) -> None:
        self.by_queue.setdefault(cq, {})[workload.key] = workload
        self._sorted.pop(cq, None)
        self._totals.pop(cq, None)
        self._open.pop(cq, None)
        self.usage[workload.key] = usage
        self.queue_of[workload.key] = cq
        if workload.state is WorkloadState.EVICTING:
            self.evicting[cq] = self.evicting.get(cq, 0) + 1
            self.evicting_changes += 1

    def remove(self, key: str) -> None:
        cq = self.queue_of.pop(key)
        workload = self.by_queue[cq].pop(key)
        self._sorted.pop(cq, None)
        self._totals.pop(cq, None)
        self._open.pop(cq, None)
        del self.usage[key]
        if workload.state is WorkloadState.EVICTING:
            self.evicting[cq] -= 1
            self.evicting_changes += 1

    def entries(self, cq: str) -> list[tuple[str, Workload]]:
        """(key, workload) of the ClusterQueue's holders, sorted by key (do not modify)."""
        found = self._sorted.get(cq)
        if found is None:
            held = self.by_queue.get(cq, {})
            found = self._sorted[cq] = [(key, held[key]) for key in sorted(held)]
        return found

    def protect(self, keys: Iterable[str]) -> None:
        """Add ``keys`` to ``protected`` (and forget their queues' ``open_entries``)."""
        for key in keys:
            self.protected.add(key)
            cq = self.queue_of.get(key)
            if cq is not None:
                self._open.pop(cq, None)

    def open_entries(self, cq: str) -> list[tuple[Workload, str]]:
        """(workload, ``cq``) of the ClusterQueue's holders not in ``protected``, by key (do
        not modify). Kept until the queue's holders change or one of them is protected."""
        found = self._open.get(cq)
        if found is None:
            protected = self.protected
            found = self._open[cq] = [(w, cq) for k, w in self.entries(cq)
                                      if k not in protected]
        return found

    def totals(self, cq: str, protected: Set[str]) -> dict[FlavorResource, Totals]:
        """Per slot the unprotected holders use: their priorities ascending, their usage
        summed in that order (``[0, first, first + second, ...]``), and the usage of those
        evicting. Kept until the queue's holders change: ``protected`` only grows during a
        cycle, so a kept answer can only count too many, which bounds (``candidates``)
        allow."""
        found = self._totals.get(cq)
        if found is None:
            usage = self.usage
            ranked = sorted((w.priority, k, w.state is WorkloadState.EVICTING)
                            for k, w in self.entries(cq) if k not in protected)
            found = self._totals[cq] = {}
            priorities = [p for p, _, _ in ranked]
            for fr in {fr for _, k, _ in ranked for fr in usage[k]}:
                sums, running, evicting = [0], 0, 0
                for _, k, evicts in ranked:
                    amount = usage[k].get(fr, 0)
                    running += amount
                    sums.append(running)
                    if evicts:
                        evicting += amount
                found[fr] = (priorities, sums, evicting)
        return found

    def top(self, cqs: Sequence[str], fr: FlavorResource, limit: int = 5) -> list[str]:
        """Keys of the workloads holding the most of ``fr`` in ``cqs``, largest first."""
        usage = self.usage
        found = [
            (-amount, key)
            for cq in cqs
            for key in self.by_queue.get(cq, ())
            if (amount := usage[key].get(fr, 0)) > 0
        ]
        return [key for _, key in heapq.nsmallest(limit, found)]
