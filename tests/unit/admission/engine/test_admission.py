"""Quota admission, ordering, StrictFIFO, positions and the reasons a workload waits."""

from __future__ import annotations

import pytest
from builders.engine import CPU, GPU, T0, admitted, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.types import CycleResult
from quota.core.model import Preemption, QueueingStrategy, ReclaimWithinCohort

FR = ("default", GPU)
STRICT = QueueingStrategy.STRICT_FIFO


def run(*objects: object) -> CycleResult:
    return run_cycle(snapshot(*objects), T0)


def keys(result: CycleResult) -> list[str]:
    return [d.key for d in result.admitted]


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        pytest.param([cq("a", {"default": {GPU: 8}}), wl("x", {GPU: 4}, count=2)], ["a/x"],
                     id="a workload within nominal quota is admitted"),
        pytest.param([cq("a", {"default": {GPU: 8}}), wl("x", {GPU: 4}, created=1),
                      wl("y", {GPU: 4}, created=2), wl("z", {GPU: 4}, created=3)],
                     ["a/x", "a/y"], id="older workloads go first and only what fits goes"),
        pytest.param([cq("a", {"default": {GPU: 8}}), wl("x", {GPU: 8}, created=1),
                      wl("y", {GPU: 8}, created=2, priority=5)], ["a/y"],
                     id="priority beats age"),
        pytest.param([cq("a", {"default": {GPU: 8}}), wl("y", {GPU: 8}), wl("x", {GPU: 8})],
                     ["a/x"], id="equal priority and age fall back to the key"),
        pytest.param([cq("a", {"default": {GPU: 8}}), wl("big", {GPU: 16}),
                      wl("small", {GPU: 2}, created=1)], ["a/small"],
                     id="best-effort FIFO lets a later workload that fits go ahead"),
        pytest.param([cq("a", {"default": {GPU: 8}}, strategy=STRICT),
                      admitted(wl("old", {GPU: 6}), "a"), wl("head", {GPU: 4}),
                      wl("small", {GPU: 2}, created=1)], [],
                     id="strict FIFO blocks a small job behind the head"),
        pytest.param([cq("a", {"default": {GPU: 8}}, strategy=STRICT), wl("never", {GPU: 16}),
                      wl("small", {GPU: 2}, created=1)], ["a/small"],
                     id="strict FIFO does not block behind a head that can never fit"),
        pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c"),
                      cq("b", {"default": {GPU: 4}}, cohort="c"),
                      wl("borrower", {GPU: 6}), wl("owner", {GPU: 4}, ns="b", created=5)],
                     ["b/owner"], id="non-borrowing admissions go before borrowing ones"),
        pytest.param([cq("a", {"default": {GPU: 4}}, cohort="c"),
                      cq("b", {"default": {GPU: 4}}, cohort="c"),
                      wl("borrower", {GPU: 6})], ["a/borrower"],
                     id="a queue borrows its cohort's unused quota"),
        pytest.param([cq(n, {"default": {GPU: 2}}) for n in "abc"]
                     + [wl(f"w{i}", {GPU: 1}, ns=n, created=i) for n in "abc" for i in range(3)],
                     ["a/w0", "a/w1", "b/w0", "b/w1", "c/w0", "c/w1"],
                     id="one cycle admits many workloads across and within queues"),
        pytest.param([cq("a", {"default": {GPU: 8, CPU: 4}}),
                      wl("x", {GPU: 1, CPU: 4}), wl("y", {GPU: 1, CPU: 1}, created=1)],
                     ["a/x"], id="every resource of a workload must fit"),
    ],
)
def test_admission(objects: list[object], expected: list[str]) -> None:
    assert sorted(keys(run(*objects))) == expected


def test_borrowing_flag_and_assignment() -> None:
    result = run(cq("a", {"default": {GPU: 4}}, cohort="c"),
                 cq("b", {"default": {GPU: 4}}, cohort="c"),
                 wl("x", {GPU: 3}, count=2))
    (decision,) = result.admitted
    assert decision.borrowing
    assert decision.admission.cluster_queue == "a"
    (pod_set,) = decision.admission.pod_sets
    assert (pod_set.count, dict(pod_set.flavors), dict(pod_set.usage)) == (
        2, {GPU: "default"}, {GPU: 6000})


