"""The workload frameworks in the fake cluster: their CRDs (real group, version, plural,
status subresource), one object per kind with two pod sets of one 4-GPU pod each, and the
end of a run as each framework's controller reports it."""

from __future__ import annotations

from typing import Any, NamedTuple

from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.job import JOB
from admission.kube.kinds.jobset import JOBSET
from admission.kube.kinds.kubeflow import KUBEFLOW, MPIJOB
from admission.kube.kinds.pod import ADMISSION_GATE, POD
from admission.kube.kinds.ray import RAYCLUSTER, RAYJOB
from builders.fakeapi import FakeKubectl
from builders.kube import NS

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
Obj = dict[str, Any]


def crd(adapter: Adapter) -> Obj:
    """The framework's CRD as its project installs it, reduced to what the API server
    serves by: names, scope, one storage version with a status subresource."""
    ref = adapter.ref
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{ref.plural}.{ref.group}"},
        "spec": {
            "group": ref.group,
            "names": {"plural": ref.plural, "kind": ref.kind, "singular": ref.kind.lower()},
            "scope": "Namespaced",
            "versions": [{
                "name": ref.version, "served": True, "storage": True,
                "schema": {"openAPIV3Schema": schema},
                "subresources": {"status": {}},
            }],
        },
    }  # fmt: skip


FRAMEWORKS = (JOBSET, *KUBEFLOW, RAYJOB, RAYCLUSTER)


def install(kubectl: FakeKubectl) -> None:
    """Every framework's CRD, as if JobSet, the Kubeflow training operator and KubeRay
    were installed."""
    for adapter in FRAMEWORKS:
        kubectl.create(CRDS, crd(adapter))


def collection(adapter: Adapter) -> str:
    ref = adapter.ref
    return f"/apis/{ref.group}/{ref.version}/namespaces/{NS}/{ref.plural}"


def pod_template(gpus: int = 4) -> Obj:
    """One container asking for ``gpus`` GPUs, with a nodeSelector of its own to keep."""
    container = {"name": "main", "image": "trainer",
                 "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}  # fmt: skip
    return {"spec": {"containers": [container], "nodeSelector": {"zone": "a"}}}


def _job_spec() -> Obj:
    return {"parallelism": 1, "completions": 1, "template": pod_template()}


def _replica_specs(types: tuple[str, str]) -> Obj:
    return {t: {"replicas": 1, "template": pod_template()} for t in types}


def _ray_cluster() -> Obj:
    group = {"groupName": "workers", "replicas": 1, "minReplicas": 1, "template": pod_template()}
    return {"headGroupSpec": {"template": pod_template()}, "workerGroupSpecs": [group]}


_KUBEFLOW_FIELDS = {
    "PyTorchJob": ("pytorchReplicaSpecs", ("Master", "Worker")),
    "TFJob": ("tfReplicaSpecs", ("Chief", "Worker")),
    "XGBoostJob": ("xgbReplicaSpecs", ("Master", "Worker")),
    "PaddleJob": ("paddleReplicaSpecs", ("Master", "Worker")),
    "JAXJob": ("jaxReplicaSpecs", ("Worker", "Evaluator")),
    "MPIJob": ("mpiReplicaSpecs", ("Launcher", "Worker")),
}


def spec(adapter: Adapter, *, suspend: bool) -> Obj:
    """Two pod sets of one 4-GPU pod (a Job: one pod set of two pods), suspended or not."""
    if adapter is JOB:
        return {"suspend": suspend, "parallelism": 2, "completions": 2,
                "template": pod_template()}  # fmt: skip
    if adapter is JOBSET:
        jobs = [{"name": n, "replicas": 1, "template": {"spec": _job_spec()}} for n in ("a", "b")]
        return {"suspend": suspend, "replicatedJobs": jobs}
    if adapter is RAYJOB:
        return {"suspend": suspend, "entrypoint": "python train.py",
                "rayClusterSpec": _ray_cluster()}  # fmt: skip
    if adapter is RAYCLUSTER:
        return {"suspend": suspend, **_ray_cluster()}
    field, types = _KUBEFLOW_FIELDS[adapter.kind]
    run_policy = {"suspend": suspend}
    if adapter is MPIJOB:
        return {"runPolicy": run_policy, "slotsPerWorker": 1, field: _replica_specs(types)}
    return {"runPolicy": run_policy, field: _replica_specs(types)}


GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
GROUP_TOTAL = "kueue.x-k8s.io/pod-group-total-count"


def pod(
    name: str, group: str | None = None, total: int = 1, *, priority: str | None = None,
    gated: bool = True,
) -> Obj:
    """A plain Pod asking for 4 GPUs, gated as the webhook leaves it, in ``group`` of
    ``total`` pods (no group: a group of one)."""
    labels = {QUEUE_LABEL: "main", **({PRIORITY_LABEL: priority} if priority else {}),
              **({GROUP_LABEL: group} if group else {})}  # fmt: skip
    spec = pod_template()["spec"]
    if gated:
        spec["schedulingGates"] = [{"name": ADMISSION_GATE}]
    annotations = {GROUP_TOTAL: str(total)} if group else {}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": labels, "annotations": annotations},
            "spec": spec}  # fmt: skip


def workload(
    adapter: Adapter, name: str, *, priority: str | None = None, suspend: bool = True
) -> Obj:
    if adapter is POD:
        return pod(name, priority=priority, gated=suspend)
    labels = {QUEUE_LABEL: "main", **({PRIORITY_LABEL: priority} if priority else {})}
    return {
        "apiVersion": adapter.api_version,
        "kind": adapter.kind,
        "metadata": {"name": name, "labels": labels},
        "spec": spec(adapter, suspend=suspend),
    }


class Ending(NamedTuple):
    """How the framework's controller says a run is over: a status written, or (a
    RayCluster, which runs until deleted) the object deleted."""

    status: Obj | None


def _conditions(kind: str) -> Obj:
    return {"conditions": [{"type": kind, "status": "True", "reason": "Done"}]}


ENDINGS: dict[str, Ending] = {
    "Job": Ending(_conditions("Complete")),
    "JobSet": Ending(_conditions("Completed")),
    **{a.kind: Ending(_conditions("Succeeded")) for a in KUBEFLOW},
    "RayJob": Ending({"jobDeploymentStatus": "Complete", "jobStatus": "SUCCEEDED"}),
    "RayCluster": Ending(None),
}


def finish(kubectl: FakeKubectl, adapter: Adapter, name: str) -> None:
    """End ``name`` the way its framework's controller would."""
    ending = ENDINGS[adapter.kind]
    path = f"{collection(adapter)}/{name}"
    if ending.status is None:
        kubectl.delete(path)
    else:
        kubectl.patch(f"{path}/status", {"status": ending.status})


def templates_of(adapter: Adapter, obj: Obj) -> list[Obj]:
    """Every pod spec of the object, by the adapter's own paths."""
    found: list[Obj] = []
    for shape in adapter.pod_sets(obj):
        node: Any = obj
        for key in shape.path:
            node = node[key]
        found.append(node["spec"])
    return found


