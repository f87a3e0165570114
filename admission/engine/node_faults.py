"""Which admitted workloads a node fault evicts (PURE), with eviction reason NodeUnhealthy.

A workload runs on the nodes its pods were seen on in its current run
(``berth.dev/pod-nodes``, written by the pod watcher in Kubernetes mode), or else on the
nodes of the engine's placement (its per-node plan, when it made one). It is evicted when
one of them is out of the pool (Cordoned, Repairing, Validating), or when one of its pods
failed with a device-error exit code since it was admitted (``berth.dev/device-error``).
The loop sends these decisions down the same path as preemption, so a
``berth.dev/checkpoint-grace`` is honoured.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from admission.engine.types import EvictionDecision
from quota.core.model import Node, NodeHealth
from quota.core.node_health import OUT_OF_POOL
from quota.core.reasons import EvictionReason
from quota.core.workload import Workload, WorkloadState

POD_NODES = "berth.dev/pod-nodes"  # JSON: {nodes, at}: where its live pods are
DEVICE_ERROR = "berth.dev/device-error"  # JSON: {node, pod, container, code, at}


@dataclass(frozen=True, slots=True)
class DeviceError:
    """A pod of the workload failed with a device-error exit code on ``node`` at ``at``."""

    node: str
    pod: str
    container: str
    code: int
    at: datetime

    def to_annotation(self) -> str:
        return json.dumps(
            {"node": self.node, "pod": self.pod, "container": self.container,
             "code": self.code, "at": self.at.isoformat()},
            sort_keys=True,
        )  # fmt: skip

    @classmethod
    def from_annotation(cls, text: str) -> DeviceError | None:
        """The stored error, or None when the annotation is not one Berth wrote."""
        try:
            data = json.loads(text)
            return cls(
                str(data["node"]), str(data["pod"]), str(data["container"]),
                int(data["code"]), datetime.fromisoformat(str(data["at"])),
            )  # fmt: skip
        except (ValueError, KeyError, TypeError):
            return None


def pod_nodes_annotation(nodes: Iterable[str], at: datetime) -> str:
    """The ``berth.dev/pod-nodes`` value: where the pods of this run are, seen at ``at``."""
    return json.dumps({"nodes": sorted(set(nodes)), "at": at.isoformat()}, sort_keys=True)


def pod_nodes(workload: Workload) -> tuple[str, ...]:
    """The nodes the pods of the workload's current run were last seen on (sorted).

    A record from before the current admission describes an earlier run (its pods may
    still be terminating on the failed node) and is ignored.
    """
    text = workload.annotations.get(POD_NODES)
    if not text or workload.admitted_at is None:
        return ()
    try:
        data = json.loads(text)
        nodes = tuple(sorted({str(name) for name in data["nodes"]}))
        seen = datetime.fromisoformat(str(data["at"]))
    except (ValueError, KeyError, TypeError):
        return ()
    return nodes if seen >= workload.admitted_at else ()


def nodes_of(workload: Workload) -> tuple[str, ...]:
    """The nodes the workload runs on: where its pods were seen in this run, else where the
    engine placed them (the scheduler may bind pods elsewhere inside the flavor, so what
    was seen wins over the plan)."""
    seen = pod_nodes(workload)
    if seen:
        return seen
    admission = workload.admission
    placed: set[str] = set()
    if admission is not None and admission.placement is not None:
        for pod_set in admission.placement:
            placed.update(name for name, pods in pod_set.nodes.items() if pods > 0)
    return tuple(sorted(placed))


def any_unhealthy(nodes: Mapping[str, Node]) -> bool:
    """Whether any node is not Healthy: otherwise nothing can be evicted for health."""
    return any(node.health is not NodeHealth.HEALTHY for node in nodes.values())


def node_evictions(
    workloads: Mapping[str, Workload], nodes: Mapping[str, Node]
) -> list[EvictionDecision]:
    """The NodeUnhealthy evictions the nodes' health calls for, in key order."""
    if not any_unhealthy(nodes):
        return []  # device errors also mark their node Degraded, so none can be pending
    # Runs every cycle over every workload: a cheap test first, the full one on a match.
    out = frozenset(name for name, node in nodes.items() if node.health in OUT_OF_POOL)
    found = []
    for key, workload in workloads.items():
        if workload.state is not WorkloadState.ADMITTED or workload.admission is None:
            continue
        if DEVICE_ERROR not in workload.annotations and not _may_run_on(workload, out):
            continue
        details = eviction_details(workload, nodes)
        if details is not None:
            found.append(
                EvictionDecision(
                    key, "", None, workload.admission.cluster_queue,
                    str(EvictionReason.NODE_UNHEALTHY), details,
                )
            )  # fmt: skip
    found.sort(key=lambda eviction: eviction.key)
    return found


def _may_run_on(workload: Workload, out: frozenset[str]) -> bool:
    """Whether ``workload`` may run on a node in ``out`` (false positives allowed)."""
    if not out:
        return False
    text = workload.annotations.get(POD_NODES)
    if text is not None:
        for name in out:
            if name in text:
                return True
    placement = workload.admission.placement if workload.admission is not None else None
    return any(not out.isdisjoint(pod_set.nodes) for pod_set in placement or ())


def eviction_details(
    workload: Workload, nodes: Mapping[str, Node]
) -> dict[str, object] | None:
    """Why ``workload`` must leave its nodes (event details), or None when it may stay."""
    bad = []
    for name in nodes_of(workload):
        node = nodes.get(name)
        if node is not None and node.health in OUT_OF_POOL:
            bad.append({"node": name, "health": str(node.health)})
    error = _device_error(workload)
    if error is not None and not any(b["node"] == error.node for b in bad):
        bad.append({"node": error.node, "health": "DeviceError"})
    if not bad:
        return None
    details: dict[str, object] = {"nodes": [b["node"] for b in bad], "health": bad}
    if error is not None:
        details["deviceError"] = {
            "node": error.node, "pod": error.pod, "container": error.container,
            "exitCode": error.code,
        }  # fmt: skip
    return details


def _device_error(workload: Workload) -> DeviceError | None:
    """A device error of the current run: one from before this admission is history."""
    text = workload.annotations.get(DEVICE_ERROR)
    error = DeviceError.from_annotation(text) if text else None
    if error is None or workload.admitted_at is None:
        return None
    return error if error.at >= workload.admitted_at else None
