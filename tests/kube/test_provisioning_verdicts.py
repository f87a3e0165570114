"""What a ProvisioningRequest's conditions say of its admission check (PURE)."""

from __future__ import annotations

import pytest

from admission.kube.provisioning import merge_pod_sets, object_name, request_name, verdict_of
from admission.kube.templates import template_annotations_patch
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


def _template(gpus: str = "1", **pod: object) -> dict[str, object]:
    container = {"name": "main", "image": "trainer:1",
                 "resources": {"requests": {"nvidia.com/gpu": gpus}}}
    return {"metadata": {"labels": {"app": "train"}},
            "spec": {"containers": [container], **pod}}


ZONE_A = {"nodeSelector": {"zone": "a"}}


@pytest.mark.parametrize(("policy", "pod_sets", "merged"), [
    pytest.param(None, [("a", _template(), 2), ("b", _template(), 3)], [("a", 2), ("b", 3)],
                 id="no policy: every pod set keeps its own template"),
    pytest.param("IdenticalPodTemplates", [("a", _template(), 2), ("b", _template(), 3)],
                 [("a", 5)], id="identical templates merge into the first, counts summed"),
    pytest.param("IdenticalPodTemplates",
                 [("a", _template(), 1), ("b", _template("2"), 1), ("c", _template(), 4)],
                 [("a", 5), ("b", 1)], id="a later pod set joins the first it matches"),
    pytest.param("IdenticalPodTemplates",
                 [("a", _template(), 1), ("b", _template(tolerations=[]), 1)], [("a", 2)],
                 id="an empty list is the same as an absent one"),
    pytest.param("IdenticalPodTemplates",
                 [("a", _template(), 1), ("b", {**_template(), "metadata": {}}, 1)],
                 [("a", 1), ("b", 1)], id="templates differing in labels do not merge"),
    pytest.param("IdenticalWorkloadSchedulingRequirements",
                 [("a", _template(), 1), ("b", {**_template(), "metadata": {}}, 1)],
                 [("a", 2)], id="same requirements merge though labels differ"),
    pytest.param("IdenticalWorkloadSchedulingRequirements",
                 [("a", _template("1"), 1), ("b", _template("1000m"), 1)], [("a", 2)],
                 id="requests compare as quantities"),
    pytest.param("IdenticalWorkloadSchedulingRequirements",
                 [("a", _template(), 1), ("b", _template(**ZONE_A), 1)], [("a", 1), ("b", 1)],
                 id="a different nodeSelector keeps them apart"),
    pytest.param("IdenticalWorkloadSchedulingRequirements",
                 [("a", _template(), 1), ("b", _template("2"), 1)], [("a", 1), ("b", 1)],
                 id="different requests keep them apart"),
    pytest.param("IdenticalPodTemplates", [("a", _template(), 0), ("b", _template(), 2)],
                 [("b", 2)], id="a pod set of no pods is left out"),
])
def test_pod_sets_merge_by_the_configs_policy(
    policy: str | None, pod_sets: list[tuple[str, dict[str, object], int]],
    merged: list[tuple[str, int]],
) -> None:
    assert [(p.name, p.count) for p in merge_pod_sets(pod_sets, policy)] == merged


_BOOKED = {"autoscaling.x-k8s.io/consume-provisioning-request": "train-prov-1"}


def _pod(**annotations: str) -> dict[str, object]:
    return {"metadata": {"annotations": annotations}, "spec": {"containers": []}}


def _jobset(*pods: dict[str, object]) -> dict[str, object]:
    jobs = [{"name": f"j{i}", "template": {"spec": {"template": pod}}} for i, pod in enumerate(pods)]
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "train"}, "spec": {"replicatedJobs": jobs}}


@pytest.mark.parametrize(("obj", "patch"), [
    pytest.param({"spec": {"template": {"spec": {"containers": []}}}},
                 {"spec": {"template": {"metadata": {"annotations": _BOOKED}}}},
                 id="a Job's one template is booked"),
    pytest.param(_jobset(_pod(team="a"), _pod()),
                 {"spec": {"replicatedJobs": [
                     {"name": "j0", "template": {"spec": {"template": _pod(team="a", **_BOOKED)}}},
                     {"name": "j1", "template": {"spec": {"template": _pod(**_BOOKED)}}}]}},
                 id="every replicated job of a JobSet is booked, its own annotations kept"),
    pytest.param(_jobset(_pod(**_BOOKED)), None, id="already booked: nothing to patch"),
])
def test_the_booking_goes_into_every_pod_template(
    obj: dict[str, object], patch: dict[str, object] | None
) -> None:
    assert template_annotations_patch(obj, _BOOKED) == patch
