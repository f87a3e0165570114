"""Room a preemption vacates: what a victim frees beyond its preemptor's need is not given,
in the same cycle, to lower-priority work of the victim's own ClusterQueue.

The victim queues again at once and comes first in its queue in the next cycle; work that
took its room would be preempted by it there. Found by the engine bench's steady state: a
preemptor evicted a workload, was itself reclaimed, the workload took its room in that
cycle, and the preemptor evicted it again in the next.

Pool ``all``: ClusterQueues a and b with 2 GPUs each, c with none (it borrows). ``a/p``
(priority 5) runs on 4 GPUs, borrowing b's two; ``b/r`` (1 GPU) reclaims them: p is
evicted, r takes 1 GPU, and 3 are left over.
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
POOL = [cq("a", {"default": {GPU: 2}}, cohort="all", preemption=RECLAIM),
        cq("b", {"default": {GPU: 2}}, cohort="all", preemption=RECLAIM),
        cq("c", {"default": {GPU: 0}}, cohort="all", preemption=RECLAIM)]
VICTIM = admitted(wl("p", {GPU: 4}, ns="a", priority=5), "a")
RECLAIMER = wl("r", {GPU: 1}, ns="b", created=1)


def cycle(*later: Workload, preemptor: Workload = RECLAIMER) -> CycleResult:
    return run_cycle(snapshot(*POOL, VICTIM, preemptor, *later), T0)


@pytest.mark.parametrize(
    ("later", "admitted_too"),
    [
        pytest.param(wl("v", {GPU: 2}, ns="a", priority=0, created=2), False,
                     id="lower-priority work of the victim's queue waits for the next cycle"),
        pytest.param(wl("v", {GPU: 2}, ns="a", priority=9, created=2), True,
                     id="work of higher priority than the victim takes the room at once"),
        pytest.param(wl("v", {GPU: 2}, ns="c", priority=0, created=2), True,
                     id="work of another ClusterQueue takes the room at once"),
        pytest.param(wl("v", {GPU: 4}, ns="c", priority=0, created=2), False,
                     id="the room the preemptor took is not left over"),
    ],
)
def test_a_victims_room_goes_first_to_work_it_does_not_come_before(
        later: Workload, admitted_too: bool) -> None:
    result = cycle(later)
    assert [(e.key, e.preemptor) for e in result.evicted] == [("a/p", "b/r")]
    admitted_keys = {d.key for d in result.admitted}
    assert admitted_keys == ({"b/r", later.key} if admitted_too else {"b/r"})


def test_the_work_kept_out_is_told_which_victim_the_room_waits_for() -> None:
    result = cycle(wl("v", {GPU: 2}, ns="a", priority=0, created=2))
    reason = result.pending["a/v"].reason
    assert reason.code is WaitReason.RESERVED_BY_HIGHER_PRIORITY
    assert reason.details == {"reservedFor": "a/p", "priority": 5}
    assert "preempted in this cycle" in reason.message
    # In the next cycle the victim comes first in its queue; on 3 free GPUs it no longer
    # fits (it needs 4, and nothing of lower priority runs), so v takes the room.
    again = run_cycle(apply(snapshot(*POOL, VICTIM, RECLAIMER,
                                     wl("v", {GPU: 2}, ns="a", priority=0, created=2)),
                            result), T0)
    assert again.evicted == ()
    assert [d.key for d in again.admitted] == ["a/v"]


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

