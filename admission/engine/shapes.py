"""Shape ids kept across cycles (PURE).

A cycle needs each waiting workload's shape (what flavor assignment reads of it) to find
the verdicts and reasons it shares with equal workloads; building and hashing that nested
tuple for every one of tens of thousands of waiting workloads, every cycle, was about half
of what the durable loop spent per waiting workload. The loop keeps one ``ShapeMemo`` and
hands it to every cycle with the snapshot: a workload whose pod sets are the very object
seen before (the loop's cache keeps unchanged workloads) gets its id back at once. It
never changes a decision: an id stands for exactly one shape while the memo lives.
"""

from __future__ import annotations

from collections.abc import Mapping

from admission.engine.workload import Shape, shape
from quota.core.workload import PodSet, Workload

_SLACK = 1024  # entries beyond the live workloads before a prune


class ShapeMemo:
    """Workload key -> (its pod sets object, priority if it counts, shape id)."""

    __slots__ = ("_by_key", "_ids")

    def __init__(self) -> None:
        self._by_key: dict[str, tuple[tuple[PodSet, ...], int | None, int]] = {}
        self._ids: dict[Shape, int] = {}

    def __len__(self) -> int:
        return len(self._by_key)

    def id_of(self, key: str, workload: Workload, with_priority: bool) -> int:
        """The id of the workload's shape (with its priority when flavors set floors)."""
        priority = workload.priority if with_priority else None
        found = self._by_key.get(key)
        if found is not None and found[0] is workload.pod_sets and found[1] == priority:
            return found[2]
        seen = shape(workload)
        if priority is not None:
            seen = (*seen, (priority,))
        number = self._ids.setdefault(seen, len(self._ids))
        self._by_key[key] = (workload.pod_sets, priority, number)
        return number

    def prune(self, live: Mapping[str, Workload]) -> None:
        """Forget workloads that are gone; start over when old shapes pile up (ids are
        only compared within one cycle, so renumbering between cycles is harmless)."""
        if len(self._ids) > 4 * len(live) + _SLACK:
            self._by_key.clear()
            self._ids.clear()
        elif len(self._by_key) > len(live) + _SLACK:
            self._by_key = {k: v for k, v in self._by_key.items() if k in live}
