"""The node health state machine: what a watched Node calls for, what an operator may do."""

from __future__ import annotations

import pytest

from quota.core.model import Node, NodeCondition, NodeHealth
from quota.core.node_health import HealthThresholds, devices, observe, operator_move

H, D, C, R, V = (
    NodeHealth.HEALTHY,
    NodeHealth.DEGRADED,
    NodeHealth.CORDONED,
    NodeHealth.REPAIRING,
    NodeHealth.VALIDATING,
)
DEFAULT = HealthThresholds(cordon_devices=2, cordon_percent=25)


def node(
    gpus: int = 8,
    unhealthy: int = 0,
    *,
    ready: str | None = "True",
    extra: dict[str, tuple[int, int]] | None = None,
) -> Node:
    """A node with ``gpus`` GPUs of which ``unhealthy`` are withdrawn (capacity − allocatable)."""
    capacity = {"nvidia.com/gpu": gpus * 1000, "cpu": 64_000}
    allocatable = {"nvidia.com/gpu": (gpus - unhealthy) * 1000, "cpu": 60_000}
    for resource, (cap, alloc) in (extra or {}).items():
        capacity[resource], allocatable[resource] = cap * 1000, alloc * 1000
    conditions = () if ready is None else (NodeCondition("Ready", ready),)
    return Node("gpu-1", capacity=capacity, allocatable=allocatable, conditions=conditions)


@pytest.mark.parametrize(
    ("current", "observed", "thresholds", "expected"),
    [
        pytest.param(H, node(), DEFAULT, None, id="healthy node stays healthy"),
        pytest.param(H, node(unhealthy=1), DEFAULT, D, id="one bad GPU of eight degrades"),
        pytest.param(H, node(unhealthy=2), DEFAULT, C, id="two bad GPUs reach the count"),
        pytest.param(
            H, node(gpus=4, unhealthy=1), HealthThresholds(cordon_devices=0, cordon_percent=25),
            C, id="one of four is 25 percent",
        ),
        pytest.param(
            H, node(unhealthy=1), HealthThresholds(cordon_devices=1, cordon_percent=0), C,
            id="count threshold of one cordons on the first bad GPU",
        ),
        pytest.param(
            H, node(unhealthy=7), HealthThresholds(cordon_devices=0, cordon_percent=0), D,
            id="both thresholds disabled only degrades",
        ),
        pytest.param(D, node(unhealthy=2), DEFAULT, C, id="degraded node escalates"),
        pytest.param(D, node(), DEFAULT, None, id="degraded stays until an operator clears it"),
        pytest.param(H, node(ready="False"), DEFAULT, C, id="not ready cordons"),
        pytest.param(H, node(ready="Unknown"), DEFAULT, C, id="ready unknown cordons"),
        pytest.param(
            H, node(ready="False"), HealthThresholds(cordon_not_ready=False), None,
            id="not ready ignored when configured",
        ),
        pytest.param(H, node(ready=None), DEFAULT, None, id="no Ready condition counts as ready"),
        pytest.param(C, node(unhealthy=3), DEFAULT, None, id="cordoned stays cordoned"),
        pytest.param(C, node(), DEFAULT, None, id="cordoned does not heal by itself"),
        pytest.param(R, node(unhealthy=8), DEFAULT, None, id="repairing ignores the devices"),
        pytest.param(V, node(unhealthy=2), DEFAULT, C, id="validation fails back to cordoned"),
        pytest.param(V, node(), DEFAULT, None, id="validating passes only by the operator"),
        pytest.param(V, node(unhealthy=1), DEFAULT, None, id="validating below threshold waits"),
        pytest.param(
            H, node(gpus=0, extra={"nvidia.com/mig-1g.10gb": (7, 5)}), DEFAULT, C,
            id="MIG partitions count as devices",
        ),
        pytest.param(
            H, node(extra={"example.com/fpga": (2, 0)}), DEFAULT, None,
            id="resources that are not devices are ignored",
        ),
    ],
)
def test_observe(
    current: NodeHealth, observed: Node, thresholds: HealthThresholds, expected: NodeHealth | None
) -> None:
    move = observe(current, observed, thresholds)
    assert (None if move is None else move.state) == expected


def test_observe_says_why_with_the_numbers() -> None:
    move = observe(H, node(unhealthy=3), DEFAULT)
    assert move is not None
    assert move.why == "3 of 8 devices unhealthy (3 nvidia.com/gpu): at least 2 cordon it"
    failed = observe(V, node(ready="False"), DEFAULT)
    assert failed is not None and failed.why == "validation failed: its Ready condition is not True"


def test_devices_counts_whole_devices_and_configured_resources() -> None:
    thresholds = HealthThresholds(device_resources=("amd.com/gpu",))
    found = devices(node(unhealthy=2, extra={"amd.com/gpu": (4, 3)}), thresholds)
    assert (found.total, found.unhealthy, dict(found.by_resource)) == (4, 1, {"amd.com/gpu": 1})


@pytest.mark.parametrize(
    ("current", "target", "allowed"),
    [
        pytest.param(H, C, True, id="cordon a healthy node"),
        pytest.param(D, C, True, id="cordon a degraded node"),
        pytest.param(D, H, True, id="clear a degraded node"),
        pytest.param(C, R, True, id="start repair"),
        pytest.param(R, V, True, id="repaired, validate"),
        pytest.param(V, H, True, id="validated, back to the pool"),
        pytest.param(V, R, True, id="validation failed, repair again"),
        pytest.param(C, H, False, id="cordoned cannot skip validation"),
        pytest.param(R, H, False, id="repairing cannot skip validation"),
        pytest.param(H, V, False, id="healthy cannot be validated"),
        pytest.param(H, H, False, id="no move to the same state"),
        pytest.param(H, R, False, id="repair needs a cordon first"),
    ],
)
def test_operator_moves(current: NodeHealth, target: NodeHealth, allowed: bool) -> None:
    assert (operator_move("gpu-1", current, target) is None) is allowed


def test_refused_move_names_the_node_and_the_choices() -> None:
    assert operator_move("gpu-1", C, H) == (
        "node gpu-1 is Cordoned: it can move to Repairing, not to Healthy"
    )
    assert operator_move("gpu-1", H, H) == "node gpu-1 is already Healthy"
