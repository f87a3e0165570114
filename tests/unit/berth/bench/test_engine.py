"""`berth bench engine` end to end at a small shape: every figure it prints is there and
agrees with the engine run independently on the same snapshot."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from admission.engine.cycle import run_cycle
from berth.bench import engine

SHAPE = ["--queues", "40", "--cohorts", "2", "--workloads", "3000"]


def _numbers(pattern: str, text: str) -> list[tuple[str, ...]]:
    """Every match's groups, as tuples even for a one-group pattern."""
    return [match.groups() for match in re.finditer(pattern, text)]


def test_prints_each_mix_against_the_floor_and_the_engine_agrees(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert engine.main([*SHAPE, "--mix", "both"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("snapshot: 40 ClusterQueues in 2 cohorts, 3000 workloads, 0 nodes")
    sections = out.split("\n[")[1:]
    assert [s.split("]")[0] for s in sections] == ["random shapes (primary)",
                                                   "Kueue-perf classes"]
    for section, mix in zip(sections, ("random", "classes"), strict=True):
        ((floor,),) = _numbers(r"floor \(.*\): (\d+) ms CPU", section)
        cycles = _numbers(r": (\d+) ms wall, (\d+) ms CPU .* (\d+\.\d)x the floor", section)
        assert len(cycles) == 2  # the cycle, and the cycle with every reason read
        for _, cpu, ratio in cycles:
            # The ratio is of unrounded times: it lies where the rounded ones allow.
            f, c, r = int(floor), int(cpu), float(ratio)
            assert f > 0 and r > 1
            assert (c - 0.5) / (f + 0.5) - 0.05 <= r <= (c + 0.5) / (f - 0.5) + 0.05
        # A small shape is not judged against the default shape's target.
        assert "PASS" not in section and "MISS" not in section
        assert "the 200 ms target is for the default shape" in section
        # The counts are the engine's own on the same snapshot.
        snapshot = engine.build(40, 2, 3000, mix=mix)
        result = run_cycle(snapshot, engine.T0 + timedelta(days=2))
        first = re.search(r"admitted=(\d+) evicted=(\d+) pending=(\d+)", section)
        assert first is not None
        assert tuple(map(int, first.groups())) == (
            len(result.admitted), len(result.evicted), len(result.pending))
        assert sum(map(int, first.groups())) == 3000
        assert re.search(r"steady state \(\d+ holders, \d+ pending\): cycle \d+ ms", section)
