"""Builders for node-capacity tests: nodes in whole units, snapshots with an inventory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from admission.engine.types import Snapshot
from builders.engine import GPU, M
from quota.core.model import Node, NodeCondition, NodeHealth, ResourceFlavor, Topology
from quota.core.workload import REQUIRED_TOPOLOGY, PodSet, Workload

MIG = "nvidia.com/mig-1g.10gb"


def node(name: str, allocatable: Mapping[str, int] | int, *,
         capacity: Mapping[str, int] | int | None = None,
         labels: Mapping[str, str] | None = None, unschedulable: bool = False,
         ready: bool = True, health: NodeHealth = NodeHealth.HEALTHY) -> Node:
    """A node; a bare number means that many whole GPUs."""
    alloc = {GPU: allocatable} if isinstance(allocatable, int) else dict(allocatable)
    cap = alloc if capacity is None else (
        {GPU: capacity} if isinstance(capacity, int) else dict(capacity))
    return Node(
        name, labels={"gpu": "h100", **(labels or {})},
        capacity={r: a * M for r, a in cap.items()},
        allocatable={r: a * M for r, a in alloc.items()},
        unschedulable=unschedulable,
        conditions=(NodeCondition("Ready", "True" if ready else "False"),),
        health=health,
    )


def with_nodes(base: Snapshot, *nodes: Node, labels: Mapping[str, Mapping[str, str]] | None = None,
               topologies: tuple[Topology, ...] = (),
               flavor_topology: Mapping[str, str] | None = None) -> Snapshot:
    """``base`` with an inventory; ``labels`` gives flavors their nodeLabels (default: the
    flavor ``default`` selects gpu=h100), ``flavor_topology`` their topologyName."""
    wanted = {"default": {"gpu": "h100"}, **(labels or {})}
    flavors = dict(base.flavors)
    for name, flavor in flavors.items():
        flavors[name] = replace(
            flavor, node_labels=dict(wanted.get(name, flavor.node_labels)),
            topology_name=(flavor_topology or {}).get(name, flavor.topology_name))
    return replace(base, flavors=flavors, nodes={n.name: n for n in nodes},
                   topologies={t.name: t for t in topologies})


def flavor(name: str, **labels: str) -> ResourceFlavor:
    return ResourceFlavor(name, node_labels=labels)


def in_one(workload: Workload, level: str, annotation: str = REQUIRED_TOPOLOGY) -> Workload:
    """``workload`` whose pod sets ask for one domain of ``level``."""
    pod_sets = tuple(replace(p, annotations={annotation: level}) for p in workload.pod_sets)
    return replace(workload, pod_sets=pod_sets)


def pod_set(workload: Workload) -> PodSet:
    return workload.pod_sets[0]
