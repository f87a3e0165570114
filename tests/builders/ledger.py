"""Small builders for ledger tests: one of each object kind with sensible defaults."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from quota.core.model import (
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    LocalQueue,
    Namespace,
    Node,
    PriorityClass,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Topology,
)
from quota.core.quantity import parse_quantity
from quota.core.workload import PodSet, Workload

T0 = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)


def quotas(flavor: str, **nominal: str) -> FlavorQuotas:
    """``quotas("h100", cpu="8", memory="3Ti")``; underscores in names become dots/slashes."""
    return FlavorQuotas(
        flavor,
        tuple(ResourceQuota(_resource(r), parse_quantity(q)) for r, q in nominal.items()),
    )


def _resource(name: str) -> str:
    return "nvidia.com/gpu" if name == "gpu" else name


def group(*flavors: FlavorQuotas) -> ResourceGroup:
    covered: list[str] = []
    for flavor in flavors:
        covered.extend(q.resource for q in flavor.resources if q.resource not in covered)
    return ResourceGroup(tuple(covered), flavors)


def cluster_queue(name: str = "team-a", *groups: ResourceGroup, **fields: Any) -> ClusterQueue:
    groups = groups or (group(quotas("default", cpu="8")),)
    return ClusterQueue(name, resource_groups=groups, **fields)


def workload(name: str = "train", namespace: str = "team-a", **fields: Any) -> Workload:
    fields.setdefault("pod_sets", (PodSet("main", 2, {"cpu": 500, "nvidia.com/gpu": 1000}),))
    fields.setdefault("created_at", T0)
    return Workload(namespace, name, queue_name="main", **fields)


def one_of_each() -> list[Any]:
    """One object of every stored kind."""
    return [
        ResourceFlavor("h100", node_labels={"gpu": "h100"}),
        cluster_queue(),
        Cohort("lab", resource_groups=(group(quotas("h100", gpu="4")),)),
        LocalQueue("team-a", "main", "team-a"),
        PriorityClass("high", 1000, "urgent work"),
        Namespace("team-a", {"team": "a"}),
        Topology("dc", ("block", "rack", "kubernetes.io/hostname")),
        Node("node-1", capacity={"cpu": 64_000}, allocatable={"cpu": 63_000}),
    ]
