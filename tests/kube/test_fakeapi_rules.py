"""The fake apiserver refuses what a real one refuses where Berth depends on it: objects in a
namespace that does not exist, pod-template scheduling changes on a started Job or a running
JobSet, changes to a Pod but for its gates and (while gated) its scheduling, and (as an
RBAC Role would) every request on a forbidden resource. Its Job controller stamps startTime."""

from __future__ import annotations

from typing import Any

import pytest
from builders import manifests
from builders.fakeapi import FakeKubectl
from builders.frameworks import crd, pod, pod_template

from admission.kube.kinds.jobset import JOBSET

JOBS = "/apis/batch/v1/namespaces/team-a/jobs"
SELECTOR = {"spec": {"template": {"spec": {"nodeSelector": {"gpu": "h100"}}}}}


def job(name: str, *, suspend: bool) -> dict[str, Any]:
    return manifests.job(name, namespace=None, queue=None, suspend=suspend)


def start_time(kubectl: FakeKubectl, name: str) -> Any:
    return (kubectl.get(f"{JOBS}/{name}").get("status") or {}).get("startTime")


def test_a_namespaced_object_needs_its_namespace(kubectl: FakeKubectl) -> None:
    refused = kubectl.request("POST", JOBS, json=job("a", suspend=True))
    assert refused.status_code == 404
    assert (refused.json()["reason"], refused.json()["message"]) == (
        "NotFound",
        'namespaces "team-a" not found',
    )
    kubectl.namespace("team-a")
    assert kubectl.create(JOBS, job("a", suspend=True))["metadata"]["namespace"] == "team-a"


def test_a_new_cluster_has_its_initial_namespaces(kubectl: FakeKubectl) -> None:
    names = {ns["metadata"]["name"] for ns in kubectl.get("/api/v1/namespaces")["items"]}
    assert names == {"default", "kube-node-lease", "kube-public", "kube-system"}


@pytest.fixture
def team(kubectl: FakeKubectl) -> FakeKubectl:
    kubectl.namespace("team-a")
    return kubectl


def test_the_job_controller_stamps_start_time_on_creation_and_resume(team: FakeKubectl) -> None:
    team.create(JOBS, job("running", suspend=False))
    team.create(JOBS, job("waiting", suspend=True))
    assert start_time(team, "running") is not None
    assert start_time(team, "waiting") is None
    team.patch(f"{JOBS}/waiting", {"spec": {"suspend": False}})
    assert start_time(team, "waiting") is not None


def test_scheduling_directives_change_only_on_a_suspended_job_never_started(
    team: FakeKubectl,
) -> None:
    team.create(JOBS, job("a", suspend=True))
    # Never started: steering and resuming in one patch is allowed (how admission works).
    team.patch(f"{JOBS}/a", {"spec": {"suspend": False, **SELECTOR["spec"]}})
    team.patch(f"{JOBS}/a", {"spec": {"suspend": True}})
    restore = {"spec": {"template": {"spec": {"nodeSelector": None}}}}
    refused = team.request(
        "PATCH", f"{JOBS}/a", json=restore, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert refused.status_code == 422
    assert "field is immutable" in refused.json()["message"]
    # Suspended, its startTime cleared through the status subresource: allowed again.
    team.patch(f"{JOBS}/a/status", {"status": {"startTime": None}})
    restored = team.patch(f"{JOBS}/a", restore)
    assert "nodeSelector" not in restored["spec"]["template"]["spec"]


def test_start_time_stays_while_the_job_runs(team: FakeKubectl) -> None:
    team.create(JOBS, job("a", suspend=False))
    refused = team.request(
        "PATCH",
        f"{JOBS}/a/status",
        json={"status": {"startTime": None}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert refused.status_code == 422
    assert start_time(team, "a") is not None


def test_the_rest_of_the_template_is_immutable_even_when_suspended(team: FakeKubectl) -> None:
    team.create(JOBS, job("a", suspend=True))
    image = {"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}}
    refused = team.request(
        "PATCH", f"{JOBS}/a", json=image, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert refused.status_code == 422


def test_a_forbidden_resource_refuses_every_verb_with_the_rbac_message(
    kubectl: FakeKubectl,
) -> None:
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    kubectl.forbid("coordination.k8s.io", "leases")
    created = kubectl.request("POST", leases, json={"metadata": {"name": "l"}})
    read = kubectl.request("GET", f"{leases}/l")
    assert (created.status_code, read.status_code) == (403, 403)
    assert read.json()["reason"] == "Forbidden"
    assert read.json()["message"] == (
        'leases.coordination.k8s.io "l" is forbidden: User '
        '"system:serviceaccount:berth-system:berth" cannot get resource "leases" in API group '
        '"coordination.k8s.io" in the namespace "default"'
    )


JOBSETS = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/team-a/jobsets"


def jobset_pod(**fields: Any) -> dict[str, Any]:
    job = {"template": {"spec": {"template": {"spec": fields}}}}
    return {"spec": {"replicatedJobs": [{"name": "a", "replicas": 1, **job}]}}


def test_the_jobset_webhook_lets_only_a_suspended_jobsets_scheduling_change(
    team: FakeKubectl,
) -> None:
    team.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd(JOBSET))
    replicated = [{"name": "a", "replicas": 1,
                   "template": {"spec": {"template": pod_template()}}}]  # fmt: skip
    team.create(JOBSETS, {"metadata": {"name": "js"},
                          "spec": {"suspend": True, "replicatedJobs": replicated}})  # fmt: skip
    containers = pod_template()["spec"]["containers"]
    steered = jobset_pod(containers=containers, nodeSelector={"gpu": "h100"})
    # Resumed and steered in one patch: allowed, the JobSet was suspended.
    team.patch(f"{JOBSETS}/js", {"spec": {"suspend": False, **steered["spec"]}})
    again = jobset_pod(containers=containers, nodeSelector={"gpu": "a100"})
    refused = team.request("PATCH", f"{JOBSETS}/js", json=again,
                           headers={"Content-Type": "application/merge-patch+json"})  # fmt: skip
    assert refused.status_code == 422 and "only while the JobSet is suspended" in refused.text
    team.patch(f"{JOBSETS}/js", {"spec": {"suspend": True}})
    other = jobset_pod(containers=[{**containers[0], "image": "other"}], nodeSelector={"gpu": "h100"})
    refused = team.request("PATCH", f"{JOBSETS}/js", json=other,
                           headers={"Content-Type": "application/merge-patch+json"})  # fmt: skip
    assert refused.status_code == 422 and "field is immutable" in refused.text


def test_a_gated_pod_may_lose_its_gate_and_gain_scheduling_and_nothing_else(
    team: FakeKubectl,
) -> None:
    pods = "/api/v1/namespaces/team-a/pods"
    team.create(pods, pod("p"))
    merge = {"Content-Type": "application/merge-patch+json"}

    def refused(patch: dict[str, Any]) -> str:
        answer = team.request("PATCH", f"{pods}/p", json=patch, headers=merge)
        assert answer.status_code == 422, answer.text
        return answer.text

    assert "only additions" in refused({"spec": {"nodeSelector": {"zone": "b"}}})
    assert "may not change" in refused({"spec": {"containers": []}})
    team.patch(f"{pods}/p", {"spec": {"nodeSelector": {"zone": "a", "gpu": "h100"},
                                      "schedulingGates": None}})  # fmt: skip
    assert "only deletion" in refused({"spec": {"schedulingGates": [{"name": "x"}]}})
    assert "not gated" in refused({"spec": {"nodeSelector": {"team": "x"}}})
