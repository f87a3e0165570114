"""Small builders for the input-bound and simulation-limit tests: quota objects, Jobs and
scenarios as the dicts a client would send."""

from __future__ import annotations

from typing import Any

KUEUE = "kueue.x-k8s.io/v1beta1"
GPU = "nvidia.com/gpu"
JSON = {"content-type": "application/json"}
YAML = {"content-type": "application/yaml"}


def flavor(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": "h100"}, "spec": spec}


def queue(name: str = "cq", gpus: int = 8) -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": {
        "namespaceSelector": {}, "resourceGroups": [{"coveredResources": [GPU], "flavors": [
            {"name": "h100", "resources": [{"name": GPU, "nominalQuota": gpus}]}]}]}}  # fmt: skip


def local_queue() -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": {"name": "q", "namespace": "ns"},
            "spec": {"clusterQueue": "cq"}}  # fmt: skip


def node(**metadata: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", **metadata},
            "status": {"capacity": {GPU: "8"}}}  # fmt: skip


def job(name: str = "j", *, annotations: dict[str, str] | None = None, runtime: str | None = None,
        **pod: Any) -> dict[str, Any]:  # fmt: skip
    notes = dict(annotations or {})
    if runtime is not None:
        notes["berth.dev/runtime"] = runtime
    metadata = {"name": name, "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": "q"}}
    container = {"name": "main", "resources": {"requests": {GPU: "1"}}}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {**metadata, "annotations": notes} if notes else metadata,
            "spec": {"template": {"spec": {"containers": [container], **pod}}}}  # fmt: skip


def scenario(*steps: dict[str, Any], gpus: int = 8) -> dict[str, Any]:
    return {"name": "what-if", "objects": [flavor(), queue(gpus=gpus), local_queue()], "steps": list(steps)}
