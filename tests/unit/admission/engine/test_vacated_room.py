"""Room a preemption vacates: what a victim frees beyond its preemptor's need is kept, in
the same cycle, from the work it would take that room back from in the next: lower-priority
work of its own ClusterQueue, and borrowers of other ClusterQueues its queue may reclaim
from.

Found by the engine bench's steady state: a preemptor evicted a workload, was itself
reclaimed, the workload took its room in that cycle, and the preemptor evicted it again in
the next; and borrowers took a reclaimed victim's room and were reclaimed by it a cycle
later, round after round.

Pool ``all``: ClusterQueues a and b with 2 GPUs each, c with none (it borrows). ``a/p`` (priority 5) runs on 4 GPUs, borrowing b's two; ``b/r``
(1 GPU) reclaims them: p is evicted, r takes 1 GPU, and 3 are left over.
"""

from __future__ import annotations

import pytest
from builders.cycles import apply, pending, queues
from builders.engine import GPU, T0, admitted, cq, snapshot, wl
from hypothesis import example, given, settings

from admission.engine.cycle import run_cycle
from admission.engine.types import CycleResult, Snapshot
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    ClusterQueue,
    Preemption,
    ReclaimWithinCohort,
    WithinClusterQueue,
)
from quota.core.reasons import WaitReason
from quota.core.workload import Workload

RECLAIM = Preemption(WithinClusterQueue.LOWER_PRIORITY, ReclaimWithinCohort.ANY)
VICTIM = admitted(wl("p", {GPU: 4}, ns="a", priority=5), "a")
RECLAIMER = wl("r", {GPU: 1}, ns="b", created=1)


def pool(victims_reclaim: ReclaimWithinCohort = ReclaimWithinCohort.ANY) -> list[object]:
    """The pool above; ``victims_reclaim``: a's ``reclaimWithinCohort``."""
    return [cq("a", {"default": {GPU: 2}}, cohort="all",
               preemption=Preemption(WithinClusterQueue.LOWER_PRIORITY, victims_reclaim)),
            cq("b", {"default": {GPU: 2}}, cohort="all", preemption=RECLAIM),
            cq("c", {"default": {GPU: 0}}, cohort="all", preemption=RECLAIM)]


def cycle(*later: Workload, preemptor: Workload = RECLAIMER,
          victims_reclaim: ReclaimWithinCohort = ReclaimWithinCohort.ANY) -> CycleResult:
    return run_cycle(snapshot(*pool(victims_reclaim), VICTIM, preemptor, *later), T0)


ANY, LOWER, NEVER = (ReclaimWithinCohort.ANY, ReclaimWithinCohort.LOWER_PRIORITY,
                     ReclaimWithinCohort.NEVER)


@pytest.mark.parametrize(
    ("later", "victims_reclaim", "admitted_too"),
    [
        pytest.param(wl("v", {GPU: 2}, ns="a", priority=0, created=2), ANY, False,
                     id="lower-priority work of the victim's queue waits for the next cycle"),
        pytest.param(wl("v", {GPU: 2}, ns="a", priority=9, created=2), ANY, True,
                     id="work of higher priority than the victim takes the room at once"),
        pytest.param(wl("v", {GPU: 2}, ns="c", priority=0, created=2), ANY, False,
                     id="a borrower the victim's queue may reclaim from waits"),
        pytest.param(wl("v", {GPU: 1}, ns="b", priority=0, created=2), ANY, True,
                     id="work of another queue within its nominal quota takes it at once"),
        pytest.param(wl("v", {GPU: 2}, ns="c", priority=9, created=2), LOWER, True,
                     id="a borrower of higher priority than a LowerPriority reclaimer "
                        "takes it"),
        pytest.param(wl("v", {GPU: 2}, ns="c", priority=0, created=2), LOWER, False,
                     id="a borrower of lower priority than a LowerPriority reclaimer waits"),
        pytest.param(wl("v", {GPU: 2}, ns="c", priority=0, created=2), NEVER, True,
                     id="a borrower takes it where the victim's queue never reclaims"),
        pytest.param(wl("v", {GPU: 4}, ns="c", priority=0, created=2), NEVER, False,
                     id="the room the preemptor took is not left over"),
    ],
)
def test_a_victims_room_goes_first_to_work_it_would_not_take_it_back_from(
        later: Workload, victims_reclaim: ReclaimWithinCohort, admitted_too: bool) -> None:
    result = cycle(later, victims_reclaim=victims_reclaim)
    assert [(e.key, e.preemptor) for e in result.evicted] == [("a/p", "b/r")]
    admitted_keys = {d.key for d in result.admitted}
    assert admitted_keys == ({"b/r", later.key} if admitted_too else {"b/r"})


