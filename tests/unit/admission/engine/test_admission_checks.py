"""Two-phase admission in the engine: which admissions only reserve quota, and what the
check states of a reservation decide (the states are input, set by their controllers)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from builders.engine import admitted, at, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from admission.engine.types import Snapshot
from quota.core.checks import (
    AdmissionCheck,
    CheckRule,
    CheckState,
    CheckStatus,
    ParametersRef,
    ProvisioningRequestConfig,
    RetryStrategy,
)
from quota.core.model import Preemption, WithinClusterQueue
from quota.core.reasons import WaitReason
from quota.core.workload import Workload, WorkloadState

GPU = "nvidia.com/gpu"
NOW = at(100)
PROV = AdmissionCheck("prov", "example.com/capacity",
                      ParametersRef("kueue.x-k8s.io", "ProvisioningRequestConfig", "cfg"))
CONFIG = ProvisioningRequestConfig("cfg", "check-capacity.autoscaling.x-k8s.io",
                                   retry_strategy=RetryStrategy(2, 60, 1800))


def _world(*objects: object, rules: tuple[CheckRule, ...] = (CheckRule("prov"),),
           checks: tuple[AdmissionCheck, ...] = (PROV,),
           preemption: Preemption | None = None, flavors: tuple[str, ...] = ("a100", "h100"),
           ) -> Snapshot:
    team = replace(cq("a", {f: {GPU: 8} for f in flavors}, preemption=preemption),
                   admission_checks=rules)
    base = snapshot(team, *objects)
    return replace(base, admission_checks={c.name: c for c in checks},
                   provisioning_configs={"cfg": CONFIG})


def _reserving(name: str, *states: CheckStatus, priority: int = 0) -> Workload:
    held = admitted(wl(name, {GPU: 4}, priority=priority), "a", "a100",
                    state=WorkloadState.QUOTA_RESERVED)
    return replace(held, checks=states or (CheckStatus("prov"),))


@pytest.mark.parametrize(("rules", "reserves"), [
    pytest.param((CheckRule("prov"),), ("prov",), id="a check on every flavor applies"),
    pytest.param((CheckRule("prov", ("a100",)),), ("prov",),
                 id="a check on the assigned flavor applies"),
    pytest.param((CheckRule("prov", ("h100",)),), (),
                 id="a check on another flavor does not: admitted at once"),
])
def test_an_admission_reserves_quota_when_its_flavor_has_checks(
    rules: tuple[CheckRule, ...], reserves: tuple[str, ...]
) -> None:
    result = run_cycle(_world(wl("train", {GPU: 4}), rules=rules), NOW)
    (decision,) = result.admitted
    assert decision.checks == reserves


@pytest.mark.parametrize(("status", "outcome"), [
    pytest.param(CheckStatus("prov", CheckState.READY), "admitted",
                 id="every check Ready admits it"),
    pytest.param(CheckStatus("prov", CheckState.PENDING, "provisioning"), "waits",
                 id="a Pending check keeps it waiting with its message"),
    pytest.param(CheckStatus("prov", CheckState.RETRY, "zone full"), "AdmissionCheck",
                 id="Retry evicts it to be requeued"),
    pytest.param(CheckStatus("prov", CheckState.RETRY, "zone full", retries=2), "Deactivated",
                 id="Retry past backoffLimitCount rejects it"),
    pytest.param(CheckStatus("prov", CheckState.REJECTED, "no"), "Deactivated",
                 id="Rejected deactivates it"),
])
def test_check_states_decide_a_reservation(status: CheckStatus, outcome: str) -> None:
    result = run_cycle(_world(_reserving("train", status)), NOW)
    if outcome == "admitted":
        assert [(d.key, d.checked) for d in result.admitted] == [("a/train", True)]
    elif outcome == "waits":
        reason = result.pending["a/train"].reason
        assert (reason.code, reason.details["state"], reason.details["message"]) == (
            WaitReason.WAITING_FOR_ADMISSION_CHECK, "Pending", "provisioning")
        assert result.pending["a/train"].position is None
    else:
        assert [(e.key, e.reason) for e in result.evicted] == [("a/train", outcome)]


def test_a_retry_waits_out_the_configured_backoff_before_it_is_queued_again() -> None:
    result = run_cycle(_world(_reserving("train", CheckStatus(
        "prov", CheckState.RETRY, retries=1))), NOW)
    (eviction,) = result.evicted
    assert eviction.requeue_at == NOW + timedelta(seconds=120)  # 60s doubled, second retry
    requeued = replace(wl("train", {GPU: 4}), requeue_at=eviction.requeue_at,
                       checks=(CheckStatus("prov", CheckState.RETRY, retries=2),))
    waiting = run_cycle(_world(requeued), NOW + timedelta(seconds=60))
    assert not waiting.admitted
    assert waiting.pending["a/train"].reason.details["until"] == eviction.requeue_at.isoformat()
    assert run_cycle(_world(requeued), eviction.requeue_at).admitted


def test_a_reservation_holds_quota_and_can_be_preempted_like_an_admission() -> None:
    within = Preemption(within_cluster_queue=WithinClusterQueue.LOWER_PRIORITY)
    world = _world(_reserving("low"), replace(_reserving("low-2"), name="low-2"),
                   wl("urgent", {GPU: 8}, priority=100), preemption=within, flavors=("a100",))
    result = run_cycle(world, NOW)
    assert sorted(e.key for e in result.evicted) == ["a/low", "a/low-2"]


def test_a_queue_naming_a_check_that_does_not_exist_is_misconfigured() -> None:
    result = run_cycle(_world(wl("train", {GPU: 4}), checks=()), NOW)
    reason = result.pending["a/train"].reason
    assert reason.code is WaitReason.MISCONFIGURED
    assert "admission check prov" in reason.message
