"""What a ProvisioningRequest's conditions say of its admission check (PURE)."""

from __future__ import annotations

import pytest

from admission.kube.provisioning import object_name, request_name, verdict_of
from quota.core.checks import CheckState


def _request(*conditions: tuple[str, str, str]) -> dict[str, object]:
    return {"status": {"conditions": [{"type": t, "status": s, "message": m}
                                      for t, s, m in conditions]}}


@pytest.mark.parametrize(("request_", "state", "message"), [
    pytest.param(_request(), CheckState.PENDING, "waiting for the ProvisioningRequest",
                 id="no condition yet: the check waits"),
    pytest.param(_request(("Accepted", "True", "queued in the autoscaler")),
                 CheckState.PENDING, "queued in the autoscaler",
                 id="accepted: waits with the autoscaler's words"),
    pytest.param(_request(("Provisioned", "True", "booked")), CheckState.READY, "booked",
                 id="provisioned: the check passes"),
    pytest.param(_request(("Provisioned", "True", ""), ("Failed", "True", "stock out")),
                 CheckState.RETRY, "Failed: stock out", id="failed wins: retry"),
    pytest.param(_request(("Provisioned", "True", ""), ("BookingExpired", "True", "")),
                 CheckState.RETRY, "BookingExpired", id="an expired booking retries"),
    pytest.param(_request(("CapacityRevoked", "True", "node gone")), CheckState.RETRY,
                 "CapacityRevoked: node gone", id="revoked capacity retries"),
    pytest.param(_request(("Provisioned", "False", "scaling up")), CheckState.PENDING,
                 "scaling up", id="not provisioned yet: waits"),
])
def test_conditions_become_a_check_state(request_: dict[str, object], state: CheckState,
                                         message: str) -> None:
    verdict = verdict_of(request_)
    assert (verdict.state, verdict.message) == (state, message)


def test_names_follow_kueue_and_stay_valid_when_long() -> None:
    assert request_name("train", "prov", 2) == "train-prov-2"
    long = object_name("x" * 300)
    assert len(long) <= 253 and long != object_name("x" * 301)
