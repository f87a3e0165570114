"""Victim choice by work lost: held resources × time since the last checkpoint."""

from __future__ import annotations

from datetime import timedelta

import pytest
from builders.engine import GPU, admitted, at, cq, snapshot, wl

from admission.engine.candidates import lost_work
from admission.engine.cycle import run_cycle
from quota.core.checkpoints import CHECKPOINTED_AT, format_time, lost_since
from quota.core.model import Preemption, WithinClusterQueue

NOW = 3600  # seconds after T0: when every cycle below runs
LOWER = Preemption(within_cluster_queue=WithinClusterQueue.LOWER_PRIORITY)


def saved(seconds: float) -> dict[str, str]:
    return {CHECKPOINTED_AT: format_time(at(seconds))}


def victims(*holders: object, need: int = 4, quota: int = 8) -> list[str]:
    objects = [cq("a", {"default": {GPU: quota}}, preemption=LOWER), *holders,
               wl("high", {GPU: need}, priority=5)]
    result = run_cycle(snapshot(*objects), at(NOW))
    return sorted(e.key for e in result.evicted)


@pytest.mark.parametrize(
    ("holders", "expected"),
    [
        pytest.param(
            # old: 4 GPUs unsaved for 100s; new: 4 GPUs unsaved for 1800s. Recency alone
            # would take the newer one; it has lost 18 times more work.
            [admitted(wl("old", {GPU: 4}, annotations=saved(3500)), "a", when=0),
             admitted(wl("new", {GPU: 4}), "a", when=1800)],
            ["a/old"], id="a recent checkpoint makes the older workload the cheaper victim"),
        pytest.param(
            # big: 8 GPUs (2 needs) unsaved 600s = 1200; small: 4 GPUs (1 need) unsaved
            # 1100s = 1100. Time alone would pick big; resources × time picks small.
            [admitted(wl("big", {GPU: 8}, annotations=saved(3000)), "a", when=0),
             admitted(wl("small", {GPU: 4}), "a", when=2500)],
            ["a/small"], id="resources times time: fewer devices unsaved for longer lose less"),
        pytest.param(
            # resumed: its checkpoint (at 100s) predates this admission (3000s), so 600s
            # are unsaved; steady: checkpointed at 3300s during its run, 300s unsaved.
            [admitted(wl("resumed", {GPU: 4}, annotations=saved(100)), "a", when=3000),
             admitted(wl("steady", {GPU: 4}, annotations=saved(3300)), "a", when=0)],
            ["a/steady"], id="a checkpoint from before the admission does not count"),
        pytest.param(
            # Priority ranks first: the policy allows both, the lower one goes although it
            # has more unsaved work.
            [admitted(wl("p0", {GPU: 4}, priority=0), "a", when=0),
             admitted(wl("p1", {GPU: 4}, priority=1, annotations=saved(3590)), "a", when=0)],
            ["a/p0"], id="lower priority still goes first"),
        pytest.param(
            [admitted(wl("p9", {GPU: 4}, priority=9, annotations=saved(3599)), "a", when=0),
             admitted(wl("p0", {GPU: 4}), "a", when=0)],
            ["a/p0"], id="only victims the policy allows are considered"),
    ],
)
def test_least_work_lost_is_preempted(holders: list[object], expected: list[str]) -> None:
    quota = sum(h.admission.usage()[("default", GPU)] for h in holders) // 1000  # type: ignore[attr-defined]
    assert victims(*holders, quota=quota) == expected


def test_lost_work_weighs_each_slot_by_the_need() -> None:
    holder = admitted(wl("x", {GPU: 2, "cpu": 8}), "a", when=0)
    needed = {("default", GPU): 4000, ("default", "cpu"): 16000}
    held = {("default", GPU): 2000, ("default", "cpu"): 8000}
    # Half of the GPUs and half of the CPUs needed, unsaved for an hour: 3600 × (0.5 + 0.5).
    assert lost_work(holder, held, needed, at(NOW)) == 3600.0


def test_lost_since_is_the_later_of_admission_and_checkpoint() -> None:
    admitted_at = at(1000)
    workload = admitted(wl("x", {GPU: 1}, annotations=saved(1500)), "a", when=1000)
    assert lost_since(workload) == at(1500)
    earlier = admitted(wl("x", {GPU: 1}, annotations=saved(10)), "a", when=1000)
    assert lost_since(earlier) == admitted_at
    garbled = admitted(wl("x", {GPU: 1}, annotations={CHECKPOINTED_AT: "soon"}), "a", when=1000)
    assert lost_since(garbled) == admitted_at
    assert at(1500) - lost_since(workload) == timedelta(0)  # type: ignore[operator]
