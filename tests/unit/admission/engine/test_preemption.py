"""Preemption: within a queue, reclaiming lent quota, borrowing within the cohort, grace."""

from __future__ import annotations

import pytest
from builders.engine import GPU, T0, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.types import CycleResult
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    Preemption,
    ReclaimWithinCohort,
    WithinClusterQueue,
)
from quota.core.workload import WorkloadState

LOWER = WithinClusterQueue.LOWER_PRIORITY
NEWER = WithinClusterQueue.LOWER_OR_NEWER_EQUAL_PRIORITY
GRACE = {"berth.dev/checkpoint-grace": "10m"}


def run(*objects: object) -> CycleResult:
    return run_cycle(snapshot(*objects), T0)


def outcome(result: CycleResult) -> tuple[list[str], list[tuple[str, str | None]]]:
    return ([d.key for d in result.admitted],
            [(e.key, None if e.cause is None else str(e.cause)) for e in result.evicted])


def within(policy: WithinClusterQueue) -> Preemption:
    return Preemption(within_cluster_queue=policy)


@pytest.mark.parametrize(
    ("objects", "admitted_keys", "evicted"),
    [
        pytest.param([cq("a", {"default": {GPU: 8}}, preemption=within(LOWER)),
                      admitted(wl("low", {GPU: 8}), "a"), wl("high", {GPU: 8}, priority=5)],
                     ["a/high"], [("a/low", "InClusterQueue")],
                     id="a higher-priority workload preempts a lower one in its queue"),
        pytest.param([cq("a", {"default": {GPU: 8}}, preemption=within(LOWER)),
                      admitted(wl("same", {GPU: 8}), "a"), wl("new", {GPU: 8}, created=9)],
                     [], [], id="LowerPriority protects equal priority"),
        pytest.param([cq("a", {"default": {GPU: 8}}, preemption=within(NEWER)),
                      admitted(wl("newer", {GPU: 8}, created=9), "a"), wl("older", {GPU: 8})],
                     ["a/older"], [("a/newer", "InClusterQueue")],
                     id="LowerOrNewerEqualPriority preempts a newer equal-priority workload"),
        pytest.param([cq("a", {"default": {GPU: 8}}, preemption=within(NEWER)),
                      admitted(wl("older", {GPU: 8}), "a"), wl("newer", {GPU: 8}, created=9)],
                     [], [], id="LowerOrNewerEqualPriority protects an older equal one"),
        pytest.param([cq("a", {"default": {GPU: 8}}),
                      admitted(wl("low", {GPU: 8}), "a"), wl("high", {GPU: 8}, priority=5)],
                     [], [], id="withinClusterQueue Never preempts nothing"),
        pytest.param([cq("a", {"default": {GPU: 8}}, preemption=within(LOWER)),
                      admitted(wl("p1", {GPU: 2}, priority=1), "a", when=1),
                      admitted(wl("p0-old", {GPU: 2}), "a", when=1),
                      admitted(wl("p0-new", {GPU: 2}), "a", when=2),
                      admitted(wl("p0-big", {GPU: 2}), "a", when=0),
                      wl("high", {GPU: 4}, priority=5)],
                     ["a/high"], [("a/p0-new", "InClusterQueue"), ("a/p0-old", "InClusterQueue")],
                     id="victims are the fewest lowest-priority most recently admitted"),
        pytest.param([cq("a", {"default": {GPU: 8}}, preemption=within(LOWER)),
                      admitted(wl("small", {GPU: 2}), "a", when=2),
                      admitted(wl("large", {GPU: 6}), "a", when=1),
                      wl("high", {GPU: 6}, priority=5)],
                     ["a/high"], [("a/large", "InClusterQueue")],
                     id="a victim that turns out not to be needed is spared"),
        pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c",
                         preemption=Preemption(reclaim_within_cohort=ReclaimWithinCohort.ANY)),
                      cq("b", {"default": {GPU: 4}}, cohort="c"),
                      admitted(wl("borrower", {GPU: 8}, ns="b", priority=9), "b"),
                      wl("owner", {GPU: 4})],
                     ["a/owner"], [("b/borrower", "InCohortReclamation")],
                     id="reclaims quota lent to a borrower when the owner returns"),
        pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c",
                         preemption=Preemption(
                             reclaim_within_cohort=ReclaimWithinCohort.LOWER_PRIORITY)),
                      cq("b", {"default": {GPU: 4}}, cohort="c"),
                      admitted(wl("borrower", {GPU: 8}, ns="b", priority=9), "b"),
                      wl("owner", {GPU: 4})],
                     [], [], id="reclaim LowerPriority protects a higher-priority borrower"),
        pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c",
                         preemption=Preemption(reclaim_within_cohort=ReclaimWithinCohort.ANY)),
                      cq("b", {"default": {GPU: 4}}, cohort="c"),
                      admitted(wl("own", {GPU: 4}, ns="b"), "b"),
                      admitted(wl("borrowed", {GPU: 2}, ns="b"), "b"),
                      wl("owner", {GPU: 2})],
                     ["a/owner"], [],
                     id="nothing is reclaimed when unused quota suffices"),
        pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c",
                         preemption=Preemption(reclaim_within_cohort=ReclaimWithinCohort.ANY)),
                      cq("b", {"default": {GPU: 4}}, cohort="c"),
                      admitted(wl("b1", {GPU: 4}, ns="b"), "b"),
                      admitted(wl("a1", {GPU: 2}), "a"),
                      wl("owner", {GPU: 4})],
                     [], [], id="a queue within its nominal quota is never reclaimed from"),
        pytest.param([cq("a", {"default": {GPU: 2}}, cohort="c", preemption=Preemption(
                         reclaim_within_cohort=ReclaimWithinCohort.LOWER_PRIORITY,
                         borrow_within_cohort=BorrowWithinCohort(
                             BorrowWithinCohortPolicy.LOWER_PRIORITY, 3))),
                      cq("b", {"default": {GPU: 0}}, cohort="c"),
                      cq("d", {"default": {GPU: 6}}, cohort="c"),
                      admitted(wl("p3", {GPU: 4}, ns="b", priority=3), "b", when=1),
                      admitted(wl("p4", {GPU: 2}, ns="b", priority=4), "b", when=2),
                      admitted(wl("d1", {GPU: 2}, ns="d"), "d"),
                      wl("x", {GPU: 4}, priority=10)],
                     ["a/x"], [("b/p3", "InCohortReclaimWhileBorrowing")],
                     id="borrowWithinCohort preempts below the threshold only"),
        pytest.param([cq("a", {"default": {GPU: 2}}, cohort="c", preemption=Preemption(
                         borrow_within_cohort=BorrowWithinCohort(
                             BorrowWithinCohortPolicy.LOWER_PRIORITY, 2))),
                      cq("b", {"default": {GPU: 0}}, cohort="c"),
                      cq("d", {"default": {GPU: 6}}, cohort="c"),
                      admitted(wl("p3", {GPU: 4}, ns="b", priority=3), "b", when=1),
                      admitted(wl("p4", {GPU: 2}, ns="b", priority=4), "b", when=2),
                      admitted(wl("d1", {GPU: 2}, ns="d"), "d"),
                      wl("x", {GPU: 4}, priority=10)],
                     [], [], id="borrowWithinCohort protects workloads above the threshold"),
        # Kueue's order: reclaim from the cohort's borrowers before preempting within the
        # own queue when both are allowed. Trying own victims first would evict two where
        # one borrower's eviction is enough.
        pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c", preemption=Preemption(
                         within_cluster_queue=LOWER,
                         reclaim_within_cohort=ReclaimWithinCohort.ANY)),
                      cq("b", {"default": {GPU: 4}}, cohort="c"),
                      admitted(wl("own-1", {GPU: 1}), "a"),
                      admitted(wl("own-2", {GPU: 1}), "a"),
                      admitted(wl("nominal", {GPU: 4}, ns="b"), "b"),
                      admitted(wl("borrowed", {GPU: 2}, ns="b"), "b"),
                      wl("high", {GPU: 2}, priority=5)],
                     ["a/high"], [("b/borrowed", "InCohortReclamation")],
                     id="reclaims a borrower's quota before preempting within its own queue"),
        pytest.param([cq("a", {"default": {GPU: 2}}, cohort="c", preemption=Preemption(
                         within_cluster_queue=LOWER,
                         reclaim_within_cohort=ReclaimWithinCohort.ANY,
                         borrow_within_cohort=BorrowWithinCohort(
                             BorrowWithinCohortPolicy.LOWER_PRIORITY))),
                      cq("b", {"default": {GPU: 0}}, cohort="c"),
                      cq("d", {"default": {GPU: 6}}, cohort="c"),
                      admitted(wl("own-1", {GPU: 1}), "a"),
                      admitted(wl("own-2", {GPU: 1}), "a"),
                      admitted(wl("p1", {GPU: 2}, ns="b", priority=1), "b"),
                      admitted(wl("d1", {GPU: 3}, ns="d"), "d"),
                      wl("x", {GPU: 3}, priority=10)],
                     ["a/x"], [("b/p1", "InCohortReclaimWhileBorrowing")],
                     id="to borrow it preempts a lower-priority borrower before its own queue"),
    ],
)
def test_preemption(objects: list[object], admitted_keys: list[str],
                    evicted: list[tuple[str, str]]) -> None:
    got_admitted, got_evicted = outcome(run(*objects))
    assert (got_admitted, sorted(got_evicted)) == (admitted_keys, sorted(evicted))


