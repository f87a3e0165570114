"""What a run yields, and the figures the report prints from it (PURE).

Both the real run and the ideal produce a ``RunRecord``; ``figures_of`` turns either into
the same ``Figures``, so the two are computed identically. Time to admission is from
creation to the last admission (a preempted workload is admitted again), as Kueue's
recorder counts it; usage is cpu held × time over the pool's nominal cpu × the wall time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class WorkloadTimes:
    """One workload's life, in seconds after the start of the run."""

    workload_class: str
    created: float
    admitted: float | None  # the last admission
    finished: float | None
    evictions: int = 0


@dataclass(frozen=True, slots=True)
class Memory:
    """A process's resident memory, in bytes: now (VmRSS) and its peak so far (VmHWM)."""

    rss: int
    peak: int

    def as_dict(self) -> dict[str, float]:
        return {"rss_mib": self.rss / MIB, "peak_mib": self.peak / MIB}


MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class RunRecord:
    workloads: tuple[WorkloadTimes, ...]
    cpu_used: float  # milli-cores × seconds held
    nominal_milli: int  # the pool's cpu
    admissions: int  # admissions made, re-admissions after preemption included
    cycles: tuple[float, ...] = ()  # seconds per admission cycle
    wall: float | None = None  # default: when the last workload finished
    # Seconds each submission committed after its arrival time: the driver's lag, which
    # counts as waiting (created_at is the arrival time) though Berth never saw it.
    lags: tuple[float, ...] = ()
    # Seconds each finish committed after its due time (admission actuated + run time):
    # the simulated runner's lag, which holds quota longer than the run needed.
    runner_lags: tuple[float, ...] = ()
    processes: dict[str, int] = field(default_factory=dict)  # pid by role
    writers: dict[str, int] = field(default_factory=dict)  # audit rows by actor
    memory: Memory | None = None  # the loop's process at the end of the run


@dataclass(frozen=True, slots=True)
class Spread:
    count: int
    mean: float
    p50: float
    p90: float
    p99: float

    def as_dict(self) -> dict[str, float]:
        return {
            "count": self.count,
            "avg": self.mean,
            "p50": self.p50,
            "p90": self.p90,
            "p99": self.p99,
        }


@dataclass(frozen=True, slots=True)
class Figures:
    wall: float
    admitted: int  # workloads admitted at least once
    finished: int
    workloads: int
    admissions: int
    evictions: int
    usage: float  # percent
    waits: dict[str, Spread] = field(default_factory=dict)  # time to admission per class
    cycles: int = 0
    cycle_p50: float = 0.0  # seconds
    cycle_p99: float = 0.0
    driver_lag: Spread | None = None  # None: arrivals were not submitted (the ideal)
    runner_lag: Spread | None = None  # None: runs were not finished by a runner (the ideal)

    @property
    def admissions_per_second(self) -> float:
        return self.admissions / self.wall if self.wall > 0 else 0.0

    def as_dict(self) -> dict[str, object]:
        return {
            "wall_seconds": self.wall,
            "workloads": self.workloads,
            "admitted": self.admitted,
            "finished": self.finished,
            "admissions": self.admissions,
            "evictions": self.evictions,
            "admissions_per_second": self.admissions_per_second,
            "usage_percent": self.usage,
            "time_to_admission_seconds": {k: v.as_dict() for k, v in self.waits.items()},
            "cycles": self.cycles,
            "cycle_p50_ms": self.cycle_p50 * 1000,
            "cycle_p99_ms": self.cycle_p99 * 1000,
            "driver_lag_seconds": None if self.driver_lag is None else self.driver_lag.as_dict(),
            "runner_lag_seconds": None if self.runner_lag is None else self.runner_lag.as_dict(),
        }


def percentile(ordered: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of an ascending sequence (0 when empty)."""
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def spread(values: Sequence[float]) -> Spread:
    ordered = sorted(values)
    mean = sum(ordered) / len(ordered) if ordered else 0.0
    return Spread(
        len(ordered),
        mean,
        percentile(ordered, 50),
        percentile(ordered, 90),
        percentile(ordered, 99),
    )


def figures_of(record: RunRecord, classes: Sequence[str] = ()) -> Figures:
    """The report's figures for one run; ``classes`` fixes the order of the classes."""
    finished = [w.finished for w in record.workloads if w.finished is not None]
    wall = record.wall if record.wall is not None else max(finished, default=0.0)
    by_class: dict[str, list[float]] = {name: [] for name in classes}
    for w in record.workloads:
        if w.admitted is not None:
            by_class.setdefault(w.workload_class, []).append(max(0.0, w.admitted - w.created))
    cycles = sorted(record.cycles)
    usage = 100 * record.cpu_used / (record.nominal_milli * wall) if wall > 0 else 0.0
    return Figures(
        wall=wall,
        admitted=sum(1 for w in record.workloads if w.admitted is not None),
        finished=len(finished),
        workloads=len(record.workloads),
        admissions=record.admissions,
        evictions=sum(w.evictions for w in record.workloads),
        usage=usage,
        waits={name: spread(values) for name, values in by_class.items()},
        cycles=len(cycles),
        cycle_p50=percentile(cycles, 50),
        cycle_p99=percentile(cycles, 99),
        driver_lag=spread(record.lags) if record.lags else None,
        runner_lag=spread(record.runner_lags) if record.runner_lags else None,
    )
