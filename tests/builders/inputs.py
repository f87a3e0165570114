"""Small builders for the input-bound and simulation-limit tests: quota objects, Jobs and
scenarios as the dicts a client would send."""

from __future__ import annotations

from typing import Any

from builders import manifests
from builders.manifests import GPU

KUEUE = "kueue.x-k8s.io/v1beta1"
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


def job(name: str = "j", **options: Any) -> dict[str, Any]:
    """A one-GPU Job in ``ns`` queued to ``q`` (``options``: those of
    ``builders.manifests.job``, pod spec fields included)."""
    return manifests.job(name, 1, namespace="ns", queue="q", **options)


def scenario(*steps: dict[str, Any], gpus: int = 8) -> dict[str, Any]:
    return {"name": "what-if", "objects": [flavor(), queue(gpus=gpus), local_queue()], "steps": list(steps)}