def test_eviction_names_preemptor_and_queue() -> None:
    result = run(cq("a", {"default": {GPU: 8}}, preemption=within(LOWER)),
                 admitted(wl("low", {GPU: 8}), "a"), wl("high", {GPU: 8}, priority=5))
    (eviction,) = result.evicted
    assert (eviction.preemptor, eviction.cluster_queue, eviction.reason) == (
        "a/high", "a", "Preempted")


def test_checkpointing_victim_keeps_its_quota_and_the_preemptor_waits() -> None:
    result = run(cq("a", {"default": {GPU: 8}}, preemption=within(LOWER)),
                 admitted(wl("low", {GPU: 8}, annotations=GRACE), "a"),
                 wl("high", {GPU: 8}, priority=5), wl("later", {GPU: 8}, priority=4))
    assert outcome(result) == ([], [("a/low", "InClusterQueue")])
    status = result.pending["a/high"]
    assert status.reason.code == "WaitingForPreemptedWorkloads"
    assert status.reason.details == {"victims": ["a/low"],
                                     "deadline": "2025-01-01T00:10:00+00:00"}
    assert result.pending["a/later"].reason.code == "WaitingForQuota"


def test_workloads_already_evicting_are_waited_for_not_chosen_again() -> None:
    result = run(cq("a", {"default": {GPU: 8}}, preemption=within(LOWER)),
                 admitted(wl("going", {GPU: 4}), "a", state=WorkloadState.EVICTING),
                 admitted(wl("low", {GPU: 4}), "a"),
                 wl("high", {GPU: 4}, priority=5))
    assert outcome(result) == ([], [])
    assert result.pending["a/high"].reason.details["victims"] == ["a/going"]
