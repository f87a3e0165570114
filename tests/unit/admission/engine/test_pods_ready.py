"""waitForPodsReady: timeouts, recovery, the backoff sequence, the limit, blockAdmission."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from builders.engine import GPU, admitted, at, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.node_faults import POD_NODES, pod_nodes_annotation
from admission.engine.pods_ready import NODE_FAULT, pods_ready_evictions
from admission.engine.transitions import evicted, pods_ready
from quota.core.model import Node, NodeHealth
from quota.core.pods_ready import (
    REQUEUING_LIMIT_EXCEEDED,
    PodsReadyPolicy,
    Readiness,
    parse_duration,
)
from quota.core.reasons import EvictionReason, WaitReason
from quota.core.workload import Workload, WorkloadState

ON = PodsReadyPolicy(enable=True, timeout=timedelta(minutes=5))


def running(*, when: float = 0, **extra: object) -> Workload:
    """Team a's 8-pod job, admitted at ``when`` seconds, its pods not Ready yet."""
    job = admitted(wl("job", {GPU: 1}, count=8), "a", when=when)
    fields: dict[str, object] = {"readiness_since": at(when), **extra}
    return replace(job, **fields)  # type: ignore[arg-type]


TIMEOUTS = [
    pytest.param(ON, running(), 299, None, id="within the timeout nothing happens"),
    pytest.param(ON, running(), 300, EvictionReason.PODS_READY_TIMEOUT,
                 id="pods not all Ready when the timeout ends: evicted"),
    pytest.param(ON, running(readiness=Readiness.READY), 3600, None,
                 id="a workload whose pods are Ready is never timed out"),
    pytest.param(replace(ON, enable=False), running(), 3600, None,
                 id="disabled: nothing is ever timed out"),
    pytest.param(ON, running(readiness=Readiness.WAIT_FOR_RECOVERY, readiness_since=at(600)),
                 899, None, id="lost readiness: the recovery timeout runs from the loss"),
    pytest.param(ON, running(readiness=Readiness.WAIT_FOR_RECOVERY, readiness_since=at(600)),
                 900, EvictionReason.PODS_READY_TIMEOUT,
                 id="recovery timeout defaults to the timeout and evicts when it ends"),
    pytest.param(replace(ON, recovery_timeout=timedelta(0)),
                 running(readiness=Readiness.WAIT_FOR_RECOVERY, readiness_since=at(600)),
                 36000, None, id="recoveryTimeout 0s turns the recovery check off"),
    pytest.param(replace(ON, recovery_timeout=timedelta(minutes=1)),
                 running(readiness=Readiness.WAIT_FOR_RECOVERY, readiness_since=at(600)),
                 660, EvictionReason.PODS_READY_TIMEOUT, id="a shorter recoveryTimeout is kept"),
    pytest.param(replace(ON, backoff_limit_count=2), running(requeue_count=2), 300,
                 EvictionReason.DEACTIVATED, id="past backoffLimitCount it is deactivated"),
    pytest.param(replace(ON, backoff_limit_count=2), running(requeue_count=1), 300,
                 EvictionReason.PODS_READY_TIMEOUT, id="at the limit's last requeue it is requeued"),
]


@pytest.mark.parametrize(("policy", "workload", "now", "reason"), TIMEOUTS)
def test_pods_ready_timeouts(policy: PodsReadyPolicy, workload: Workload, now: float,
                             reason: str | None) -> None:
    found = pods_ready_evictions({workload.key: workload}, {}, policy, at(now))
    assert [e.reason for e in found] == ([] if reason is None else [reason])


BACKOFFS = [
    pytest.param(PodsReadyPolicy(), [60, 120, 240, 480, 960, 1920, 3600, 3600],
                 id="Kueue's defaults: 60s doubling, capped at an hour"),
    pytest.param(PodsReadyPolicy(backoff_base_seconds=10, backoff_max_seconds=45),
                 [10, 20, 40, 45, 45], id="a small base and cap"),
]


@pytest.mark.parametrize(("policy", "seconds"), BACKOFFS)
def test_backoff_sequence(policy: PodsReadyPolicy, seconds: list[int]) -> None:
    waits = [policy.backoff(n).total_seconds() for n in range(1, len(seconds) + 1)]
    assert waits == seconds


def test_each_timeout_counts_a_requeue_and_waits_out_its_backoff() -> None:
    job = running()
    until = []
    for n in range(1, 4):
        due = job.admitted_at + ON.timeout  # type: ignore[operator]
        (eviction,) = pods_ready_evictions({job.key: job}, {}, ON, due)
        moved = evicted(job, eviction.reason, due, requeue_at=eviction.requeue_at).workload
        assert (moved.state, moved.requeue_count) == (WorkloadState.PENDING, n)
        until.append((moved.requeue_at - due).total_seconds())  # type: ignore[operator]
        job = running(when=(moved.requeue_at - at(0)).total_seconds(),  # type: ignore[operator]
                      requeue_count=n)
    assert until == [60, 120, 240]


