"""Which admitted workloads a node fault evicts, and how the loop plans those evictions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from admission.engine.node_faults import (
    DEVICE_ERROR,
    POD_NODES,
    DeviceError,
    node_evictions,
    nodes_of,
    pod_nodes_annotation,
)
from admission.loop.actuation import CHECKPOINT, EVICT
from admission.loop.plan import CyclePlan, plan_evictions
from quota.core.cycle_writes import WorkloadRecord
from quota.core.model import Node, NodeHealth
from quota.core.workload import (
    HOLDS_QUOTA,
    Admission,
    PodSet,
    PodSetAssignment,
    PodSetPlacement,
    Workload,
)
from quota.core.workload import WorkloadState as S

T0 = datetime(2026, 1, 1, tzinfo=UTC)
GPU = "nvidia.com/gpu"
SEEN = timedelta(seconds=30)  # pods are seen this long after admission


def workload(
    name: str = "train",
    *,
    state: S = S.ADMITTED,
    pods_on: str | None = None,
    placed: dict[str, int] | None = None,
    annotations: dict[str, str] | None = None,
    admitted_at: datetime = T0,
) -> Workload:
    extra = dict(annotations or {})
    if pods_on is not None:
        extra[POD_NODES] = pod_nodes_annotation(pods_on.split(","), admitted_at + SEEN)
    admission = Admission(
        "team-a",
        (PodSetAssignment("main", 2, {GPU: "h100"}, {GPU: 8000}),),
        None if placed is None else (PodSetPlacement("main", placed),),
    )
    holds = state in HOLDS_QUOTA
    return Workload(
        "ns", name, "lq", (PodSet("main", 2, {GPU: 4000}),), T0 - timedelta(hours=1),
        state=state, admission=admission if holds else None,
        admitted_at=admitted_at if holds else None, annotations=extra,
    )  # fmt: skip


def nodes(**health: NodeHealth) -> dict[str, Node]:
    return {name.replace("_", "-"): Node(name.replace("_", "-"), health=h) for name, h in health.items()}


def device_error(node: str, at: datetime) -> dict[str, str]:
    return {DEVICE_ERROR: DeviceError(node, "train-abc", "main", 74, at).to_annotation()}


H, D, C, R, V = (
    NodeHealth.HEALTHY,
    NodeHealth.DEGRADED,
    NodeHealth.CORDONED,
    NodeHealth.REPAIRING,
    NodeHealth.VALIDATING,
)


@pytest.mark.parametrize(
    ("w", "pool", "evicted_on"),
    [
        pytest.param(workload(pods_on="gpu-1"), nodes(gpu_1=H), None, id="healthy node keeps it"),
        pytest.param(workload(pods_on="gpu-1"), nodes(gpu_1=D), None, id="degraded keeps it"),
        pytest.param(workload(pods_on="gpu-1"), nodes(gpu_1=C), ["gpu-1"], id="cordoned evicts"),
        pytest.param(workload(pods_on="gpu-1"), nodes(gpu_1=R), ["gpu-1"], id="repairing evicts"),
        pytest.param(
            workload(pods_on="gpu-1"), nodes(gpu_1=V), ["gpu-1"], id="validating evicts"
        ),
        pytest.param(
            workload(pods_on="gpu-1,gpu-2"), nodes(gpu_1=H, gpu_2=C), ["gpu-2"],
            id="one bad node of two evicts",
        ),
        pytest.param(
            workload(placed={"gpu-2": 2}), nodes(gpu_1=H, gpu_2=C), ["gpu-2"],
            id="the engine's placement counts",
        ),
        pytest.param(
            workload(placed={"gpu-2": 0, "gpu-1": 2}), nodes(gpu_1=H, gpu_2=C), None,
            id="a node placed no pods does not count",
        ),
        pytest.param(
            workload(pods_on="gpu-1", placed={"gpu-2": 2}), nodes(gpu_1=H, gpu_2=C), None,
            id="pods seen on a healthy node are not evicted by the plan",
        ),
        pytest.param(
            workload(
                annotations={POD_NODES: pod_nodes_annotation(["gpu-1"], T0 - SEEN)},
                placed={"gpu-2": 2},
            ),
            nodes(gpu_1=H, gpu_2=C), ["gpu-2"],
            id="pods of an earlier run leave the plan in charge",
        ),
        pytest.param(workload(), nodes(gpu_1=C), None, id="unknown whereabouts are not evicted"),
        pytest.param(
            workload(pods_on="gpu-9"), nodes(gpu_1=C), None, id="node not in inventory ignored"
        ),
        pytest.param(
            workload(state=S.EVICTING, pods_on="gpu-1"), nodes(gpu_1=C), None,
            id="already evicting is left to its grace",
        ),
        pytest.param(
            workload(state=S.PENDING, pods_on="gpu-1"), nodes(gpu_1=C), None,
            id="pending holds nothing",
        ),
        pytest.param(
            workload(pods_on="gpu-1", annotations=device_error("gpu-1", T0 + timedelta(1))),
            nodes(gpu_1=D), ["gpu-1"], id="device error in this run evicts",
        ),
        pytest.param(
            workload(pods_on="gpu-1", annotations=device_error("gpu-1", T0 - timedelta(1))),
            nodes(gpu_1=D), None, id="device error of an earlier run does not",
        ),
        pytest.param(
            workload(pods_on="gpu-1", annotations={DEVICE_ERROR: "not json"}),
            nodes(gpu_1=D), None, id="annotation Berth did not write is ignored",
        ),
    ],
)
def test_node_evictions(
    w: Workload, pool: dict[str, Node], evicted_on: list[str] | None
) -> None:
    found = node_evictions({w.key: w}, pool)
    if evicted_on is None:
        assert found == []
        return
    [eviction] = found
    assert (eviction.key, eviction.reason, eviction.cluster_queue) == (
        "ns/train", "NodeUnhealthy", "team-a",
    )
    assert eviction.details["nodes"] == evicted_on


def test_pods_seen_win_over_the_engines_plan() -> None:
    w = workload(pods_on="gpu-3,gpu-1,gpu-1", placed={"gpu-2": 1})
    assert nodes_of(w) == ("gpu-1", "gpu-3")
    assert nodes_of(workload(placed={"gpu-2": 1, "gpu-4": 3})) == ("gpu-2", "gpu-4")


@pytest.mark.parametrize(
    ("seen", "annotation", "expected"),
    [
        pytest.param(SEEN, None, ("gpu-1",), id="pods seen in this run"),
        pytest.param(-SEEN, None, (), id="pods seen before this admission belong to a rerun"),
        pytest.param(SEEN, "gpu-1", (), id="not Berth's format"),
    ],
)
def test_pod_nodes_of_an_earlier_run_are_ignored(
    seen: timedelta, annotation: str | None, expected: tuple[str, ...]
) -> None:
    text = annotation or pod_nodes_annotation(["gpu-1"], T0 + seen)
    w = workload(annotations={POD_NODES: text})
    assert nodes_of(w) == expected


def test_device_error_details_name_the_pod_and_code() -> None:
    w = workload(annotations=device_error("gpu-4", T0 + timedelta(seconds=5)))
    [eviction] = node_evictions({w.key: w}, nodes(gpu_4=D))
    assert eviction.details["deviceError"] == {
        "node": "gpu-4", "pod": "train-abc", "container": "main", "exitCode": 74,
    }


def _record(w: Workload) -> WorkloadRecord:
    return WorkloadRecord(7, 3, w)


@pytest.mark.parametrize(
    ("grace", "state", "releases"),
    [
        pytest.param(None, S.PENDING, True, id="without grace requeued at once"),
        pytest.param("10m", S.EVICTING, False, id="checkpoint grace keeps quota while it runs"),
    ],
)
def test_planned_node_eviction(grace: str | None, state: S, releases: bool) -> None:
    annotations = {"berth.dev/checkpoint-grace": grace} if grace else {}
    w = workload(pods_on="gpu-1", annotations=annotations)
    records = {w.key: _record(w)}
    now = T0 + timedelta(hours=1)
    plan = plan_evictions(CyclePlan(), records, node_evictions({w.key: w}, nodes(gpu_1=C)), now)
    [transition] = plan.transitions
    assert (transition.state, transition.releases, transition.evicts) == (state, releases, True)
    evicted = transition.events[0]
    assert (evicted.type, evicted.reason) == ("Evicted", "NodeUnhealthy")
    assert evicted.details["nodes"] == ["gpu-1"]
    assert [e.type for e in transition.events[1:]] == ([] if grace else ["Requeued"])
    [action] = plan.actions
    assert action.action == (CHECKPOINT if grace else EVICT)
    if not grace:
        assert action.reason is not None
        assert action.reason.message == "ns/train evicted: NodeUnhealthy on node gpu-1"
