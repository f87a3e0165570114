"""The benchmark shapes follow Kueue's configs, and the figures are computed as Kueue does."""

from __future__ import annotations

import pytest

from berth.bench.figures import RunRecord, WorkloadTimes, figures_of, percentile
from berth.bench.shapes import drain_shape, kueue_shape


@pytest.mark.parametrize(
    ("name", "queues", "workloads"),
    [
        pytest.param("kueue-baseline", 30, 15_000, id="baseline: 5 cohorts x 6, 500 per queue"),
        pytest.param("kueue-large", 1000, 50_000, id="large: 10 cohorts x 100, 50 per queue"),
    ],
)
def test_full_shapes_have_kueues_counts(name: str, queues: int, workloads: int) -> None:
    shape = kueue_shape(name)

    assert len(shape.queues) == queues
    assert shape.workloads == len(shape.arrivals()) == workloads
    assert shape.nominal_milli == queues * 20_000
    assert shape.reference is not None


def test_each_class_arrives_one_interval_apart_starting_one_interval_in() -> None:
    shape = kueue_shape("kueue-baseline")

    large = sorted(a.at_ms for a in shape.arrivals() if a.key.startswith("cq-0-0/large-"))

    assert large[:3] == [1200, 2400, 3600] and len(large) == 50 and large[-1] == 60_000


def test_scaling_keeps_the_cohorts_and_at_least_two_queues_each() -> None:
    shape = kueue_shape("kueue-baseline", scale=0.01)

    assert shape.cohorts == 5 and shape.queues_per_cohort == 2
    assert [c.count for c in shape.classes] == [10, 3, 2]  # 350, 100, 50 x 0.01 x 6 / 2
    assert shape.reference is None  # Kueue published the full shape only


def test_the_seed_orders_same_instant_arrivals_only() -> None:
    one = kueue_shape("kueue-baseline", scale=0.05, seed=1).arrivals()
    two = kueue_shape("kueue-baseline", scale=0.05, seed=2).arrivals()

    assert [a.key for a in one] != [a.key for a in two]
    assert [a.at_ms for a in one] == [a.at_ms for a in two]
    assert sorted(a.key for a in one) == sorted(a.key for a in two)


@pytest.mark.parametrize("scale", [0.0, -1.0, 1.5])
def test_a_scale_outside_zero_to_one_is_refused(scale: float) -> None:
    with pytest.raises(ValueError, match="--scale"):
        drain_shape(scale=scale)


def test_figures_follow_kueues_definitions() -> None:
    # Two 1-cpu workloads on a 2-cpu pool over 4 s: one waits 1 s, runs 1 s (re-admitted
    # once after an eviction); the other runs from 0 to 4 s.
    record = RunRecord(
        (WorkloadTimes("small", 0.0, 1.0, 2.0, evictions=1), WorkloadTimes("small", 0.0, 0.0, 4.0)),
        cpu_used=1000 * 1 + 1000 * 4,
        nominal_milli=2000,
        admissions=3,
    )

    figures = figures_of(record)

    assert figures.wall == 4.0
    assert figures.usage == pytest.approx(100 * 5 / (2 * 4))
    assert figures.waits["small"].mean == 0.5 and figures.waits["small"].p99 == 1.0
    assert figures.admissions_per_second == 3 / 4
    assert figures.evictions == 1


def test_percentile_is_nearest_rank() -> None:
    ordered = [float(n) for n in range(1, 101)]

    assert (percentile(ordered, 50), percentile(ordered, 99), percentile([], 50)) == (50, 99, 0)
