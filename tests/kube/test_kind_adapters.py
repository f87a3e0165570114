"""The kinds table, pure: each kind's webhook patch, its end as its controller reports it,
pod sets steered one by one, and objects owned by another queued kind left alone."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from builders import frameworks
from builders.templates import H100, apply

from admission.kube import templates
from admission.kube.kinds.adapter import COMPLETE, FAILED, Adapter
from admission.kube.kinds.job import JOB
from admission.kube.kinds.jobset import JOBSET
from admission.kube.kinds.kubeflow import PYTORCHJOB
from admission.kube.kinds.pod import ADMISSION_GATE, POD, admit_pod_patch
from admission.kube.kinds.ray import RAYCLUSTER, RAYJOB
from admission.kube.kinds.registry import SUSPENDED, managed_owner
from admission.kube.webhook import review_job
from quota.core.model import ResourceFlavor
from quota.core.workload import Admission, PodSetAssignment, PodSetPlacement

A100 = ResourceFlavor("a100", node_labels={"gpu": "a100"})
GATE = {"name": ADMISSION_GATE}


def review(obj: dict[str, Any]) -> dict[str, Any]:
    group, _, version = obj["apiVersion"].rpartition("/")
    kind = {"group": group, "version": version, "kind": obj["kind"]}
    request = {"uid": "u", "operation": "CREATE", "kind": kind, "object": obj}
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def patched(obj: dict[str, Any]) -> list[dict[str, Any]]:
    response = review_job(review(obj))["response"]
    return json.loads(base64.b64decode(response["patch"])) if "patch" in response else []


@pytest.mark.parametrize("adapter", [pytest.param(a, id=a.kind) for a in SUSPENDED])
def test_the_webhook_suspends_every_kind_at_its_own_field(adapter: Adapter) -> None:
    obj = frameworks.workload(adapter, "w", suspend=False)
    path = "/" + "/".join(adapter.suspend_path)
    assert patched(obj) == [{"op": "add", "path": path, "value": True}]
    assert patched(frameworks.workload(adapter, "w", suspend=True)) == []


def test_the_webhook_adds_a_missing_run_policy() -> None:
    obj = frameworks.workload(PYTORCHJOB, "w")
    del obj["spec"]["runPolicy"]
    assert patched(obj) == [{"op": "add", "path": "/spec/runPolicy", "value": {"suspend": True}}]


def test_the_webhook_lets_a_kind_it_does_not_queue_through_with_a_warning() -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"labels": {frameworks.QUEUE_LABEL: "main"}}, "spec": {}}  # fmt: skip
    response = review_job(review(deployment))["response"]
    assert response["allowed"] and "patch" not in response
    assert response["warnings"] == [
        "Berth does not queue apps/v1 Deployment; it was created without waiting for quota"
    ]


def status(adapter: Adapter, **fields: Any) -> dict[str, Any]:
    return {**frameworks.workload(adapter, "w"), "status": fields}


def done(kind: str) -> list[dict[str, str]]:
    return [{"type": kind, "status": "True"}]


@pytest.mark.parametrize(("obj", "end"), [
    pytest.param(status(JOBSET, conditions=done("Completed")), COMPLETE, id="JobSet completed"),
    pytest.param(status(JOBSET, conditions=done("Failed")), FAILED, id="JobSet failed"),
    pytest.param(status(JOBSET, conditions=[{"type": "Completed", "status": "False"}]), None,
                 id="JobSet condition not true"),
    pytest.param(status(PYTORCHJOB, conditions=done("Succeeded")), COMPLETE,
                 id="PyTorchJob succeeded"),
    pytest.param(status(PYTORCHJOB, conditions=done("Running")), None, id="PyTorchJob running"),
    pytest.param(status(RAYJOB, jobDeploymentStatus="Complete", jobStatus="SUCCEEDED"), COMPLETE,
                 id="RayJob complete and succeeded"),
    pytest.param(status(RAYJOB, jobDeploymentStatus="Complete", jobStatus="FAILED"), FAILED,
                 id="RayJob complete but its job failed"),
    pytest.param(status(RAYJOB, jobDeploymentStatus="Failed"), FAILED, id="RayJob failed"),
    pytest.param(status(RAYJOB, jobDeploymentStatus="Running", jobStatus="RUNNING"), None,
                 id="RayJob running"),
    pytest.param(status(RAYCLUSTER, state="ready"), None, id="RayCluster runs until deleted"),
])
def test_the_end_as_each_controller_reports_it(obj: dict[str, Any], end: str | None) -> None:
    assert templates.finished(obj) == end


def test_each_pod_set_is_steered_to_its_own_flavor_and_domain_then_given_back() -> None:
    original = frameworks.workload(RAYJOB, "w")
    admission = Admission(
        "team",
        (PodSetAssignment("head", 1, {"nvidia.com/gpu": "a100"}, {}),
         PodSetAssignment("workers", 1, {"nvidia.com/gpu": "h100"}, {})),
        (PodSetPlacement("workers", {}, "rack", "r1"),),
    )  # fmt: skip
    steering = templates.pod_set_steering(admission, {"h100": H100, "a100": A100})
    patch = templates.admit_patch(original, [], per_pod_set=steering)
    admitted = apply(original, patch)
    head, workers = frameworks.templates_of(RAYJOB, admitted)
    assert head["nodeSelector"] == {"zone": "a", "gpu": "a100"} and "affinity" not in head
    assert workers["nodeSelector"] == {"zone": "a", "gpu": "h100"}
    assert workers["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert not RAYJOB.is_suspended(admitted)
    assert templates.admit_patch(admitted, [], per_pod_set=steering) is None  # idempotent
    evicted = admitted
    for step in templates.EVICT_STEPS:
        evicted = apply(evicted, step.patch(evicted))
    assert evicted["spec"] == original["spec"]
    document = templates.workload_document(admitted)
    assert document["spec"]["rayClusterSpec"] == original["spec"]["rayClusterSpec"]


@pytest.mark.parametrize(
    ("owner", "skipped"),
    [
        pytest.param({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet"}, True,
                     id="a JobSet's Job is admitted with its JobSet"),
        pytest.param({"apiVersion": "ray.io/v1", "kind": "RayJob"}, True,
                     id="a RayJob's RayCluster is admitted with its RayJob"),
        pytest.param({"apiVersion": "apps/v1", "kind": "ReplicaSet"}, False,
                     id="an owner Berth does not queue changes nothing"),
    ],
)
def test_objects_owned_by_a_queued_kind_are_left_to_their_owner(
    owner: dict[str, str], skipped: bool
) -> None:
    obj = {"metadata": {"ownerReferences": [{**owner, "name": "parent", "uid": "p"}]}}
    assert (managed_owner(obj) is not None) is skipped


@pytest.mark.parametrize(
    ("spec", "operations"),
    [
        pytest.param({"containers": []},
                     [{"op": "add", "path": "/spec/schedulingGates", "value": [GATE]}],
                     id="a queued Pod gets Berth's gate"),
        pytest.param({"schedulingGates": [{"name": "other"}]},
                     [{"op": "add", "path": "/spec/schedulingGates/-", "value": GATE}],
                     id="beside the gates it has"),
        pytest.param({"schedulingGates": [GATE]}, [], id="a Pod gated already passes"),
    ],
)  # fmt: skip
def test_the_webhook_gates_a_queued_pod(spec: dict[str, Any], operations: list[Any]) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"labels": {frameworks.QUEUE_LABEL: "main"}}, "spec": spec}  # fmt: skip
    assert patched(pod) == operations


def test_admission_ungates_a_pod_and_only_adds_to_its_scheduling() -> None:
    pod = frameworks.pod("p")
    admitted = apply(pod, admit_pod_patch(pod, [H100]))
    assert not POD.is_suspended(admitted) and "schedulingGates" not in admitted["spec"]
    assert admitted["spec"]["nodeSelector"] == {"zone": "a", "gpu": "h100"}
    assert admit_pod_patch(admitted, [H100]) is None


@pytest.mark.parametrize(
    ("phases", "total", "end"),
    [
        pytest.param(["Succeeded", "Succeeded"], 2, COMPLETE, id="every pod succeeded"),
        pytest.param(["Succeeded", "Failed"], 2, FAILED, id="one pod failed"),
        pytest.param(["Succeeded", "Running"], 2, None, id="a pod still runs"),
        pytest.param(["Succeeded"], 2, None, id="a pod of the group is missing"),
    ],
)
def test_a_pod_group_ends_when_all_its_pods_have(
    phases: list[str], total: int, end: str | None
) -> None:
    group = {"apiVersion": "v1", "kind": "Pod", "status": {"phases": phases, "total": total}}
    assert templates.finished(group) == end


@pytest.mark.parametrize(
    ("adapter", "pod_set", "count_of"),
    [
        pytest.param(RAYCLUSTER, "workers",
                     lambda o: o["spec"]["workerGroupSpecs"][0]["replicas"],
                     id="a Ray worker group runs minReplicas or more"),
        pytest.param(JOB, "main", lambda o: o["spec"]["parallelism"],
                     id="a Job with a minimum parallelism runs fewer pods"),
    ],
)  # fmt: skip
def test_a_partial_admission_runs_the_admitted_count_and_eviction_gives_the_count_back(
    adapter: Adapter, pod_set: str, count_of: Any
) -> None:
    original = frameworks.workload(adapter, "w")
    if adapter is JOB:
        original["spec"].update(parallelism=4, completions=4)
        original["metadata"]["annotations"] = {"kueue.x-k8s.io/job-min-parallelism": "2"}
    else:
        original["spec"]["workerGroupSpecs"][0].update(replicas=4, minReplicas=2)
    assigned = PodSetAssignment(pod_set, 3, {"nvidia.com/gpu": "h100"}, {})
    steering = templates.pod_set_steering(Admission("team", (assigned,)), {"h100": H100})
    admitted = apply(original, templates.admit_patch(original, [], per_pod_set=steering))
    assert count_of(admitted) == 3
    assert count_of(templates.workload_document(admitted)) == 4  # the workload asks for all
    evicted = admitted
    for step in templates.EVICT_STEPS:
        evicted = apply(evicted, step.patch(evicted))
    assert count_of(evicted) == 4 and evicted["spec"] == original["spec"]


def test_the_webhook_leaves_a_pod_of_a_queued_job_ungated() -> None:
    pod = frameworks.pod("train-abc", gated=False)
    owner = {"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "j"}
    pod["metadata"]["ownerReferences"] = [owner]
    assert patched(pod) == []
