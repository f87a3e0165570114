"""The demo's GPU pool: the shape of examples/gpu-pool.yaml grown to four teams, with Nodes.

H100, A100 and MIG-slice flavors; three teams share the ``ml-platform`` cohort (one lends
with a limit, one reclaims), a fourth queue stands alone under StrictFIFO; two priority
classes; Nodes whose capacity matches the quota, one of them degraded (2 bad GPUs).
``inference`` lends H100s but never borrows: its production jobs are not reclaimed, which
would otherwise happen whenever ``llm`` dipped below its quota and came back (one inference
job was evicted six times in fifteen minutes).
"""

from __future__ import annotations

from typing import Any

GPU = "nvidia.com/gpu"
MIG = "nvidia.com/mig-1g.10gb"
KUEUE = "kueue.x-k8s.io/v1beta1"

FLAVOR_LABELS = {
    "h100-80gb": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
    "a100-40gb": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
    "mig-1g-10gb": {"nvidia.com/mig.config": "all-1g.10gb"},
}

# (ClusterQueue, namespace, LocalQueue)
QUEUES = (
    ("llm-training", "llm", "main"),
    ("inference", "inference", "serve"),
    ("vision", "vision", "main"),
    ("interns", "interns", "main"),
)


def _gpu_group(*flavors: tuple[str, int, dict[str, int]]) -> dict[str, Any]:
    return {
        "coveredResources": [GPU],
        "flavors": [
            {"name": name, "resources": [{"name": GPU, "nominalQuota": nominal, **limits}]}
            for name, nominal, limits in flavors
        ],
    }


def _queue(name: str, groups: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {"namespaceSelector": {}, **spec, "resourceGroups": groups},
    }


def _node(name: str, flavor: str, resource: str, count: int, *, bad: int = 0) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": dict(FLAVOR_LABELS[flavor])}
    if bad:
        metadata["annotations"] = {"berth.dev/health": "Degraded"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": metadata,
        "status": {
            "capacity": {resource: str(count), "cpu": "96", "memory": "1Ti"},
            "allocatable": {resource: str(count - bad), "cpu": "96", "memory": "1Ti"},
        },
    }


def pool_manifests(*, nodes: bool = True) -> list[dict[str, Any]]:
    """Every object of the demo pool, as Kueue-shaped manifests (``nodes``: with Nodes)."""
    docs: list[dict[str, Any]] = [
        {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name},
         "spec": {"nodeLabels": labels}}
        for name, labels in FLAVOR_LABELS.items()
    ]
    docs += [
        {"apiVersion": KUEUE, "kind": "WorkloadPriorityClass", "metadata": {"name": name},
         "value": value}
        for name, value in (("production", 10000), ("research", 100))
    ]
    docs += [
        _queue(
            "llm-training",
            [_gpu_group(("h100-80gb", 24, {"borrowingLimit": 16}), ("a100-40gb", 8, {}))],
            cohort="ml-platform",
            preemption={"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
        ),
        _queue(
            "inference",
            [
                _gpu_group(("h100-80gb", 16, {"lendingLimit": 8, "borrowingLimit": 0})),
                {"coveredResources": [MIG],
                 "flavors": [{"name": "mig-1g-10gb",
                              "resources": [{"name": MIG, "nominalQuota": 28}]}]},
            ],
            cohort="ml-platform",
            preemption={"reclaimWithinCohort": "Any"},
        ),
        _queue(
            "vision",
            [_gpu_group(("a100-40gb", 16, {}))],
            cohort="ml-platform",
            queueingStrategy="StrictFIFO",
        ),
        _queue("interns", [_gpu_group(("a100-40gb", 8, {}))], queueingStrategy="StrictFIFO"),
    ]
    docs += [
        {"apiVersion": KUEUE, "kind": "LocalQueue",
         "metadata": {"name": local, "namespace": namespace}, "spec": {"clusterQueue": cq}}
        for cq, namespace, local in QUEUES
    ]
    if not nodes:
        return docs
    docs += [_node(f"h100-{i}", "h100-80gb", GPU, 8, bad=2 if i == 3 else 0) for i in range(1, 6)]
    docs += [_node(f"a100-{i}", "a100-40gb", GPU, 8) for i in range(1, 5)]
    docs.append(_node("mig-1", "mig-1g-10gb", MIG, 28))
    return docs
