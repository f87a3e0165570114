"""Berth's CRDs and Nodes mirrored into the ledger; invalid specs named; status written."""

from __future__ import annotations

import asyncio
from typing import Any

from builders.fakeapi import FakeKubectl
from builders.waiting import eventually

from admission.kube.client import NODES, Kube
from admission.kube.informer import Informer
from admission.kube.jobs import SessionScope
from admission.kube.mirror import BERTH_KINDS, Mirror
from admission.kube.status import StatusWriter
from quota.core.model import ClusterQueue, Node
from quota.ledger.repository import Ledger

CQ_PATH = "/apis/berth.dev/v1beta1/clusterqueues"
EVENTS = "/api/v1/namespaces/default/events"


def cluster_queue(name: str, gpus: Any = 8) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "h100",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": gpus}],
                        }
                    ],
                }
            ],
        },
    }


def in_ledger(sessions: SessionScope, kind: str, name: str) -> Any:
    with sessions() as session:
        return Ledger(session).get(kind, name)


async def test_a_cluster_queue_is_mirrored_updated_and_deleted(
    kube: Kube, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    wakes: list[int] = []
    mirror = Mirror(kube, sessions, lambda: wakes.append(1))
    informer = Informer(
        kube, BERTH_KINDS["ClusterQueue"], mirror.handler(BERTH_KINDS["ClusterQueue"])
    )
    task = asyncio.create_task(informer.run())
    try:
        with_crds.create(CQ_PATH, cluster_queue("team-a"))
        await eventually(lambda: in_ledger(sessions, "ClusterQueue", "team-a") is not None)
        stored = in_ledger(sessions, "ClusterQueue", "team-a")
        assert isinstance(stored, ClusterQueue)
        assert stored.resource_groups[0].flavors[0].resources[0].nominal == 8000
        await eventually(lambda: _accepted(with_crds, "team-a") == "True")
        with_crds.patch(
            f"{CQ_PATH}/team-a",
            {"spec": {"resourceGroups": cluster_queue("x", 4)["spec"]["resourceGroups"]}},
        )
        await eventually(
            lambda: (
                in_ledger(sessions, "ClusterQueue", "team-a")
                .resource_groups[0]
                .flavors[0]
                .resources[0]
                .nominal
                == 4000
            )
        )
        with_crds.delete(f"{CQ_PATH}/team-a")
        await eventually(lambda: in_ledger(sessions, "ClusterQueue", "team-a") is None)
        # The loop is woken after the commit that the ledger read above may already see.
        await eventually(lambda: len(wakes) >= 3)
        assert len(wakes) == 3  # one wake per change: created, updated, deleted
    finally:
        task.cancel()


async def test_an_invalid_spec_is_named_and_leaves_the_ledger_alone(
    kube: Kube, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    ref = BERTH_KINDS["ClusterQueue"]
    mirror = Mirror(kube, sessions, lambda: None)
    created = with_crds.create(CQ_PATH, cluster_queue("bad", gpus="lots"))
    await mirror.handle(ref, "ADDED", created)
    assert in_ledger(sessions, "ClusterQueue", "bad") is None
    condition = with_crds.get(f"{CQ_PATH}/bad")["status"]["conditions"][0]
    assert (condition["status"], condition["reason"]) == ("False", "InvalidSpec")
    assert "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota" in condition["message"]
    (event,) = with_crds.get(EVENTS)["items"]
    assert (event["reason"], event["type"]) == ("InvalidSpec", "Warning")
    assert event["involvedObject"]["name"] == "bad"


async def test_queue_status_shows_counts_usage_and_reasons(
    kube: Kube, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    ref = BERTH_KINDS["ClusterQueue"]
    mirror = Mirror(kube, sessions, lambda: None)
    await mirror.handle(ref, "ADDED", with_crds.create(CQ_PATH, cluster_queue("team-a")))
    writer = StatusWriter(kube, sessions, mirror)
    assert await writer.write() == 1
    status = with_crds.get(f"{CQ_PATH}/team-a")["status"]
    assert (status["pendingWorkloads"], status["admittedWorkloads"]) == (0, 0)
    assert status["conditions"][0]["type"] == "Accepted"  # status writes keep the condition
    assert await writer.write() == 0  # nothing changed: nothing patched


async def test_nodes_feed_the_inventory(
    kube: Kube, kubectl: FakeKubectl, sessions: SessionScope
) -> None:
    mirror = Mirror(kube, sessions, lambda: None)
    task = asyncio.create_task(Informer(kube, NODES, mirror.handle_node).run())
    try:
        kubectl.create(
            "/api/v1/nodes",
            {
                "metadata": {"name": "gpu-1", "labels": {"gpu": "h100"}},
                "spec": {
                    "unschedulable": True,
                    "taints": [{"key": "gpu", "effect": "NoSchedule", "timeAdded": None}],
                },
            },
        )
        kubectl.patch(
            "/api/v1/nodes/gpu-1/status",
            {
                "status": {
                    "capacity": {"nvidia.com/gpu": "8", "cpu": "64"},
                    "allocatable": {"nvidia.com/gpu": "8", "cpu": "63500m"},
                    "conditions": [
                        {
                            "type": "Ready",
                            "status": "False",
                            "reason": "KubeletDown",
                            "lastHeartbeatTime": "2026-01-01T00:00:00Z",
                        }
                    ],
                }
            },
        )
        await eventually(
            lambda: (n := in_ledger(sessions, "Node", "gpu-1")) is not None and not n.ready
        )
        node = in_ledger(sessions, "Node", "gpu-1")
        assert isinstance(node, Node)
        assert node.allocatable == {"nvidia.com/gpu": 8000, "cpu": 63500}
        assert node.unschedulable and node.taints[0].key == "gpu"
        kubectl.delete("/api/v1/nodes/gpu-1")
        await eventually(lambda: in_ledger(sessions, "Node", "gpu-1") is None)
    finally:
        task.cancel()


def _accepted(kubectl: FakeKubectl, name: str) -> str | None:
    for condition in kubectl.get(f"{CQ_PATH}/{name}").get("status", {}).get("conditions", []):
        if condition["type"] == "Accepted":
            return str(condition["status"])
    return None
