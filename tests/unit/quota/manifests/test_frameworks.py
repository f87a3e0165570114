"""Framework objects (JobSet, Kubeflow, Ray) become workloads: one pod set per
replicatedJob, replica type or worker group, counted as Kueue counts them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders.paths import EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from quota.core.errors import InvalidInput
from quota.manifests.frameworks import READERS, shapes_of
from quota.manifests.jobs import parse_workload

NOW = datetime(2025, 1, 1, tzinfo=UTC)
LABELS = {"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/priority-class": "high"}


def template(gpus: int = 1) -> dict[str, Any]:
    limits = {"nvidia.com/gpu": str(gpus)}
    return {"spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]}}


def obj(api_version: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    meta = {"name": "train", "namespace": "ml", "labels": LABELS}
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, "spec": spec}


def replicated(name: str, replicas: int, parallelism: int, completions: int) -> dict[str, Any]:
    job = {"parallelism": parallelism, "completions": completions, "template": template()}
    return {"name": name, "replicas": replicas, "template": {"spec": job}}


JOBSET = obj("jobset.x-k8s.io/v1alpha2", "JobSet", {"replicatedJobs": [
    replicated("driver", 1, 1, 1), replicated("workers", 3, 4, 2)]})
PYTORCH = obj("kubeflow.org/v1", "PyTorchJob", {"pytorchReplicaSpecs": {
    "Worker": {"replicas": 3, "template": template(8)}, "Master": {"template": template(8)}}})
MPI = obj("kubeflow.org/v2beta1", "MPIJob", {"mpiReplicaSpecs": {
    "Worker": {"replicas": 2, "template": template(8)},
    "Launcher": {"replicas": 1, "template": template(0)}}})
TF = obj("kubeflow.org/v1", "TFJob", {"tfReplicaSpecs": {
    "Worker": {"replicas": 2, "template": template()}, "PS": {"replicas": 1, "template": template()},
    "Chief": {"replicas": 1, "template": template()}}})
_RAY = {"headGroupSpec": {"template": template(0)}, "workerGroupSpecs": [
    {"groupName": "gpu", "replicas": 4, "minReplicas": 2, "template": template(8)},
    {"groupName": "cpu", "replicas": 2, "template": template(0)}]}
RAYJOB = obj("ray.io/v1", "RayJob", {"entrypoint": "python x.py", "rayClusterSpec": _RAY})
RAYCLUSTER = obj("ray.io/v1", "RayCluster", _RAY)


@pytest.mark.parametrize(("doc", "pod_sets"), [
    pytest.param(JOBSET, [("driver", 1, None), ("workers", 6, None)],
                 id="JobSet: replicas times the pods a Job runs at once"),
    pytest.param(PYTORCH, [("master", 1, None), ("worker", 3, None)],
                 id="PyTorchJob: Master before Worker, one pod without replicas"),
    pytest.param(MPI, [("launcher", 1, None), ("worker", 2, None)],
                 id="MPIJob: Launcher before Worker"),
    pytest.param(TF, [("chief", 1, None), ("ps", 1, None), ("worker", 2, None)],
                 id="TFJob: Chief, PS, Worker"),
    pytest.param(RAYJOB, [("head", 1, None), ("gpu", 4, 2), ("cpu", 2, None)],
                 id="RayJob: head, then worker groups with minReplicas as minimum"),
    pytest.param(RAYCLUSTER, [("head", 1, None), ("gpu", 4, 2), ("cpu", 2, None)],
                 id="RayCluster: the same pod sets as a RayJob's cluster"),
])
def test_pod_sets_of_a_framework_object(
    doc: dict[str, Any], pod_sets: list[tuple[str, int, int | None]]
) -> None:
    workload = parse_workload(doc, source="t", document=0, created_at=NOW)
    assert [(p.name, p.count, p.min_count) for p in workload.pod_sets] == pod_sets
    assert workload.kind == doc["kind"] and workload.queue_name == "lq"
    assert workload.priority_class == "high"
    # The adapters steer the very templates the pod sets were read from.
    assert [s.name for s in shapes_of(doc)] == [name for name, _, _ in pod_sets]


@pytest.mark.parametrize(("doc", "field", "message"), [
    pytest.param(obj("jobset.x-k8s.io/v1alpha2", "JobSet", {"replicatedJobs": []}),
                 "spec.replicatedJobs", "must not be empty", id="JobSet without replicatedJobs"),
    pytest.param(obj("jobset.x-k8s.io/v1alpha2", "JobSet", {"replicatedJobs": [
                     replicated("a", 1, 1, 1), replicated("a", 1, 1, 1)]}),
                 "spec.replicatedJobs[1]", "pod set a is listed twice",
                 id="JobSet with two replicatedJobs of one name"),
    pytest.param(obj("kubeflow.org/v1", "PyTorchJob", {"pytorchReplicaSpecs": {
                     "Worker": {"replicas": 1}}}),
                 "spec.pytorchReplicaSpecs.Worker.template", "required field missing",
                 id="replica type without a template"),
    pytest.param(obj("kubeflow.org/v1", "PyTorchJob", {"tfReplicaSpecs": {}}),
                 "spec.pytorchReplicaSpecs", "required field missing",
                 id="PyTorchJob with another framework's replica specs"),
    pytest.param(obj("ray.io/v1", "RayCluster", {**_RAY, "workerGroupSpecs": [
                     {"groupName": "gpu", "replicas": 1, "minReplicas": 3,
                      "template": template()}]}),
                 "spec.workerGroupSpecs[0].minReplicas", "must not exceed replicas (1), got 3",
                 id="worker group whose minimum exceeds its replicas"),
    pytest.param(obj("ray.io/v1", "RayJob", {"entrypoint": "x"}),
                 "spec.rayClusterSpec", "required field missing",
                 id="RayJob without a cluster spec"),
])
def test_a_broken_framework_object_names_its_field(
    doc: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_workload(doc, source="t", document=0, created_at=NOW)
    found = [(p.field, p.message) for p in caught.value.problems]
    assert (field, message) in found, found


WORKLOAD_EXAMPLES = sorted((EXAMPLES / "workloads").glob("*.yaml"))


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in WORKLOAD_EXAMPLES])
def test_every_workload_example_is_a_workload(path: Path) -> None:
    doc = next(yaml.safe_load_all(path.read_text()))
    workload = parse_workload(doc, source=path.name, document=0, created_at=NOW)
    assert workload.kind == doc["kind"] and workload.queue_name == "main"
    assert [p.name for p in workload.pod_sets] == [s.name for s in shapes_of(doc)]


# The field names the readers look for, so that random specs reach deep into them.
_FIELDS = ("replicatedJobs", "name", "replicas", "template", "spec", "parallelism",
           "completions", "containers", "pytorchReplicaSpecs", "mpiReplicaSpecs", "Worker",
           "headGroupSpec", "workerGroupSpecs", "groupName", "minReplicas", "rayClusterSpec",
           "resources", "limits", "tfReplicaSpecs", "jaxReplicaSpecs")
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "a", "Worker", "1"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(list(_FIELDS)), inner, max_size=4),
    max_leaves=12,
)


@given(kind=st.sampled_from(sorted(READERS)), spec=_JSON)
@settings(max_examples=300, deadline=None)
def test_any_spec_is_a_workload_or_a_list_of_problems(kind: tuple[str, str], spec: Any) -> None:
    doc = {**obj(*kind, {}), "spec": spec}
    try:
        parse_workload(doc, source="t", document=0, created_at=NOW)
    except InvalidInput as exc:
        assert exc.problems
    shapes_of(doc)  # never raises either: the adapters read the same objects
