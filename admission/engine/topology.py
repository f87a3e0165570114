"""Topology requests and domain choice (PURE).

A pod template annotated ``kueue.x-k8s.io/podset-required-topology: <node label>`` wants all
pods of its pod set inside one domain of that level (the nodes sharing one value of the
label); ``…-preferred-topology`` wants it if possible. The level must be one of the levels
of the ``Topology`` its flavor names. Among the domains that can take the pod set, the one
with the least room is chosen, so that large domains stay whole for large pod sets.
"""

from __future__ import annotations

from collections.abc import Mapping

from quota.core.model import Node, ResourceFlavor, Topology
from quota.core.workload import PREFERRED_TOPOLOGY, REQUIRED_TOPOLOGY, PodSet

HOSTNAME = "kubernetes.io/hostname"


def topology_request(pod_set: PodSet) -> tuple[str, bool] | None:
    """``(level, required)`` asked for by the pod template, or None."""
    notes = pod_set.annotations
    if not notes:
        return None
    level = notes.get(REQUIRED_TOPOLOGY)
    if level:
        return level, True
    level = notes.get(PREFERRED_TOPOLOGY)
    return (level, False) if level else None


def topology_mismatch(
    flavor: ResourceFlavor, pod_set: PodSet, topologies: Mapping[str, Topology]
) -> str | None:
    """Why ``flavor`` cannot honour the pod set's *required* topology, or None."""
    request = topology_request(pod_set)
    if request is None or not request[1]:
        return None
    level = request[0]
    if flavor.topology_name is None:
        return (f"the pod set requires topology level {level}, and the flavor names no "
                "topology (topologyName)")
    topology = topologies.get(flavor.topology_name)
    if topology is not None and level not in topology.levels:
        levels = ", ".join(topology.levels) or "none"
        return (f"the pod set requires topology level {level}, which topology "
                f"{topology.name} does not have (levels: {levels})")
    return None


def level_for(pod_set: PodSet, flavors: Mapping[str, ResourceFlavor], names: tuple[str, ...],
              topologies: Mapping[str, Topology]) -> tuple[str, bool] | None:
    """The level to place ``pod_set`` by in flavors ``names``: the requested one if one
    of those flavors' topologies has it (a required level was checked by the flavor match)."""
    request = topology_request(pod_set)
    if request is None:
        return None
    level, required = request
    if required:
        return request
    for name in names:
        flavor = flavors.get(name)
        topology = topologies.get(flavor.topology_name or "") if flavor else None
        if topology is not None and level in topology.levels:
            return request
    return None


def domain_of(node: Node, level: str) -> str | None:
    """The node's domain at ``level``; every node is its own hostname domain."""
    value = node.labels.get(level)
    if value is None and level == HOSTNAME:
        return node.name
    return value


def best_domain(room: Mapping[str, int], pods: int) -> str | None:
    """The domain with the least room that still takes ``pods`` (ties: by name)."""
    fitting = [(free, name) for name, free in room.items() if free >= pods]
    return min(fitting)[1] if fitting else None
