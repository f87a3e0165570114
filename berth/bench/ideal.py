"""The ideal: the pure engine over the same arrivals on a virtual clock (PURE).

No decision latency: at every instant something happens (an arrival, a run ending) the
engine runs until it neither admits nor evicts, and its decisions take effect at that very
instant. No scheduler can admit earlier on these arrivals, so this is the bound the real
run is compared with. Cycle durations are the engine's own compute time.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from admission.engine.cycle import run_cycle
from admission.engine.queues import EntryMemo
from admission.engine.shapes import ShapeMemo
from admission.engine.transitions import admitted, evicted
from admission.engine.types import Snapshot
from berth.bench.figures import RunRecord, WorkloadTimes
from berth.bench.shapes import Arrival
from quota.core.model import ClusterQueue, Cohort, LocalQueue, PriorityClass, ResourceFlavor
from quota.core.workload import Workload, WorkloadState
from quota.manifests.documents import ManifestObject
from quota.manifests.jobs import parse_workload

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
MAX_CYCLES = 10_000  # per instant; the engine settles in a few


def objects_snapshot(objects: Iterable[ManifestObject]) -> Snapshot:
    """The engine's view of ``objects`` with no workloads."""
    values = [item.obj for item in objects]
    return Snapshot(
        flavors={o.name: o for o in values if isinstance(o, ResourceFlavor)},
        cluster_queues={o.name: o for o in values if isinstance(o, ClusterQueue)},
        cohorts={o.name: o for o in values if isinstance(o, Cohort)},
        local_queues={o.key: o for o in values if isinstance(o, LocalQueue)},
        priority_classes={o.name: o for o in values if isinstance(o, PriorityClass)},
    )


def workload_of(arrival: Arrival, created_at: datetime) -> Workload:
    """The workload the ledger records when ``arrival`` is submitted."""
    return parse_workload(arrival.manifest(), source="bench", document=0, created_at=created_at)


class _Ideal:
    def __init__(self, objects: Snapshot, arrivals: Sequence[Arrival]) -> None:
        self.objects = objects
        self.arrivals = arrivals
        self.runtime = {a.key: a.runtime_ms for a in arrivals}
        self.classes = {a.key: a.workload_class for a in arrivals}
        self.workloads: dict[str, Workload] = {}  # unfinished
        self.due: dict[str, int] = {}  # key -> finish instant (ms)
        self.heap: list[tuple[int, str]] = []
        self.held_since: dict[str, int] = {}
        self.times: dict[str, list[float | None]] = {}  # created, admitted, finished
        self.evictions: dict[str, int] = {}
        self.cpu_used = 0.0  # milli-core seconds
        self.admissions = 0
        self.cycles: list[float] = []
        # Shape ids across cycles, as the durable loop keeps them: the ideal runs the
        # engine as the loop does, no slower.
        self.shapes = ShapeMemo()
        self.entries = EntryMemo()

    def run(self) -> RunRecord:
        upcoming = 0
        while upcoming < len(self.arrivals) or self.heap:
            next_arrival = self.arrivals[upcoming].at_ms if upcoming < len(self.arrivals) else None
            next_finish = self.heap[0][0] if self.heap else None
            now = min(t for t in (next_arrival, next_finish) if t is not None)
            while self.heap and self.heap[0][0] == now:
                _, key = heapq.heappop(self.heap)
                if self.due.get(key) == now:
                    self._finish(key, now)
            while upcoming < len(self.arrivals) and self.arrivals[upcoming].at_ms == now:
                arrival = self.arrivals[upcoming]
                self.workloads[arrival.key] = workload_of(arrival, _at(now))
                self.times[arrival.key] = [now / 1000, None, None]
                upcoming += 1
            self._settle(now)
        if self.workloads:
            raise RuntimeError(f"{len(self.workloads)} workloads never finished in the ideal run")
        return RunRecord(
            tuple(
                WorkloadTimes(
                    self.classes[key],
                    created or 0.0,
                    admitted,
                    finished,
                    self.evictions.get(key, 0),
                )
                for key, (created, admitted, finished) in self.times.items()
            ),
            cpu_used=self.cpu_used,
            nominal_milli=0,
            admissions=self.admissions,
            cycles=tuple(self.cycles),
        )

    def _settle(self, now: int) -> None:
        at = _at(now)
        for _ in range(MAX_CYCLES):
            snapshot = replace(self.objects, workloads=self.workloads, shapes=self.shapes,
                               entries=self.entries)
            started = time.perf_counter()
            result = run_cycle(snapshot, at)
            self.cycles.append(time.perf_counter() - started)
            if not result.admitted and not result.evicted:
                return
            for eviction in result.evicted:
                self._release(eviction.key, now)
                self.due.pop(eviction.key, None)
                # Arrivals carry no checkpoint grace: every victim releases at once.
                self.workloads[eviction.key] = evicted(
                    self.workloads[eviction.key], eviction.reason, at).workload
                self.evictions[eviction.key] = self.evictions.get(eviction.key, 0) + 1
            for decision in result.admitted:
                key = decision.key
                self.workloads[key] = admitted(self.workloads[key], decision.admission, at)
                self.admissions += 1
                self.held_since[key] = now
                self.times[key][1] = now / 1000
                self.due[key] = now + self.runtime[key]
                heapq.heappush(self.heap, (self.due[key], key))
        raise RuntimeError(f"the engine did not settle at {now} ms of the ideal run")

    def _release(self, key: str, now: int) -> None:
        workload = self.workloads[key]
        since = self.held_since.pop(key, None)
        if since is not None and workload.admission is not None:
            milli = sum(workload.admission.usage().values())
            self.cpu_used += milli * (now - since) / 1000

    def _finish(self, key: str, now: int) -> None:
        self._release(key, now)
        del self.due[key]
        del self.workloads[key]
        self.times[key][2] = now / 1000


def _at(ms: int) -> datetime:
    return EPOCH + timedelta(milliseconds=ms)


def run_ideal(objects: Snapshot, arrivals: Sequence[Arrival], nominal_milli: int) -> RunRecord:
    """The ideal run of ``arrivals`` (in arrival order) over ``objects``."""
    record = _Ideal(objects, arrivals).run()
    return replace(record, nominal_milli=nominal_milli)


def drain_ideal(objects: Snapshot, backlog: dict[str, Workload]) -> tuple[int, tuple[float, ...]]:
    """Admit a whole backlog at one instant; admissions made and the cycles' durations."""
    workloads = dict(backlog)
    cycles: list[float] = []
    admitted = 0
    for _ in range(MAX_CYCLES):
        started = time.perf_counter()
        result = run_cycle(replace(objects, workloads=workloads), EPOCH)
        cycles.append(time.perf_counter() - started)
        if not result.admitted and not result.evicted:
            return admitted, tuple(cycles)
        for decision in result.admitted:
            workloads[decision.key] = replace(
                workloads[decision.key],
                state=WorkloadState.ADMITTED,
                admission=decision.admission,
                admitted_at=EPOCH,
            )
            admitted += 1
    raise RuntimeError("the engine did not settle on the drain backlog")
