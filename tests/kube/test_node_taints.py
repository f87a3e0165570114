"""Berth's node health reaches the cluster: a Node out of the pool carries
``berth.dev/unhealthy=<state>:NoSchedule`` while it is Cordoned, Repairing or Validating and
loses it when it returns, its other taints kept, each write audited; the setting turns it
off. Against the fake API server with the real client, the loop and a real PostgreSQL."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import berth, setup_queues

from admission.kube.jobs import SessionScope
from admission.kube.taints import TAINT_KEY, taints_patch, wanted_taint
from admission.loop.loop import AdmissionLoop
from quota.core.model import Node, NodeHealth
from quota.ledger import nodes as ledger_nodes
from quota.ledger.repository import Ledger

pytestmark = pytest.mark.db

GPU_TAINT = {"key": "gpu", "effect": "NoSchedule"}


def node(name: str, *, allocatable: int = 8) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"gpu": "h100"}},
        "spec": {"taints": [GPU_TAINT]},
        "status": {
            "capacity": {"nvidia.com/gpu": "8"},
            "allocatable": {"nvidia.com/gpu": str(allocatable)},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def taints(kubectl: FakeKubectl, name: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = kubectl.get(f"/api/v1/nodes/{name}")["spec"].get("taints") or []
    return found


def berths_taint(state: str) -> dict[str, str]:
    return {"key": TAINT_KEY, "value": state, "effect": "NoSchedule"}


async def cycles_until(loop: AdmissionLoop, check: Callable[[], bool], seconds: float = 15) -> None:
    async with asyncio.timeout(seconds):
        while not check():
            await loop.cycle()
            await asyncio.sleep(0.05)


def health(sessions: SessionScope, name: str) -> NodeHealth | None:
    with sessions() as session:
        found = ledger_nodes.node_state(session, name)
    return None if found is None else found.health


def allocatable(sessions: SessionScope, name: str) -> int | None:
    with sessions() as session:
        found = Ledger(session).get("Node", name)
    return found.allocatable.get("nvidia.com/gpu") if isinstance(found, Node) else None


def move(sessions: SessionScope, name: str, before: NodeHealth, after: NodeHealth) -> None:
    """An operator's move, as ``berth node`` makes it."""
    with sessions() as session:
        ledger_nodes.set_health(session, name, before, after, why="test", actor="operator")


@pytest.fixture
def gpu_node(with_crds: FakeKubectl) -> FakeKubectl:
    setup_queues(with_crds)
    with_crds.create("/api/v1/nodes", node("gpu-1"))
    with_crds.patch("/api/v1/nodes/gpu-1/status", node("gpu-1"))
    return with_crds


