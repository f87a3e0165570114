"""Partial admission: variable pod sets shrink together, by one factor, and may preempt."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from builders.engine import GPU, T0, M, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.flavors import reduce_pod_sets
from quota.core.model import Preemption, WithinClusterQueue
from quota.core.workload import PodSet, Workload


def sets(*specs: tuple[str, int, int | None]) -> tuple[PodSet, ...]:
    return tuple(PodSet(name, count, {GPU: M}, min_count=least) for name, count, least in specs)


@pytest.mark.parametrize(
    ("pod_sets", "room", "expected"),
    [
        pytest.param(sets(("one", 20, None), ("two", 30, 10), ("three", 15, 5)), 50,
                     {"one": 20, "two": 20, "three": 10},
                     id="every variable pod set gives up the same share of what it may"),
        pytest.param(sets(("main", 30, 10)), 20, {"main": 20},
                     id="one variable pod set takes the largest count that fits"),
        pytest.param(sets(("main", 30, 10)), 9, None,
                     id="nothing when even the minCounts do not fit"),
        pytest.param(sets(("main", 30, None)), 29, None,
                     id="nothing to reduce without a minCount below the count"),
        pytest.param(sets(("a", 4, 1), ("b", 4, 1)), 7, {"a": 3, "b": 3},
                     id="one shared step: neither pod set gives up more than the other"),
    ],
)
def test_the_reducer_takes_the_smallest_shared_step_that_fits(
        pod_sets: tuple[PodSet, ...], room: int,
        expected: Mapping[str, int] | None) -> None:
    tried: list[dict[str, int]] = []

    def fits(counts: Mapping[str, int]) -> dict[str, int] | None:
        tried.append(dict(counts))
        return dict(counts) if sum(counts.values()) <= room else None

    assert reduce_pod_sets(pod_sets, fits) == expected
    if expected is not None:
        assert len(tried) <= 1 + (sum(p.count - (p.min_count or p.count)
                                      for p in pod_sets)).bit_length()


def _two_sets() -> Workload:
    base = wl("new", {GPU: 1}, created=1)
    return Workload(base.namespace, base.name, base.queue_name,
                    sets(("one", 20, None), ("two", 30, 10), ("three", 15, 5)),
                    created_at=base.created_at)


@pytest.mark.parametrize(
    ("objects", "counts", "evicted"),
    [
        pytest.param([cq("a", {"default": {GPU: 50}}), _two_sets()],
                     {"one": 20, "two": 20, "three": 10}, [],
                     id="a cycle admits the proportional reduction"),
        pytest.param([cq("a", {"default": {GPU: 20}},
                          preemption=Preemption(WithinClusterQueue.LOWER_PRIORITY)),
                      admitted(wl("old", {GPU: 1}, count=10, priority=-4), "a"),
                      wl("new", {GPU: 1}, count=30, min_count=10, priority=4, created=1)],
                     {"main": 20}, ["a/old"],
                     id="the largest reduction that fits by preempting beats one that fits "
                        "without"),
        pytest.param([cq("a", {"default": {GPU: 20}}),
                      admitted(wl("old", {GPU: 1}, count=10, priority=-4), "a"),
                      wl("new", {GPU: 1}, count=30, min_count=10, priority=4, created=1)],
                     {"main": 10}, [],
                     id="without a preemption policy only what is free is taken"),
    ],
)
def test_partial_admission_in_a_cycle(objects: list[object], counts: dict[str, int] | None,
                                      evicted: list[str]) -> None:
    result = run_cycle(snapshot(*objects), T0)
    got = {ps.name: ps.count for d in result.admitted if d.key == "a/new"
           for ps in d.admission.pod_sets}
    assert got == counts
    assert sorted(e.key for e in result.evicted) == evicted
