"""The pure pieces: Job patches, the workload document, the webhook, error translation."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from builders.templates import H100, apply, evict, job

from admission.kube import templates
from admission.kube.errors import Forbidden, Gone, KubernetesUnavailable, from_status
from admission.kube.webhook import review_job
from quota.core.errors import Conflict, InvalidInput, NotFound
from quota.core.workload import Admission, PodSetPlacement


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param({}, id="template without scheduling fields"),
        pytest.param({"nodeSelector": {"zone": "a"}}, id="template with its own nodeSelector"),
        pytest.param(
            {"nodeSelector": {"gpu": "a100"}, "tolerations": [{"key": "x", "operator": "Exists"}]},
            id="template whose selector the flavor overrides",
        ),
    ],
)
def test_admit_then_evict_gives_the_template_back(pod: dict[str, Any]) -> None:
    original = job(**pod)
    admitted = apply(original, templates.admit_patch(original, [H100]))
    steered = admitted["spec"]["template"]["spec"]
    assert steered["nodeSelector"]["gpu"] == "h100" and not admitted["spec"]["suspend"]
    assert {"key": "gpu", "operator": "Exists"} in steered["tolerations"]
    assert templates.admit_patch(admitted, [H100]) is None  # idempotent
    evicted = evict(admitted)
    assert evicted["spec"]["suspend"] is True
    assert evicted["spec"]["template"] == original["spec"]["template"]
    assert templates.ORIGINAL_TEMPLATE not in templates.annotations_of(evicted)
    assert [step.patch(evicted) for step in templates.EVICT_STEPS] == [None] * 3  # idempotent


def test_eviction_of_a_started_job_suspends_forgets_its_start_then_restores() -> None:
    original = job(nodeSelector={"zone": "a"})
    running = apply(original, templates.admit_patch(original, [H100]))
    running["status"] = {"startTime": "2026-12-01T10:00:00Z"}
    states = [running]
    for step in templates.EVICT_STEPS:
        states.append(apply(states[-1], step.patch(states[-1])))
    suspended, forgotten, restored = states[1:]
    # The template may change only once the Job is suspended and its startTime is gone.
    assert templates.is_suspended(suspended) and templates.started_at(suspended)
    assert suspended["spec"]["template"] == running["spec"]["template"]
    assert templates.started_at(forgotten) is None
    assert restored["spec"]["template"] == original["spec"]["template"]
    # A crash after any step: eviction replayed from there ends in the same Job.
    assert all(evict(state) == restored for state in states)


RACK = ("topology.rack", "r2")
IN_RACK = {"key": "topology.rack", "operator": "In", "values": ["r2"]}
ZONE_TERM = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}
SPREAD = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}}


@pytest.mark.parametrize(
    ("pod", "terms"),
    [
        pytest.param({}, [{"matchExpressions": [IN_RACK]}], id="template without affinity"),
        pytest.param(
            {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [ZONE_TERM, {"matchExpressions": []}]}}}},
            [{"matchExpressions": [*ZONE_TERM["matchExpressions"], IN_RACK]},
             {"matchExpressions": [IN_RACK]}],
            id="every alternative term is confined to the domain",
        ),
        pytest.param({"affinity": SPREAD}, [{"matchExpressions": [IN_RACK]}],
                     id="template with other affinity kept beside it"),
    ],
)
def test_admission_into_a_domain_adds_node_affinity_and_eviction_removes_it(
    pod: dict[str, Any], terms: list[dict[str, Any]]
) -> None:
    original = job(**pod)
    admitted = apply(original, templates.admit_patch(original, [H100], RACK))
    affinity = admitted["spec"]["template"]["spec"]["affinity"]
    required = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required["nodeSelectorTerms"] == terms
    if "podAntiAffinity" in pod.get("affinity", {}):
        assert affinity["podAntiAffinity"] == SPREAD["podAntiAffinity"]
    assert templates.admit_patch(admitted, [H100], RACK) is None  # idempotent
    evicted = evict(admitted)
    assert evicted["spec"]["template"] == original["spec"]["template"]
    doc = templates.workload_document({**admitted, "apiVersion": "batch/v1", "kind": "Job"})
    assert doc["spec"]["template"]["spec"] == original["spec"]["template"]["spec"]


def test_admission_without_a_domain_leaves_the_affinity_alone() -> None:
    original = job(affinity=SPREAD)
    admitted = apply(original, templates.admit_patch(original, [H100]))
    assert admitted["spec"]["template"]["spec"]["affinity"] == SPREAD
    evicted = evict(admitted)
    assert evicted["spec"]["template"] == original["spec"]["template"]


def test_the_domain_comes_from_the_admissions_placement() -> None:
    placement = (PodSetPlacement("main", {"b1": 2}, "topology.rack", "r2"),)
    admission = Admission("team", (), placement)
    assert templates.admitted_domain(admission) == RACK
    assert templates.admitted_domain(Admission("team", (), (PodSetPlacement("main", {}),))) is None
    assert templates.admitted_domain(None) is None


def test_reason_patch_only_when_the_reason_changes() -> None:
    shown = apply(job(), templates.reason_patch(job(), "WaitingForQuota", "8 > 4"))
    assert templates.annotations_of(shown)[templates.WAIT_REASON] == "WaitingForQuota"
    assert templates.reason_patch(shown, "WaitingForQuota", "8 > 4") is None
    assert templates.reason_patch(shown, "WaitingForQuota", "8 > 2") is not None


def test_the_workload_asks_for_the_users_template_not_the_flavors() -> None:
    original = job(nodeSelector={"zone": "a"})
    admitted = apply(original, templates.admit_patch(original, [H100]))
    doc = templates.workload_document({**admitted, "apiVersion": "batch/v1", "kind": "Job"})
    assert doc["spec"]["template"]["spec"] == {"containers": [], "nodeSelector": {"zone": "a"}}
    assert doc["metadata"]["annotations"] == {templates.JOB_UID: "u1"}


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        pytest.param([], None, id="running"),
        pytest.param([{"type": "Complete", "status": "True"}], "Complete", id="complete"),
        pytest.param([{"type": "Failed", "status": "True"}], "Failed", id="failed"),
        pytest.param([{"type": "Failed", "status": "False"}], None, id="condition not true"),
    ],
)
def test_finished(conditions: list[dict[str, str]], expected: str | None) -> None:
    assert templates.finished({"status": {"conditions": conditions}}) == expected


def review(operation: str = "CREATE", **job_fields: Any) -> dict[str, Any]:
    obj = {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "q"}}, "spec": {}, **job_fields}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "abc", "operation": operation, "object": obj},
    }


@pytest.mark.parametrize(
    ("request_review", "patched"),
    [
        pytest.param(review(), True, id="queued Job without suspend is suspended"),
        pytest.param(review(spec={"suspend": False}), True, id="suspend false is overridden"),
        pytest.param(review(spec={"suspend": True}), False, id="already suspended passes"),
        pytest.param(review(metadata={}), False, id="Job without queue label passes"),
        pytest.param(review("UPDATE"), False, id="updates pass"),
    ],
)
def test_webhook(request_review: dict[str, Any], patched: bool) -> None:
    response = review_job(request_review)["response"]
    assert response["uid"] == "abc" and response["allowed"] is True
    if patched:
        operations = json.loads(base64.b64decode(response["patch"]))
        assert operations == [{"op": "add", "path": "/spec/suspend", "value": True}]
        assert response["patchType"] == "JSONPatch"
    else:
        assert "patch" not in response


def test_webhook_refuses_what_is_not_a_review() -> None:
    with pytest.raises(InvalidInput):
        review_job({"kind": "AdmissionReview"})


@pytest.mark.parametrize(
    ("status", "error"),
    [
        pytest.param(404, NotFound, id="404 is NotFound"),
        pytest.param(409, Conflict, id="409 is Conflict"),
        pytest.param(410, Gone, id="410 is Gone"),
        pytest.param(422, InvalidInput, id="422 is InvalidInput"),
        pytest.param(403, Forbidden, id="403 is Forbidden"),
        pytest.param(503, KubernetesUnavailable, id="503 is unavailable"),
    ],
)
def test_api_errors_become_berth_errors(status: int, error: type[Exception]) -> None:
    body = json.dumps({"kind": "Status", "message": "the reason", "code": status})
    translated = from_status(status, body, "Job ns/j")
    assert isinstance(translated, error)
    assert "the reason" in str(translated)
