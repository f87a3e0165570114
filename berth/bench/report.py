"""The benchmark's report: targets with PASS/MISS, a table, and the same as JSON (PURE)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from berth.bench.figures import MIB, Figures, Memory, percentile
from berth.bench.shapes import KueueReference

# The targets: Berth against the ideal on the same arrivals, and the drain rates.
WALL_RATIO = {"kueue-baseline": 1.10, "kueue-large": 1.15}
WAIT_SLACK = 1.0  # seconds: average time to admission may exceed ratio × ideal by this
DRAIN_RATE = 5000.0  # durable admissions per second
DRAIN_FLOOR_SHARE = 0.5
DRIVER_LAG_P99 = 0.1  # seconds: the arrival driver must not be what is measured


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    measured: float
    bound: float
    at_most: bool = True  # else at least

    @property
    def passed(self) -> bool:
        return self.measured <= self.bound if self.at_most else self.measured >= self.bound

    def as_dict(self) -> dict[str, object]:
        return {
            "target": self.name,
            "measured": self.measured,
            "bound": self.bound,
            "result": "PASS" if self.passed else "MISS",
        }


@dataclass(frozen=True, slots=True)
class ShapeReport:
    shape: str
    scale: float
    seed: int
    berth: Figures
    ideal: Figures
    targets: tuple[Target, ...]
    reference: KueueReference | None = None
    machine: str = ""
    processes: dict[str, int] = field(default_factory=dict)  # pid by role
    writers: dict[str, int] = field(default_factory=dict)  # the ledger's audit rows by actor
    memory: Memory | None = None  # the loop's process at the end of the run

    def ratios(self) -> dict[str, float]:
        def ratio(a: float, b: float) -> float:
            return a / b if b > 0 else float("inf") if a > 0 else 1.0

        out = {"wall": ratio(self.berth.wall, self.ideal.wall)}
        for name, wait in self.berth.waits.items():
            ideal = self.ideal.waits.get(name)
            out[f"time_to_admission_avg_{name}"] = ratio(wait.mean, ideal.mean if ideal else 0)
        out["usage"] = ratio(self.berth.usage, self.ideal.usage)
        return out

    def as_dict(self) -> dict[str, object]:
        reference = self.reference
        return {
            "shape": self.shape,
            "scale": self.scale,
            "seed": self.seed,
            "machine": self.machine,
            "processes": self.processes,
            "ledger_writers": self.writers,
            "loop_memory": None if self.memory is None else self.memory.as_dict(),
            "berth": self.berth.as_dict(),
            "ideal": self.ideal.as_dict(),
            "ratios": self.ratios(),
            "kueue_reference": None
            if reference is None
            else {
                "wall_seconds": reference.wall,
                "time_to_admission_avg_seconds": reference.waits,
                "usage_percent": reference.usage,
            },
            "targets": [t.as_dict() for t in self.targets],
        }


def shape_targets(shape: str, berth: Figures, ideal: Figures) -> tuple[Target, ...]:
    ratio = WALL_RATIO[shape]
    targets = [Target(f"wall <= {ratio:.2f} x ideal", berth.wall, ratio * ideal.wall)]
    for name, wait in berth.waits.items():
        bound = ratio * ideal.waits[name].mean + WAIT_SLACK if name in ideal.waits else 0.0
        targets.append(
            Target(
                f"avg time to admission ({name}) <= {ratio:.2f} x ideal + {WAIT_SLACK:.0f} s",
                wait.mean,
                bound,
            )
        )
    if berth.driver_lag is not None:
        targets.append(
            Target(
                f"arrival driver lag p99 <= {DRIVER_LAG_P99:.1f} s",
                berth.driver_lag.p99,
                DRIVER_LAG_P99,
            )
        )
    return tuple(targets)


@dataclass(frozen=True, slots=True)
class DrainReport:
    workloads: int
    queues: int
    seed: int
    loop_seconds: float
    cycles: Sequence[float]
    floor_seconds: float
    ideal_seconds: float  # the engine alone, summed over its cycles
    ideal_cycles: Sequence[float] = field(default_factory=tuple)
    machine: str = ""

    @property
    def loop_rate(self) -> float:
        return self.workloads / self.loop_seconds if self.loop_seconds > 0 else 0.0

    @property
    def floor_rate(self) -> float:
        return self.workloads / self.floor_seconds if self.floor_seconds > 0 else 0.0

    @property
    def ideal_rate(self) -> float:
        return self.workloads / self.ideal_seconds if self.ideal_seconds > 0 else 0.0

    @property
    def targets(self) -> tuple[Target, ...]:
        return (
            Target(
                f"durable admissions/s >= {DRAIN_RATE:,.0f}",
                self.loop_rate,
                DRAIN_RATE,
                at_most=False,
            ),
            Target(
                f"share of the raw floor >= {DRAIN_FLOOR_SHARE:.0%}",
                self.loop_rate / self.floor_rate if self.floor_rate else 0.0,
                DRAIN_FLOOR_SHARE,
                at_most=False,
            ),
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "shape": "drain",
            "workloads": self.workloads,
            "queues": self.queues,
            "seed": self.seed,
            "machine": self.machine,
            "berth": _drained(self.loop_seconds, self.loop_rate, self.cycles),
            "ideal": _drained(self.ideal_seconds, self.ideal_rate, self.ideal_cycles),
            "floor": {"seconds": self.floor_seconds, "admissions_per_second": self.floor_rate},
            "ratios": {
                "berth_over_floor": self.loop_rate / self.floor_rate if self.floor_rate else 0.0,
                "berth_over_ideal": self.loop_rate / self.ideal_rate if self.ideal_rate else 0.0,
            },
            "targets": [t.as_dict() for t in self.targets],
        }


def _drained(seconds: float, rate: float, cycles: Sequence[float]) -> dict[str, object]:
    """How one side of the drain did: its time, its rate and how long its cycles took."""
    ordered = sorted(cycles)
    return {
        "seconds": seconds,
        "admissions_per_second": rate,
        "cycles": len(ordered),
        "cycle_p50_ms": percentile(ordered, 50) * 1000,
        "cycle_p99_ms": percentile(ordered, 99) * 1000,
    }


def machine() -> str:
    """Load average and CPU count: on a shared machine figures mean little without them."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def _seconds(value: float) -> str:
    return f"{value:,.2f} s" if value < 100 else f"{value:,.0f} s"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def shape_table(report: ShapeReport) -> str:
    b, i, ref = report.berth, report.ideal, report.reference
    rows = [("", "Berth", "ideal", "Berth/ideal", "Kueue (published)")]
    rows.append(
        (
            "wall time",
            _seconds(b.wall),
            _seconds(i.wall),
            _ratio(b.wall, i.wall),
            _seconds(ref.wall) if ref else "-",
        )
    )
    for name, wait in b.waits.items():
        iw = i.waits.get(name)
        published = ref.waits.get(name) if ref else None
        rows.append(
            (
                f"{name}: avg time to admission",
                _seconds(wait.mean),
                _seconds(iw.mean) if iw else "-",
                _ratio(wait.mean, iw.mean) if iw else "-",
                _seconds(published) if published is not None else "-",
            )
        )
        if iw:
            rows.append(
                (
                    f"{name}: p50 / p90 / p99",
                    f"{wait.p50:.2f} / {wait.p90:.2f} / {wait.p99:.2f}",
                    f"{iw.p50:.2f} / {iw.p90:.2f} / {iw.p99:.2f}",
                    "",
                    "",
                )
            )
    rows.append(
        (
            "ClusterQueue usage",
            f"{b.usage:.1f} %",
            f"{i.usage:.1f} %",
            _ratio(b.usage, i.usage),
            f"{ref.usage:.1f} %" if ref else "-",
        )
    )
    rows.append(
        (
            "admissions/s",
            f"{b.admissions_per_second:,.1f}",
            f"{i.admissions_per_second:,.1f}",
            "",
            "",
        )
    )
    rows.append(
        (
            "admissions (evictions)",
            f"{b.admissions:,} ({b.evictions:,})",
            f"{i.admissions:,} ({i.evictions:,})",
            "",
            "",
        )
    )
    rows.append(
        (
            "cycle p50 / p99 (ms)",
            f"{b.cycle_p50 * 1000:.1f} / {b.cycle_p99 * 1000:.1f}",
            f"{i.cycle_p50 * 1000:.1f} / {i.cycle_p99 * 1000:.1f}",
            "",
            "",
        )
    )
    for label, lag in (("arrival driver", b.driver_lag), ("simulated runner", b.runner_lag)):
        if lag is not None:
            rows.append(
                (f"{label} lag avg / p99 (s)", f"{lag.mean:.3f} / {lag.p99:.3f}", "0", "", "")
            )
    head = (
        f"{report.shape} (scale {report.scale:g}, seed {report.seed}): {b.workloads:,} "
        f"workloads, {b.finished:,} finished; {report.machine}"
    )
    lines = [head, _grid(rows), "", _targets(report.targets)]
    if report.memory is not None:
        lines.append(f"  {memory_row(report.memory)}")
    if report.processes:
        pids = ", ".join(f"{role} {pid}" for role, pid in report.processes.items())
        lines.append(f"  processes: {pids}")
    return "\n".join(lines)


