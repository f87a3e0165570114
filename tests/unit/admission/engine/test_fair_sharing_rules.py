"""Fair sharing's configurable rules: Kueue's preemption strategies, fair sharing with
memory, admission fair sharing, and the minimum runtime before preemption."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from builders.engine import GPU, T0, M, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from quota.core.fairness import FINAL, INITIAL, PreemptionStrategy
from quota.core.model import (
    LocalQueue,
    Preemption,
    PriorityClass,
    ReclaimWithinCohort,
    WithinClusterQueue,
)
from quota.core.reasons import WaitReason
from quota.core.workload import Workload

ANY = Preemption(reclaim_within_cohort=ReclaimWithinCohort.ANY)
SLOT = ("default", GPU)


def _big_and_small() -> list[object]:
    """big borrows 10 of the 12 GPUs lender lends; small asks for 4 (two are free)."""
    return [cq("lender", {"default": {GPU: 12}}, cohort="c"),
            cq("big", {"default": {GPU: 0}}, cohort="c", preemption=ANY),
            cq("small", {"default": {GPU: 0}}, cohort="c", preemption=ANY),
            admitted(wl("giant", {GPU: 10}, ns="big"), "big"),
            wl("probe", {GPU: 4}, ns="small")]


@pytest.mark.parametrize(
    ("strategies", "evicted"),
    [
        pytest.param((FINAL,), [], id="LessThanOrEqualToFinalShare alone: big without giant would fall below small"),
        pytest.param((INITIAL,), ["big/giant"], id="LessThanInitialShare alone: big's share now is above small's"),
        pytest.param((FINAL, INITIAL), ["big/giant"], id="both, Kueue's default: the second makes room the first did not"),
    ],
)  # fmt: skip
def test_preemption_strategies(strategies: tuple[PreemptionStrategy, ...],
                               evicted: list[str]) -> None:
    snap = replace(snapshot(*_big_and_small(), fair_sharing=True), fair_strategies=strategies)
    result = run_cycle(snap, T0)
    assert [e.key for e in result.evicted] == evicted
    assert [str(e.cause) for e in result.evicted] == ["InCohortFairSharing"] * len(evicted)
    assert [d.key for d in result.admitted] == (["small/probe"] if evicted else [])


def test_no_victim_is_taken_when_the_strategies_together_cannot_make_room() -> None:
    # big holds two 5-GPU workloads; small needs 8 of which 2 are free. Each eviction by
    # LessThanInitialShare takes one (big is above small), which is not enough: none goes.
    objects = [cq("lender", {"default": {GPU: 12}}, cohort="c"),
               cq("big", {"default": {GPU: 0}}, cohort="c", preemption=ANY),
               cq("small", {"default": {GPU: 0}}, cohort="c", preemption=ANY),
               admitted(wl("one", {GPU: 5}, ns="big"), "big"),
               admitted(wl("two", {GPU: 5}, ns="big"), "big"),
               wl("probe", {GPU: 8}, ns="small")]
    result = run_cycle(snapshot(*objects, fair_sharing=True), T0)
    assert result.evicted == ()


def _day_seven() -> list[object]:
    return [cq("lender", {"default": {GPU: 8}}, cohort="c"),
            cq("a", {"default": {GPU: 0}}, cohort="c"),
            cq("b", {"default": {GPU: 0}}, cohort="c"),
            wl("busy-yesterday", {GPU: 8}, ns="b", created=0),
            wl("idle-all-week", {GPU: 8}, ns="a", created=1)]


@pytest.mark.parametrize(
    ("decayed", "first"),
    [
        pytest.param(None, "b/busy-yesterday", id="without memory equal shares go by age"),
        pytest.param({"b": {SLOT: 2 * M}, "a": {SLOT: 0}}, "a/idle-all-week",
                     id="with memory the team busy yesterday goes after the idle one"),
        pytest.param({"a": {SLOT: M // 16}, "b": {SLOT: 2 * M}}, "a/idle-all-week",
                     id="a team idle for six days is not penalised on day seven"),
    ],
)  # fmt: skip
def test_fair_sharing_with_memory_orders_admission(
    decayed: dict[str, dict[tuple[str, str], int]] | None, first: str
) -> None:
    snap = replace(snapshot(*_day_seven(), fair_sharing=True), decayed_usage=decayed)
    assert [d.key for d in run_cycle(snap, T0).admitted] == [first]


def test_memory_is_read_only_with_fair_sharing_on() -> None:
    snap = replace(snapshot(*_day_seven()), decayed_usage={"b": {SLOT: 2 * M}})
    assert [d.key for d in run_cycle(snap, T0).admitted] == ["b/busy-yesterday"]


def _shared(usage_based: bool) -> list[object]:
    return [replace(cq("shared", {"default": {GPU: 4}}), usage_based_admission=usage_based),
            LocalQueue("team", "heavy", "shared"), LocalQueue("team", "light", "shared"),
            wl("older", {GPU: 4}, ns="team", queue="heavy", created=0),
            wl("newer", {GPU: 4}, ns="team", queue="light", created=1)]


@pytest.mark.parametrize(
    ("usage_based", "usage", "first", "positions"),
    [
        pytest.param(False, {"team/heavy": 9.0}, "team/older", {"team/newer": 1},
                     id="without admissionScope the older workload goes first"),
        pytest.param(True, {"team/heavy": 9.0}, "team/newer", {"team/older": 1},
                     id="usage-based admission: the LocalQueue that used less goes first"),
        pytest.param(True, {}, "team/older", {"team/newer": 1},
                     id="equal usage falls back to priority and age"),
    ],
)  # fmt: skip
def test_admission_fair_sharing_orders_a_queue(
    usage_based: bool, usage: dict[str, float], first: str, positions: dict[str, int]
) -> None:
    snap = replace(snapshot(*_shared(usage_based)), queue_usage=usage)
    result = run_cycle(snap, T0)
    assert [d.key for d in result.admitted] == [first]
    assert {k: s.position for k, s in result.pending.items()} == positions


BATCH = PriorityClass("batch", 100, min_runtime=timedelta(hours=1))


def _preempting(victim: Workload, *, queue_runtime: timedelta | None = None) -> list[object]:
    team = replace(cq("team", {"default": {GPU: 8}},
                      preemption=Preemption(within_cluster_queue=WithinClusterQueue.LOWER_PRIORITY)),
                   min_runtime=queue_runtime)
    return [team, BATCH, victim, wl("urgent", {GPU: 4}, ns="team", priority=1000)]


@pytest.mark.parametrize(
    ("ran", "pc", "queue_runtime", "until"),
    [
        pytest.param(20, "batch", None, 60, id="a victim younger than its class's minimum runtime is kept"),
        pytest.param(60, "batch", None, None, id="once the minimum runtime is over it may be preempted"),
        pytest.param(20, None, timedelta(minutes=30), 30, id="the ClusterQueue's annotation protects too"),
        pytest.param(20, "batch", timedelta(minutes=90), 90, id="the longer of queue and class counts"),
        pytest.param(20, None, None, None, id="without min-runtime nothing is protected"),
    ],
)  # fmt: skip
def test_min_runtime_protects_young_victims(
    ran: int, pc: str | None, queue_runtime: timedelta | None, until: int | None
) -> None:
    victim = replace(admitted(wl("sweep", {GPU: 8}, ns="team"), "team"), priority_class=pc,
                     priority=100, admitted_at=T0 - timedelta(minutes=ran))
    result = run_cycle(snapshot(*_preempting(victim, queue_runtime=queue_runtime)), T0)
    if until is None:
        assert [e.key for e in result.evicted] == ["team/sweep"]
        return
    assert result.evicted == ()
    reason = result.pending["team/urgent"].reason
    assert reason.code is WaitReason.WAITING_FOR_QUOTA
    ends = victim.admitted_at + timedelta(minutes=until)  # type: ignore[operator]
    assert reason.details["until"] == ends.isoformat()
    assert reason.details["protectedVictims"] == ["team/sweep"]
    assert "within their minimum runtime until" in reason.message


def test_every_equal_preemptor_says_until_when() -> None:
    # The second urgent workload's search is answered by the first's failure: it is told
    # the same protection, not a bare WaitingForQuota.
    victim = replace(admitted(wl("sweep", {GPU: 8}, ns="team"), "team"), priority_class="batch",
                     priority=100, admitted_at=T0 - timedelta(minutes=20))
    objects = [*_preempting(victim), wl("urgent-2", {GPU: 4}, ns="team", priority=1000,
                                        created=1)]
    result = run_cycle(snapshot(*objects), T0)
    for key in ("team/urgent", "team/urgent-2"):
        assert result.pending[key].reason.details["protectedVictims"] == ["team/sweep"], key