def test_the_limit_deactivates_with_a_reason_saying_so() -> None:
    policy = replace(ON, backoff_limit_count=1)
    job = running(requeue_count=1)
    (eviction,) = pods_ready_evictions({job.key: job}, {}, policy, at(300))
    moved = evicted(job, eviction.reason, at(300), deactivation=eviction.deactivation).workload
    assert (moved.state, moved.active, moved.deactivation) == (
        WorkloadState.DEACTIVATED, False, REQUEUING_LIMIT_EXCEEDED)
    result = run_cycle(replace(snapshot(cq("a", {"default": {GPU: 8}}), moved),
                               pods_ready=policy), at(301))
    reason = result.pending[moved.key].reason
    assert (reason.code, reason.details) == (WaitReason.DEACTIVATED,
                                             {"reason": REQUEUING_LIMIT_EXCEEDED})


READINESS = [
    pytest.param(Readiness.WAIT_FOR_START, True, Readiness.READY, id="all pods Ready"),
    pytest.param(Readiness.READY, False, Readiness.WAIT_FOR_RECOVERY,
                 id="a Ready workload losing a pod waits for recovery"),
    pytest.param(Readiness.WAIT_FOR_START, False, None,
                 id="not Ready before it ever was: still the wait to start"),
    pytest.param(Readiness.READY, True, None, id="Ready again changes nothing"),
]


@pytest.mark.parametrize(("before", "ready", "after"), READINESS)
def test_readiness_moves(before: Readiness, ready: bool, after: Readiness | None) -> None:
    moved = pods_ready(running(readiness=before), ready, at(30))
    assert (None if moved is None else moved.readiness) == after
    if moved is not None:
        assert moved.readiness_since == at(30)


def test_a_pending_workload_backs_off_until_its_requeue_time() -> None:
    job = wl("job", {GPU: 1}, requeue_at=at(120), requeue_count=1)
    world = replace(snapshot(cq("a", {"default": {GPU: 8}}), job), pods_ready=ON)
    waiting = run_cycle(world, at(60))
    assert not waiting.admitted
    reason = waiting.pending[job.key].reason
    assert (reason.code, reason.details["until"]) == (WaitReason.WAITING_FOR_PODS_READY,
                                                      at(120).isoformat())
    assert [d.key for d in run_cycle(world, at(120)).admitted] == [job.key]


BLOCKING = [
    pytest.param(True, Readiness.WAIT_FOR_START, [],
                 id="blockAdmission holds all while one is not Ready"),
    pytest.param(True, Readiness.READY, ["a/new"],
                 id="every admitted one Ready: the next is admitted (and holds the rest)"),
    pytest.param(False, Readiness.WAIT_FOR_START, ["a/new", "a/next"],
                 id="without blockAdmission nobody waits for readiness"),
]


@pytest.mark.parametrize(("block", "readiness", "keys"), BLOCKING)
def test_block_admission(block: bool, readiness: Readiness, keys: list[str]) -> None:
    world = snapshot(cq("a", {"default": {GPU: 32}}), running(readiness=readiness),
                     wl("new", {GPU: 1}, created=1), wl("next", {GPU: 1}, created=2))
    result = run_cycle(replace(world, pods_ready=replace(ON, block_admission=block)), at(10))
    assert sorted(d.key for d in result.admitted) == keys
    if not keys:
        reason = result.pending["a/new"].reason
        assert (reason.code, reason.details) == (WaitReason.WAITING_FOR_PODS_READY,
                                                 {"workload": "a/job"})


def test_block_admission_admits_one_at_a_time() -> None:
    world = snapshot(cq("a", {"default": {GPU: 32}}), wl("new", {GPU: 1}, created=1),
                     wl("next", {GPU: 1}, created=2))
    result = run_cycle(replace(world, pods_ready=replace(ON, block_admission=True)), at(10))
    assert [d.key for d in result.admitted] == ["a/new"]
    assert result.pending["a/next"].reason.details == {"workload": "a/new"}


DURATIONS = [
    pytest.param("5m", 300, id="minutes"), pytest.param("1h30m", 5400, id="hours and minutes"),
    pytest.param("90s", 90, id="seconds"), pytest.param("0s", 0, id="zero"),
]


@pytest.mark.parametrize(("text", "seconds"), DURATIONS)
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text).total_seconds() == seconds


@pytest.mark.parametrize("text", ["", "5", "5 m", "1d", 5, None])
def test_bad_durations_are_refused(text: object) -> None:
    with pytest.raises(ValueError, match="not a duration"):
        parse_duration(text)


NODE_FAULTS = [
    pytest.param(NodeHealth.DEGRADED, ["gpu-1"], id="pods on a node Berth marked unhealthy: a node fault"),
    pytest.param(NodeHealth.HEALTHY, None, id="pods on a healthy node: the workload's own fault"),
]


@pytest.mark.parametrize(("health", "named"), NODE_FAULTS)
def test_a_timeout_names_the_unhealthy_nodes_its_pods_were_on(
    health: NodeHealth, named: list[str] | None
) -> None:
    job = running(annotations={POD_NODES: pod_nodes_annotation(["gpu-1"], at(1))})
    nodes = {"gpu-1": Node("gpu-1", health=health)}
    (eviction,) = pods_ready_evictions({job.key: job}, nodes, ON, at(300))
    assert eviction.details.get(NODE_FAULT) == named
