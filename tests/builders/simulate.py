"""Small builders for scenario documents used by the simulator tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from builders import manifests
from builders.manifests import GPU

KUEUE = "kueue.x-k8s.io/v1beta1"


def flavor(name: str = "default") -> dict[str, Any]:
    return {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name}}


def cluster_queue(
    name: str,
    gpus: int,
    *,
    cohort: str | None = None,
    flavor_name: str = "default",
    borrowing_limit: int | None = None,
    lending_limit: int | None = None,
    preemption: dict[str, str] | None = None,
    strategy: str | None = None,
) -> dict[str, Any]:
    quota: dict[str, Any] = {"name": GPU, "nominalQuota": gpus}
    if borrowing_limit is not None:
        quota["borrowingLimit"] = borrowing_limit
    if lending_limit is not None:
        quota["lendingLimit"] = lending_limit
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [
            {"coveredResources": [GPU], "flavors": [{"name": flavor_name, "resources": [quota]}]}
        ],
    }
    if cohort is not None:
        spec["cohort"] = cohort
    if preemption is not None:
        spec["preemption"] = preemption
    if strategy is not None:
        spec["queueingStrategy"] = strategy
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def local_queue(namespace: str, cq: str, name: str = "q") -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cq},
    }


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def job(key: str, gpus: int, *, count: int = 1, queue: str = "q", **options: Any) -> dict[str, Any]:
    """A batch/v1 Job ``namespace/name`` of ``count`` pods with ``gpus`` GPUs each
    (``options``: those of ``builders.manifests.job``, e.g. ``runtime``, ``priority``)."""
    namespace, name = key.split("/")
    return manifests.job(name, gpus, namespace=namespace, queue=queue, pods=count, **options)


def one_queue(gpus: int = 8, namespace: str = "team") -> list[dict[str, Any]]:
    """A flavor, a ClusterQueue named after ``namespace`` and its LocalQueue ``q``."""
    return [flavor(), cluster_queue(namespace, gpus), local_queue(namespace, namespace)]


def write_scenario(tmp_path: Path, objects: list[Any], steps: list[Any], name: str = "test") -> str:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "objects": objects, "steps": steps}))
    return str(path)