def test_positions_follow_pending_order() -> None:
    result = run(cq("a", {"default": {GPU: 1}}), wl("w0", {GPU: 1}),
                 wl("w1", {GPU: 1}, created=3), wl("w2", {GPU: 1}, created=2, priority=1),
                 wl("w3", {GPU: 1}, created=1))
    assert keys(result) == ["a/w2"]
    assert {k: p.position for k, p in result.pending.items()} == {
        "a/w0": 1, "a/w3": 2, "a/w1": 3}


def test_waiting_for_quota_reason_has_every_detail() -> None:
    result = run(cq("a", {"default": {GPU: 8}}, cohort="c", borrowing={FR: 2}),
                 cq("b", {"default": {GPU: 4}}, cohort="c"),
                 admitted(wl("held", {GPU: 6}), "a"),
                 admitted(wl("other", {GPU: 3}, ns="b"), "b"),
                 wl("x", {GPU: 8}, created=1))
    status = result.pending["a/x"]
    assert status.reason.code == "WaitingForQuota"
    assert status.reason.message == (
        "insufficient unused quota for nvidia.com/gpu in flavor default of ClusterQueue a: "
        "8 requested, 3 available, 5 more needed (cohort lends at most 1 more)")
    assert status.reason.details == {
        "podSet": "main", "flavor": "default", "resource": GPU, "requested": "8",
        "available": "3", "shortfall": "5", "nominal": "8", "used": "6",
        "borrowingLimit": "2", "borrowable": "1", "holders": ["a/held", "b/other"]}
    assert status.position == 1


@pytest.mark.parametrize(
    ("policy", "hint"),
    [
        pytest.param(ReclaimWithinCohort.NEVER, "ClusterQueue a borrows 6 nvidia.com/gpu",
                     id="a hint names the borrower holding the quota"),
        pytest.param(ReclaimWithinCohort.LOWER_PRIORITY,
                     "ClusterQueue a borrows 6 nvidia.com/gpu reclaimable by b",
                     id="a hint says the quota is reclaimable when the policy allows it"),
    ],
)
def test_hints_name_the_borrower(policy: ReclaimWithinCohort, hint: str) -> None:
    result = run(cq("a", {"default": {GPU: 2}}, cohort="c"),
                 cq("b", {"default": {GPU: 8}}, cohort="c",
                    preemption=Preemption(reclaim_within_cohort=policy)),
                 admitted(wl("borrower", {GPU: 8}, priority=9), "a"),
                 wl("x", {GPU: 4}, ns="b"))
    assert result.pending["b/x"].hints == (hint,)


def test_exceeds_max_quota_details() -> None:
    result = run(cq("a", {"default": {GPU: 8}}, cohort="c", borrowing={FR: 2}),
                 cq("b", {"default": {GPU: 8}}, cohort="c"), wl("x", {GPU: 4}, count=3))
    reason = result.pending["a/x"].reason
    assert reason.code == "ExceedsMaxQuota"
    assert reason.details == {"podSet": "main", "flavor": "default", "resource": GPU,
                              "requested": "12", "maximum": "10"}
    assert "requests 12 nvidia.com/gpu" in reason.message and "at most 10" in reason.message


def test_blocked_by_queue_head_details_and_all_reasons() -> None:
    result = run(cq("a", {"default": {GPU: 8}}, strategy=STRICT),
                 admitted(wl("old", {GPU: 6}), "a"), wl("head", {GPU: 4}),
                 wl("fits", {GPU: 2}, created=1), wl("short", {GPU: 3}, created=2))
    fits, short = result.pending["a/fits"], result.pending["a/short"]
    assert [r.code for r in fits.reasons] == ["BlockedByQueueHead"]
    assert fits.reason.details == {"head": "a/head", "position": 2}
    assert [r.code for r in short.reasons] == ["BlockedByQueueHead", "WaitingForQuota"]
    assert short.reason.details == {"head": "a/head", "position": 3}
    assert result.pending["a/head"].reason.code == "WaitingForQuota"


def test_pod_sets_of_one_workload_add_up() -> None:
    from dataclasses import replace

    from quota.core.workload import PodSet

    two = replace(wl("x", {GPU: 1}), pod_sets=(PodSet("driver", 1, {GPU: 4000}),
                                                PodSet("workers", 2, {GPU: 3000})))
    result = run(cq("a", {"default": {GPU: 8}}), two)
    reason = result.pending["a/x"].reason
    assert reason.code == "ExceedsMaxQuota"
    assert (reason.details["podSet"], reason.details["requested"]) == ("workers", "10")