@pytest.mark.parametrize("queue", ["a", "c"], ids=["its own queue's", "a borrower's"])
def test_the_work_kept_out_is_told_which_victim_the_room_waits_for(queue: str) -> None:
    later = wl("v", {GPU: 2}, ns=queue, priority=0, created=2)
    result = cycle(later)
    reason = result.pending[later.key].reason
    assert reason.code is WaitReason.RESERVED_BY_HIGHER_PRIORITY
    assert reason.details == {"reservedFor": "a/p", "priority": 5}
    assert "preempted in this cycle" in reason.message
    # In the next cycle the victim comes first; on 3 free GPUs it no longer fits (it
    # needs 4, and nothing it may evict runs), so v takes the room.
    again = run_cycle(apply(snapshot(*pool(), VICTIM, RECLAIMER, later), result), T0)
    assert again.evicted == ()
    assert [d.key for d in again.admitted] == [later.key]


def test_a_borrower_kept_out_by_a_victim_of_lower_priority_is_looked_at_again() -> None:
    later = wl("v", {GPU: 2}, ns="c", priority=9, created=2)  # a reclaims from any priority
    result = cycle(later)
    assert later.key not in {d.key for d in result.admitted}
    assert result.pending[later.key].reason.code is WaitReason.PENDING_EVALUATION


def test_a_victim_of_its_own_queue_keeps_its_room_from_the_work_behind_it() -> None:
    urgent = wl("q", {GPU: 1}, ns="a", priority=9, created=1)
    result = cycle(wl("v", {GPU: 2}, ns="a", priority=0, created=2), preemptor=urgent)
    assert [(e.key, e.preemptor, str(e.cause)) for e in result.evicted] == [
        ("a/p", "a/q", "InClusterQueue")]
    assert [d.key for d in result.admitted] == ["a/q"]


def _pool(queues_: list[tuple[str, dict[str, tuple[int, int | None, int | None]],
                              Preemption]]) -> list[ClusterQueue]:
    out = []
    for name, flavors, policy in queues_:
        out.append(cq(name, {f: {GPU: n} for f, (n, _, _) in flavors.items()}, cohort="all",
                      borrowing={(f, GPU): b for f, (_, b, _) in flavors.items() if b is not None},
                      lending={(f, GPU): lend for f, (_, _, lend) in flavors.items()
                               if lend is not None},
                      preemption=policy))
    return out


NEWER = WithinClusterQueue.LOWER_OR_NEWER_EQUAL_PRIORITY
# Found by this property before the rule: c/x1 evicted a/x2, was reclaimed in turn, a/x2
# took the room c/x1 left in that cycle, and c/x1 evicted it again in the next.
FOUND = (
    _pool([("a", {"f1": (5, 1, None), "f2": (5, None, 3)},
            Preemption(WithinClusterQueue.LOWER_PRIORITY, ReclaimWithinCohort.ANY,
                       BorrowWithinCohort(BorrowWithinCohortPolicy.LOWER_PRIORITY, 3))),
           ("b", {"f1": (2, 3, 0), "f2": (5, 6, 2)}, Preemption(NEWER, ReclaimWithinCohort.ANY)),
           ("c", {"f1": (6, None, None), "f2": (2, 4, None)},
            Preemption(NEWER, ReclaimWithinCohort.ANY))]),
    [wl("w0", {GPU: 6}, ns="b", count=2, priority=2, created=0),
     wl("w1", {GPU: 2}, ns="b", count=1, priority=2, created=4),
     wl("w2", {GPU: 5}, ns="c", count=2, priority=1, created=3)],
    [wl("x0", {GPU: 2}, ns="c", count=1, priority=1, created=2),
     wl("x1", {GPU: 4}, ns="c", count=1, priority=2, created=0),
     wl("x2", {GPU: 3}, ns="a", count=2, priority=3, created=2),
     wl("x3", {GPU: 6}, ns="a", count=1, priority=3, created=3),
     wl("x4", {GPU: 2}, ns="a", count=1, priority=1, created=2),
     wl("x5", {GPU: 2}, ns="c", count=2, priority=3, created=1)],
)


def _with(snap: Snapshot, workloads: list[Workload]) -> Snapshot:
    return snapshot(*snap.cluster_queues.values(), *snap.workloads.values(), *workloads)


@settings(max_examples=150, deadline=None)
@given(queues(preemption=True), pending(), pending("x"))
@example(*FOUND)
def test_no_workload_is_evicted_twice_by_one_preemptor_in_quota_pools(
        pool: list[ClusterQueue], first: list[Workload], later: list[Workload]) -> None:
    """Cycles at one instant, where ``later`` arrives once ``first`` is placed: every
    (victim, preemptor) pair occurs once, and the pool settles."""
    snap = snapshot(*pool, *first)
    seen: set[tuple[str, str]] = set()
    for n in range(40):
        if n == 1:
            snap = _with(snap, later)
        result = run_cycle(snap, T0)
        if n >= 1 and not result.admitted and not result.evicted:
            return
        for eviction in result.evicted:
            pair = (eviction.key, eviction.preemptor)
            assert pair not in seen, f"{eviction.key} evicted again by {eviction.preemptor}"
            seen.add(pair)
        snap = apply(snap, result)
    raise AssertionError("no fixed point after 40 cycles")

