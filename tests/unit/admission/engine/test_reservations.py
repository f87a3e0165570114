"""Capacity reservations: a workload needing preemption that finds no victims keeps its
queue's quota for the cycle, and what it holds back waits with ReservedByHigherPriority."""

from __future__ import annotations

import pytest
from builders.engine import GPU, T0, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    Preemption,
    QueueingStrategy,
    ReclaimWithinCohort,
)
from quota.core.reasons import WaitReason

ANY = Preemption(reclaim_within_cohort=ReclaimWithinCohort.ANY)
LOWER = Preemption(reclaim_within_cohort=ReclaimWithinCohort.LOWER_PRIORITY)
BORROWING = Preemption(borrow_within_cohort=BorrowWithinCohort(BorrowWithinCohortPolicy.LOWER_PRIORITY))
STRICT = QueueingStrategy.STRICT_FIFO


def pool(a: Preemption | None = None, *, strategy: QueueingStrategy | None = None,
         a_quota: int = 4) -> list[object]:
    """Queue a (``a_quota`` GPUs) holds 2 GPUs; queue b (none of its own) borrows."""
    return [cq("a", {"default": {GPU: a_quota}}, cohort="c", preemption=a, strategy=strategy),
            cq("b", {"default": {GPU: 0}}, cohort="c"),
            admitted(wl("running", {GPU: 2}), "a")]


@pytest.mark.parametrize(
    ("objects", "admitted_keys"),
    [
        pytest.param([*pool(), wl("big", {GPU: 4}, created=1),
                      wl("borrower", {GPU: 2}, ns="b", created=2)],
                     [], id="no victims under reclaim Never: the rest of a's quota stays reserved"),
        pytest.param([*pool(LOWER), wl("big", {GPU: 4}, created=1),
                      wl("borrower", {GPU: 2}, ns="b", created=2)],
                     [], id="reclaim LowerPriority is not guaranteed to reclaim: it reserves too"),
        pytest.param([*pool(ANY), wl("big", {GPU: 4}, created=1),
                      wl("borrower", {GPU: 2}, ns="b", created=2)],
                     ["b/borrower"], id="reclaim Any gets lent quota back: nothing is reserved"),
        pytest.param([*pool(), wl("big", {GPU: 4}, created=1),
                      wl("borrower", {GPU: 2}, ns="b", created=2, priority=5)],
                     ["b/borrower"], id="a reservation does not hold back a higher priority"),
        pytest.param([*pool(), wl("big", {GPU: 3}, created=1),
                      wl("borrower", {GPU: 1}, ns="b", created=2)],
                     [], id="within nominal it reserves what is left of the nominal quota"),
        pytest.param([*pool(a_quota=2), cq("d", {"default": {GPU: 4}}, cohort="c"),
                      admitted(wl("lender", {GPU: 2}, ns="d"), "d"),
                      wl("big", {GPU: 4}, created=1), wl("borrower", {GPU: 2}, ns="b", created=2)],
                     ["b/borrower"],
                     id="a request over nominal that no policy could make room for is no fit"),
        pytest.param([*pool(), wl("big", {GPU: 4}, created=1), wl("small", {GPU: 1}, created=2),
                      wl("borrower", {GPU: 1}, ns="b", created=3)],
                     ["a/small"],
                     id="its own queue's later work within nominal goes first; the rest is kept"),
        pytest.param([*pool(strategy=STRICT), wl("big", {GPU: 4}, created=1),
                      wl("small", {GPU: 1}, created=2),
                      wl("borrower", {GPU: 2}, ns="b", created=3)],
                     [], id="a StrictFIFO head reserves and blocks its queue"),
        pytest.param([cq("a", {"default": {GPU: 4}}, preemption=BORROWING),
                      admitted(wl("running", {GPU: 2}), "a"), wl("big", {GPU: 4}, created=1),
                      wl("small", {GPU: 2}, created=2)],
                     ["a/small"], id="a queue outside any cohort reserves nothing"),
    ],
)
def test_reservation_rules(objects: list[object], admitted_keys: list[str]) -> None:
    result = run_cycle(snapshot(*objects), T0)
    assert sorted(d.key for d in result.admitted) == admitted_keys


def test_a_workload_held_back_names_the_reservation_and_its_priority() -> None:
    result = run_cycle(snapshot(*pool(), wl("big", {GPU: 4}, created=1, priority=3),
                                wl("borrower", {GPU: 2}, ns="b", created=2)), T0)
    status = result.pending["b/borrower"]
    assert status.reasons[0].code is WaitReason.RESERVED_BY_HIGHER_PRIORITY
    assert status.reasons[0].details == {"reservedFor": "a/big", "priority": 3}
    assert result.pending["a/big"].reasons[0].code is WaitReason.WAITING_FOR_QUOTA


def test_one_reservation_per_queue_per_cycle() -> None:
    """Kueue decides one head per ClusterQueue a cycle: later workloads of the same queue
    that find no victims reserve nothing more (b's borrower still finds room)."""
    result = run_cycle(snapshot(
        cq("a", {"default": {GPU: 6}}, cohort="c"), cq("b", {"default": {GPU: 0}}, cohort="c"),
        admitted(wl("running", {GPU: 2}), "a"), wl("big", {GPU: 6}, created=1),
        wl("big2", {GPU: 6}, created=2), wl("borrower", {GPU: 0.5}, ns="b", created=3)), T0)
    assert [d.key for d in result.admitted] == []
    assert result.pending["b/borrower"].reasons[0].code is WaitReason.RESERVED_BY_HIGHER_PRIORITY
