"""The node health state machine (PURE): what a watched Node says, what an operator may do.

``Healthy → Degraded → Cordoned → Repairing → Validating → Healthy``. Watching a Node only
ever escalates (a device that came back after an XID error is not trusted until a repair
and a validation say so); the way back to the pool is the operator's. Cordoned, Repairing
and Validating nodes are out of the pool (``OUT_OF_POOL``): they take no work
(``takes_work``), and what runs on them is evicted (``admission.engine.node_faults``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

from quota.core.model import Node, NodeHealth
from quota.core.quantity import MILLI

# States in which a node takes no new work and its workloads are evicted.
OUT_OF_POOL = frozenset({NodeHealth.CORDONED, NodeHealth.REPAIRING, NodeHealth.VALIDATING})


def takes_work(node: Node) -> bool:
    """Whether new pods may go to ``node``: schedulable, Ready, and not out of the pool
    (a Degraded node still runs work on its good devices). The one definition: node
    capacity in the engine and the dashboard's pool read it."""
    return not node.unschedulable and node.ready and node.health not in OUT_OF_POOL

# What an operator may move a node to, from each state. Cordoned goes back only through
# repair and validation; a failed validation goes back to repair.
OPERATOR_MOVES: Mapping[NodeHealth, frozenset[NodeHealth]] = {
    NodeHealth.HEALTHY: frozenset({NodeHealth.CORDONED}),
    NodeHealth.DEGRADED: frozenset({NodeHealth.CORDONED, NodeHealth.HEALTHY}),
    NodeHealth.CORDONED: frozenset({NodeHealth.REPAIRING}),
    NodeHealth.REPAIRING: frozenset({NodeHealth.VALIDATING}),
    NodeHealth.VALIDATING: frozenset({NodeHealth.HEALTHY, NodeHealth.REPAIRING}),
}

DEFAULT_DEVICE_RESOURCES = ("nvidia.com/gpu", "nvidia.com/mig-*")
# No exit code means "bad GPU" by any standard: 74 is sysexits' EX_IOERR, which a training
# wrapper can return when it catches a CUDA/XID/ECC error. Jobs' podFailurePolicy should
# list the same codes (deploy/examples/job-device-errors.yaml).
DEFAULT_DEVICE_ERROR_EXIT_CODES = frozenset({74})


@dataclass(frozen=True, slots=True)
class HealthThresholds:
    """When a node with unhealthy devices stops taking work (settings ``BERTH_HEALTH_*``).

    A node is cordoned when at least ``cordon_devices`` devices are unhealthy, or at least
    ``cordon_percent`` percent of its devices (0 disables either), or, with
    ``cordon_not_ready``, when its Ready condition is not True.
    """

    cordon_devices: int = 2
    cordon_percent: int = 25
    cordon_not_ready: bool = True
    device_resources: tuple[str, ...] = DEFAULT_DEVICE_RESOURCES

    def is_device(self, resource: str) -> bool:
        return any(fnmatchcase(resource, pattern) for pattern in self.device_resources)


@dataclass(frozen=True, slots=True)
class Devices:
    """A node's devices of the watched kinds: how many exist, how many are unhealthy."""

    total: int
    unhealthy: int
    by_resource: Mapping[str, int]  # resource -> unhealthy devices, only those with some

    def describe(self) -> str:
        parts = ", ".join(f"{count} {name}" for name, count in sorted(self.by_resource.items()))
        return f"{self.unhealthy} of {self.total} devices unhealthy ({parts})"


@dataclass(frozen=True, slots=True)
class Move:
    """A health transition: to ``state``, and why (one sentence with the numbers)."""

    state: NodeHealth
    why: str


def devices(node: Node, thresholds: HealthThresholds) -> Devices:
    """Unhealthy devices are ``capacity − allocatable`` (what the device plugin withdrew)."""
    total = unhealthy = 0
    by_resource: dict[str, int] = {}
    for resource, capacity in node.capacity.items():
        if not thresholds.is_device(resource):
            continue
        allocatable = node.allocatable.get(resource, capacity)
        lost = max(0, capacity - allocatable) // MILLI
        total += capacity // MILLI
        if lost:
            unhealthy += lost
            by_resource[resource] = lost
    return Devices(total, unhealthy, by_resource)


def observe(current: NodeHealth, node: Node, thresholds: HealthThresholds) -> Move | None:
    """The automatic transition a watched ``node`` calls for from ``current``, or None."""
    if current is NodeHealth.REPAIRING:
        return None  # the operator is working on it: flapping devices are expected
    found = devices(node, thresholds)
    cordon = _cordon_cause(node, found, thresholds)
    if cordon is not None:
        if current is NodeHealth.CORDONED:
            return None
        if current is NodeHealth.VALIDATING:
            return Move(NodeHealth.CORDONED, f"validation failed: {cordon}")
        return Move(NodeHealth.CORDONED, cordon)
    if found.unhealthy and current is NodeHealth.HEALTHY:
        return Move(NodeHealth.DEGRADED, found.describe())
    return None


def operator_move(name: str, current: NodeHealth, target: NodeHealth) -> str | None:
    """Why an operator may not move node ``name`` from ``current`` to ``target``, or None."""
    allowed = OPERATOR_MOVES[current]
    if target in allowed:
        return None
    if target is current:
        return f"node {name} is already {current}"
    choices = ", ".join(sorted(str(state) for state in allowed))
    return f"node {name} is {current}: it can move to {choices}, not to {target}"


def device_error(node: str, pod: str, container: str, code: int) -> str:
    """Why a node is degraded by a pod that failed with a device-error exit code."""
    return f"pod {pod} container {container} exited with device-error code {code} on node {node}"


# The sentence ``device_error`` writes, read back (api.tenancy hides the pod of another
# namespace in a node's history).
_DEVICE_ERROR = re.compile(
    r"pod (?P<pod>\S+) container \S* exited with device-error code -?\d+ on node \S+"
)


def device_error_pod(why: str) -> str | None:
    """The pod (``namespace/pod``) a ``device_error`` sentence names; None for another why."""
    found = _DEVICE_ERROR.fullmatch(why)
    return None if found is None else found["pod"]


def _cordon_cause(node: Node, found: Devices, thresholds: HealthThresholds) -> str | None:
    if thresholds.cordon_not_ready and not node.ready:
        return "its Ready condition is not True"
    if not found.unhealthy:
        return None
    if thresholds.cordon_devices and found.unhealthy >= thresholds.cordon_devices:
        return f"{found.describe()}: at least {thresholds.cordon_devices} cordon it"
    percent = thresholds.cordon_percent
    if percent and found.total and found.unhealthy * 100 >= percent * found.total:
        return f"{found.describe()}: at least {percent}% cordon it"
    return None
