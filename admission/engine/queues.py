"""Pending queues in order, and the quota caps the quick filter reads (PURE).

A full cycle leaves most of tens of thousands of pending workloads where they are: their
pool ran dry early in the pass. Telling them so through flavor assignment costs far more
than the admissions. The filter below is a necessary condition for any admission: a
workload whose least possible request (every pod set at its minimum count) exceeds, for
some resource, the most any flavor of its ClusterQueue could give now, can neither be
admitted nor partially admitted now; nor later in the cycle while nothing in its pool can
be evicted, since admissions only take quota away.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from admission.engine.workload import request_problem
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.tree import FlavorResource, QuotaTree
from quota.core.workload import Workload, pending_order

# The least a workload could be admitted with: (resource, milli-units), positive amounts.
Need = tuple[tuple[str, int], ...]


class Entry(NamedTuple):
    """One pending workload in queue order, its ``pending_order`` first. Keys are unique,
    so sorting never compares the workload."""

    neg_priority: int
    queued_at: datetime  # creation, or the last eviction (``quota.core.workload.queue_time``)
    key: str
    workload: Workload
    need: Need  # its least request


def order_queue(
    order: list[Any], usage: Mapping[str, float] | None, workload_of: Callable[[Any], Workload]
) -> None:
    """Sort one ClusterQueue's pending workloads (``pending_order`` tuples or Entries) in
    place as the cycle takes them: priority, then age; under admission fair sharing
    (``usage`` of each LocalQueue given) the least used LocalQueue first, priority and age
    within one (the second sort is stable)."""
    order.sort()
    if usage is not None:
        order.sort(key=lambda o: usage.get(local_queue(workload_of(o)), 0.0))


def local_queue(workload: Workload) -> str:
    """The LocalQueue's key in admission fair sharing's usage: ``namespace/name``."""
    return f"{workload.namespace}/{workload.queue_name}"


# ``Entry(...)`` through ``tuple.__new__``: half the cost of the generated constructor, for
# the one Entry each pending workload gets every cycle.
_new = tuple.__new__


def entry(key: str, workload: Workload, timestamp: RequeuingTimestamp) -> Entry | None:
    """The workload's place in its ClusterQueue's order (requeued ones by ``timestamp``:
    ``waitForPodsReady.requeuingStrategy.timestamp``), with its least request; None
    when its request is invalid (``request_problem`` says why). A single pod set, by far
    the most common, is checked and measured in one pass: this runs for every pending
    workload of every cycle."""
    pod_sets = workload.pod_sets
    if len(pod_sets) != 1:
        if request_problem(workload) is not None:
            return None
        order = pending_order(workload, timestamp, key)
        return _new(Entry, (*order, workload, least_need(workload)))
    pod_set = pod_sets[0]
    count, least = pod_set.count, pod_set.min_count
    if count < 1 or (least is not None and not 1 <= least <= count):
        return None
    pods = least or count
    need: list[tuple[str, int]] = []
    for name, amount in pod_set.requests.items():
        if amount > 0:
            need.append((name, amount * pods))
        elif amount < 0:
            return None
    return _new(Entry, (*pending_order(workload, timestamp, key), workload, tuple(need)))


_SLACK = 1024  # entries beyond the live workloads before a prune


class EntryMemo:
    """Queue entries kept across cycles: workload key -> (the workload object, the
    timestamp setting, its ``entry``). The loop's cache keeps an unchanged workload as the
    very object it was, so its entry comes back without being built again (building one per
    pending workload per cycle was a seventh of a cycle at Kueue's baseline). A cache only:
    an entry is a function of the key, the (immutable) workload and the setting."""

    __slots__ = ("_by_key",)

    def __init__(self) -> None:
        self._by_key: dict[str, tuple[Workload, RequeuingTimestamp, Entry | None]] = {}

    def __len__(self) -> int:
        return len(self._by_key)

    def entry(self, key: str, workload: Workload, timestamp: RequeuingTimestamp) -> Entry | None:
        """``entry(key, workload, timestamp)``, reused while the workload is the same object."""
        found = self._by_key.get(key)
        if found is not None and found[0] is workload and found[1] is timestamp:
            return found[2]
        made = entry(key, workload, timestamp)
        self._by_key[key] = (workload, timestamp, made)
        return made

    def prune(self, live: Mapping[str, Workload]) -> None:
        """Forget workloads that are gone (and the objects they pinned)."""
        if len(self._by_key) > len(live) + _SLACK:
            self._by_key = {k: v for k, v in self._by_key.items() if k in live}


def least_need(workload: Workload) -> Need:
    """Per resource, the most any one pod set needs at its minimum count."""
    pod_sets = workload.pod_sets
    if len(pod_sets) == 1:
        pod_set = pod_sets[0]
        pods = pod_set.min_count or pod_set.count
        return tuple((name, amount * pods) for name, amount in pod_set.requests.items()
                     if amount > 0)
    need: dict[str, int] = {}
    for pod_set in pod_sets:
        pods = pod_set.min_count or pod_set.count
        for name, amount in pod_set.requests.items():
            if amount > 0 and amount * pods > need.get(name, 0):
                need[name] = amount * pods
    return tuple(need.items())


def caps(tree: QuotaTree, cq: str, slots: Iterable[FlavorResource]) -> dict[str, int]:
    """Per resource the ClusterQueue covers, the most any of its flavors could give now:
    a workload whose ``least_need`` exceeds it for some resource (or names a resource not
    in it) cannot be admitted now, not even partially."""
    out: dict[str, int] = {}
    for slot in slots:
        value = tree.available(cq, slot)
        if value > out.get(slot[1], -1):
            out[slot[1]] = value
    return out