def memory_row(memory: Memory) -> str:
    return (f"berth serve RSS at end: {memory.rss / MIB:,.0f} MiB "
            f"(peak {memory.peak / MIB:,.0f} MiB)")


def drain_table(report: DrainReport) -> str:
    d = report.as_dict()
    berth, ideal = d["berth"], d["ideal"]
    assert isinstance(berth, dict) and isinstance(ideal, dict)
    rows = [
        ("", "Berth (durable)", "ideal (engine only)", "floor (bare psycopg)"),
        (
            "admissions/s",
            f"{report.loop_rate:,.0f}",
            f"{report.ideal_rate:,.0f}",
            f"{report.floor_rate:,.0f}",
        ),
        (
            "seconds",
            f"{report.loop_seconds:.2f}",
            f"{report.ideal_seconds:.2f}",
            f"{report.floor_seconds:.2f}",
        ),
        ("cycles", f"{berth['cycles']}", f"{ideal['cycles']}", ""),
        (
            "cycle p50 / p99 (ms)",
            f"{berth['cycle_p50_ms']:.0f} / {berth['cycle_p99_ms']:.0f}",
            f"{ideal['cycle_p50_ms']:.0f} / {ideal['cycle_p99_ms']:.0f}",
            "",
        ),
    ]
    head = (
        f"drain (seed {report.seed}): {report.workloads:,} workloads in {report.queues} "
        f"ClusterQueues; {report.machine}"
    )
    return "\n".join([head, _grid(rows), "", _targets(report.targets)])


def _targets(targets: Sequence[Target]) -> str:
    return "\n".join(
        f"  {'PASS' if t.passed else 'MISS'}  {t.name}: {t.measured:,.2f} "
        f"({'<=' if t.at_most else '>='} {t.bound:,.2f})"
        for t in targets
    )


def _grid(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
