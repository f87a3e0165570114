"""Shape ids kept across cycles: same answers as building them afresh, and bounded."""

from __future__ import annotations

from dataclasses import replace

from builders.cycles import apply, pending, queues, summary
from builders.engine import GPU, T0, at, snapshot, wl
from hypothesis import given, settings

from admission.engine.cycle import run_cycle
from admission.engine.shapes import ShapeMemo
from quota.core.model import ClusterQueue
from quota.core.workload import Workload


def test_equal_shapes_share_an_id_and_a_changed_workload_gets_its_new_one() -> None:
    memo = ShapeMemo()
    small, other_small, big = wl("a", {GPU: 1}), wl("b", {GPU: 1}), wl("c", {GPU: 4})
    first = memo.id_of(small.key, small, with_priority=False)
    assert memo.id_of(other_small.key, other_small, with_priority=False) == first
    assert memo.id_of(big.key, big, with_priority=False) != first
    grown = replace(small, pod_sets=big.pod_sets)  # same key, new pod sets
    assert memo.id_of(grown.key, grown, with_priority=False) == memo.id_of(
        big.key, big, with_priority=False)


def test_priority_is_part_of_the_shape_only_when_asked() -> None:
    memo = ShapeMemo()
    low, high = wl("a", {GPU: 1}, priority=0), wl("b", {GPU: 1}, priority=9)
    assert memo.id_of(low.key, low, False) == memo.id_of(high.key, high, False)
    assert memo.id_of(low.key, low, True) != memo.id_of(high.key, high, True)


def test_prune_forgets_workloads_that_are_gone() -> None:
    memo = ShapeMemo()
    many = [wl(f"w{i}", {GPU: 1 + i % 3}) for i in range(3000)]
    for w in many:
        memo.id_of(w.key, w, with_priority=False)
    memo.prune({many[0].key: many[0]})
    assert len(memo) <= 1


@settings(max_examples=80, deadline=None)
@given(queues(preemption=True), pending(), pending("p"))
def test_cycles_with_a_kept_memo_decide_as_cycles_without(
    cqs: list[ClusterQueue], first: list[Workload], second: list[Workload]
) -> None:
    memo = ShapeMemo()
    snap = snapshot(*cqs, *first)
    assert summary(run_cycle(replace(snap, shapes=memo), T0)) == summary(run_cycle(snap, T0))
    # The next cycle reuses the memo: holders now, and newcomers with new shapes.
    snap = apply(snap, run_cycle(snap, T0))
    snap = replace(snap, workloads={**snap.workloads, **{w.key: w for w in second}})
    later = at(30)
    assert summary(run_cycle(replace(snap, shapes=memo), later)) == summary(
        run_cycle(snap, later))