async def test_a_node_out_of_the_pool_is_tainted_with_its_state_until_it_returns(
    fake_api: FakeApiServer, gpu_node: FakeKubectl, sessions: SessionScope
) -> None:
    async with berth(fake_api, gpu_node, sessions, nodes=True) as cluster:
        loop = cluster.loop
        await cycles_until(loop, lambda: health(sessions, "gpu-1") is NodeHealth.HEALTHY)
        await loop.cycle()
        assert taints(gpu_node, "gpu-1") == [GPU_TAINT]  # a healthy node is left alone

        # Three GPUs gone: Berth cordons the node, and kube-scheduler is told too.
        gpu_node.patch("/api/v1/nodes/gpu-1/status", node("gpu-1", allocatable=5))
        await cycles_until(loop, lambda: berths_taint("Cordoned") in taints(gpu_node, "gpu-1"))
        assert taints(gpu_node, "gpu-1") == [GPU_TAINT, berths_taint("Cordoned")]

        move(sessions, "gpu-1", NodeHealth.CORDONED, NodeHealth.REPAIRING)
        await cycles_until(loop, lambda: berths_taint("Repairing") in taints(gpu_node, "gpu-1"))
        assert taints(gpu_node, "gpu-1") == [GPU_TAINT, berths_taint("Repairing")]
        # Repaired: the GPUs are back before validation looks at them.
        gpu_node.patch("/api/v1/nodes/gpu-1/status", node("gpu-1"))
        await cycles_until(loop, lambda: allocatable(sessions, "gpu-1") == 8000)
        move(sessions, "gpu-1", NodeHealth.REPAIRING, NodeHealth.VALIDATING)
        await cycles_until(loop, lambda: berths_taint("Validating") in taints(gpu_node, "gpu-1"))
        assert taints(gpu_node, "gpu-1") == [GPU_TAINT, berths_taint("Validating")]

        move(sessions, "gpu-1", NodeHealth.VALIDATING, NodeHealth.HEALTHY)
        await cycles_until(loop, lambda: taints(gpu_node, "gpu-1") == [GPU_TAINT])

    with sessions() as session:
        audited = [
            (row["before"]["taint"], row["after"]["taint"])
            for row in Ledger(session).audit_entries("Node", "gpu-1")
            if row["actor"] == "kubernetes:node-tainter"
        ]
    assert audited == [
        (None, f"{TAINT_KEY}=Cordoned:NoSchedule"),
        (f"{TAINT_KEY}=Cordoned:NoSchedule", f"{TAINT_KEY}=Repairing:NoSchedule"),
        (f"{TAINT_KEY}=Repairing:NoSchedule", f"{TAINT_KEY}=Validating:NoSchedule"),
        (f"{TAINT_KEY}=Validating:NoSchedule", None),
    ]


async def test_the_setting_off_leaves_nodes_untainted(
    fake_api: FakeApiServer, gpu_node: FakeKubectl, sessions: SessionScope
) -> None:
    async with berth(fake_api, gpu_node, sessions, nodes=True, taint_nodes=False) as cluster:
        await cycles_until(cluster.loop, lambda: health(sessions, "gpu-1") is NodeHealth.HEALTHY)
        gpu_node.patch("/api/v1/nodes/gpu-1/status", node("gpu-1", allocatable=5))
        await cycles_until(cluster.loop, lambda: health(sessions, "gpu-1") is NodeHealth.CORDONED)
        for _ in range(5):
            await cluster.loop.cycle()
        assert taints(gpu_node, "gpu-1") == [GPU_TAINT]


@pytest.mark.parametrize(
    ("state", "value"),
    [
        pytest.param(NodeHealth.HEALTHY, None, id="healthy: no taint"),
        pytest.param(NodeHealth.DEGRADED, None, id="degraded still takes work: no taint"),
        pytest.param(NodeHealth.CORDONED, "Cordoned", id="cordoned"),
        pytest.param(NodeHealth.REPAIRING, "Repairing", id="repairing"),
        pytest.param(NodeHealth.VALIDATING, "Validating", id="validating"),
    ],
)
def test_the_taint_a_state_wants(state: NodeHealth, value: str | None) -> None:
    assert wanted_taint(state) == value


def test_the_patch_keeps_other_taints_and_is_none_when_nothing_changes() -> None:
    tainted = {"metadata": {"resourceVersion": "7"},
               "spec": {"taints": [GPU_TAINT, berths_taint("Cordoned")]}}  # fmt: skip
    assert taints_patch(tainted, "Cordoned") is None
    assert taints_patch(tainted, "Repairing") == {
        "metadata": {"resourceVersion": "7"},
        "spec": {"taints": [GPU_TAINT, berths_taint("Repairing")]},
    }
    assert taints_patch(tainted, None) == {
        "metadata": {"resourceVersion": "7"}, "spec": {"taints": [GPU_TAINT]}}  # fmt: skip
    only = {"metadata": {"resourceVersion": "8"}, "spec": {"taints": [berths_taint("Cordoned")]}}
    assert taints_patch(only, None) == {"metadata": {"resourceVersion": "8"}, "spec": {"taints": None}}
    assert taints_patch({"metadata": {}, "spec": {}}, None) is None
