"""Fair sharing: dominant-resource share orders admission and drives preemption."""

from __future__ import annotations

import pytest
from builders.engine import CPU, GPU, T0, M, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.fairshare import UNBOUNDED, dominant_share
from quota.core.model import Preemption, ReclaimWithinCohort, WithinClusterQueue
from quota.core.tree import QuotaTree

ANY = Preemption(reclaim_within_cohort=ReclaimWithinCohort.ANY)


@pytest.mark.parametrize(
    ("usage", "weight", "share"),
    [
        pytest.param({}, 1000, 0, id="a queue within nominal quota has no share"),
        pytest.param({GPU: 6}, 1000, 250, id="share is borrowed over what the cohort lends"),
        pytest.param({GPU: 6, CPU: 12}, 1000, 500, id="the dominant resource decides"),
        pytest.param({GPU: 6}, 2000, 125, id="a heavier weight halves the share"),
        pytest.param({GPU: 6}, 0, UNBOUNDED, id="a zero weight makes any borrowing unbounded"),
    ],
)
def test_dominant_share(usage: dict[str, int], weight: int, share: int) -> None:
    tree = QuotaTree([cq("a", {"default": {GPU: 4, CPU: 4}}, cohort="c"),
                      cq("b", {"default": {GPU: 4, CPU: 12}}, cohort="c")], {})
    tree.add("a", {("default", r): a * M for r, a in usage.items()})
    assert dominant_share(tree, "a", weight) == share


@pytest.mark.parametrize(
    ("fair", "first"),
    [
        pytest.param(False, "a/x", id="without fair sharing the older borrower goes first"),
        pytest.param(True, "b/y", id="fair sharing admits the queue with the lower share first"),
    ],
)
def test_fair_sharing_orders_admission(fair: bool, first: str) -> None:
    objects = [cq("a", {"default": {GPU: 0}}, cohort="c"),
               cq("b", {"default": {GPU: 0}}, cohort="c"),
               cq("lender", {"default": {GPU: 4}}, cohort="c"),
               admitted(wl("held", {GPU: 2}), "a"),
               wl("x", {GPU: 2}), wl("y", {GPU: 2}, ns="b", created=1)]
    result = run_cycle(snapshot(*objects, fair_sharing=fair), T0)
    assert [d.key for d in result.admitted] == [first]


@pytest.mark.parametrize(
    ("gpus", "evicted"),
    [
        pytest.param(2, [("a/w2", "InCohortFairSharing")],
                     id="fair sharing preempts a queue whose share stays at least ours"),
        pytest.param(4, [], id="fair sharing does not preempt to become the bigger borrower"),
    ],
)
def test_fair_sharing_preemption(gpus: int, evicted: list[tuple[str, str]]) -> None:
    objects = [cq("a", {"default": {GPU: 0}}, cohort="c"),
               cq("b", {"default": {GPU: 0}}, cohort="c", preemption=ANY),
               cq("lender", {"default": {GPU: 4}}, cohort="c"),
               admitted(wl("w1", {GPU: 2}), "a", when=1),
               admitted(wl("w2", {GPU: 2}), "a", when=2),
               wl("y", {GPU: gpus}, ns="b")]
    result = run_cycle(snapshot(*objects, fair_sharing=True), T0)
    assert [(e.key, str(e.cause)) for e in result.evicted] == evicted
    assert [d.key for d in result.admitted] == (["b/y"] if evicted else [])


def test_fair_sharing_takes_from_a_bigger_borrower_before_its_own_queue() -> None:
    # Kueue's order holds under fair sharing too: b borrows what a lends, so one eviction
    # in b makes room; trying a's own lower-priority holders first would evict two.
    preempt = Preemption(within_cluster_queue=WithinClusterQueue.LOWER_PRIORITY,
                         reclaim_within_cohort=ReclaimWithinCohort.ANY)
    objects = [cq("a", {"default": {GPU: 4}}, cohort="c", preemption=preempt),
               cq("b", {"default": {GPU: 4}}, cohort="c"),
               admitted(wl("own-1", {GPU: 1}), "a"),
               admitted(wl("own-2", {GPU: 1}), "a"),
               admitted(wl("nominal", {GPU: 4}, ns="b"), "b"),
               admitted(wl("borrowed", {GPU: 2}, ns="b"), "b"),
               wl("high", {GPU: 2}, priority=5)]
    result = run_cycle(snapshot(*objects, fair_sharing=True), T0)
    assert [(e.key, str(e.cause)) for e in result.evicted] == [
        ("b/borrowed", "InCohortFairSharing")]
    assert [d.key for d in result.admitted] == ["a/high"]
