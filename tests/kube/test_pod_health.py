"""Node faults in Kubernetes mode, against the fake apiserver and a real PostgreSQL: a Node
losing GPUs is cordoned and the Job on it requeued; a pod failing with a device-error exit
code requeues its Job and marks its node Degraded."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import sqlalchemy as sa
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import JOBS, NS, job, running, setup_queues
from builders.kube import berth as cluster_of

from admission.engine.node_faults import POD_NODES
from admission.kube.jobs import SessionScope
from admission.kube.kinds.registry import pod_claim
from admission.kube.pods import device_failure, live_node
from admission.loop.loop import AdmissionLoop
from quota.core.model import Node, NodeHealth
from quota.ledger import nodes as ledger_nodes
from quota.ledger.repository import Ledger

pytestmark = pytest.mark.db

PODS = f"/api/v1/namespaces/{NS}/pods"


def node(name: str, *, gpus: int = 8, allocatable: int = 8) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"gpu": "h100", "zone": "a"}},
        "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
        "status": {
            "capacity": {"nvidia.com/gpu": str(gpus)},
            "allocatable": {"nvidia.com/gpu": str(allocatable)},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def add_node(kubectl: FakeKubectl, name: str) -> None:
    """Create a Node, then its status (a subresource: ignored on create)."""
    kubectl.create("/api/v1/nodes", node(name))
    kubectl.patch(f"/api/v1/nodes/{name}/status", node(name))


def pod(name: str, job_name: str, node_name: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "labels": {"job-name": job_name},
            "ownerReferences": [
                {"apiVersion": "batch/v1", "kind": "Job", "name": job_name, "controller": True}
            ],
        },
        "spec": {"nodeName": node_name, "containers": [{"name": "train", "image": "trainer"}]},
    }


def failed(code: int) -> dict[str, Any]:
    terminated = {"exitCode": code, "finishedAt": "2099-01-01T00:00:00Z"}
    return {
        "status": {
            "phase": "Failed",
            "containerStatuses": [{"name": "train", "state": {"terminated": terminated}}],
        }
    }


class World:
    def __init__(self, kubectl: FakeKubectl, sessions: SessionScope, loop: AdmissionLoop) -> None:
        self.kubectl, self.sessions, self.loop = kubectl, sessions, loop

    async def until(self, check: Callable[[], bool], seconds: float = 15) -> None:
        async with asyncio.timeout(seconds):
            while not check():
                await self.loop.cycle()
                await asyncio.sleep(0.05)

    def health(self, name: str) -> NodeHealth | None:
        with self.sessions() as session:
            found = ledger_nodes.node_state(session, name)
        return None if found is None else found.health

    def history(self, name: str) -> list[ledger_nodes.HealthTransition]:
        with self.sessions() as session:
            return ledger_nodes.history(session, name)

    def annotations(self, name: str) -> dict[str, str]:
        with self.sessions() as session:
            found = Ledger(session).get_workload(NS, name)
        return {} if found is None else dict(found.annotations)

    def evictions(self, name: str) -> list[tuple[str | None, dict[str, Any]]]:
        with self.sessions() as session:
            rows = session.execute(
                sa.text(
                    "SELECT e.reason, e.details FROM workload_events e JOIN workloads w "
                    "ON w.id = e.workload_id WHERE w.name = :name AND e.type = 'Evicted' "
                    "ORDER BY e.id"
                ),
                {"name": name},
            ).all()
        return [(r.reason, dict(r.details)) for r in rows]


@contextlib.asynccontextmanager
async def berth(
    fake_api: FakeApiServer, kubectl: FakeKubectl, sessions: SessionScope
) -> AsyncIterator[World]:
    async with cluster_of(fake_api, kubectl, sessions, nodes=True) as cluster:
        yield World(kubectl, sessions, cluster.loop)


async def _running_on(world: World, name: str, gpus: int, node_name: str) -> None:
    """Submit a Job, wait until it runs, then bind its pod to ``node_name``."""
    world.kubectl.create(JOBS, job(name, gpus))
    await world.until(lambda: running(world.kubectl.get(f"{JOBS}/{name}")))
    world.kubectl.create(PODS, pod(f"{name}-0", name, node_name))
    await world.until(lambda: node_name in world.annotations(name).get(POD_NODES, ""))


async def test_a_node_losing_gpus_is_cordoned_and_its_job_requeued(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    add_node(with_crds, "gpu-1")
    async with berth(fake_api, with_crds, sessions) as world:
        await world.until(lambda: world.health("gpu-1") is NodeHealth.HEALTHY)
        await _running_on(world, "train", 4, "gpu-1")

        with_crds.patch("/api/v1/nodes/gpu-1/status", node("gpu-1", allocatable=5))
        await world.until(lambda: bool(world.evictions("train")))

        assert world.health("gpu-1") is NodeHealth.CORDONED
        [cordoned] = world.history("gpu-1")
        assert (cordoned.before, cordoned.after, cordoned.actor) == (
            NodeHealth.HEALTHY, NodeHealth.CORDONED, "kubernetes:mirror",
        )  # fmt: skip
        assert cordoned.why == "3 of 8 devices unhealthy (3 nvidia.com/gpu): at least 2 cordon it"
        [(reason, details)] = world.evictions("train")
        assert (reason, details["nodes"]) == ("NodeUnhealthy", ["gpu-1"])

        # The GPUs coming back does not return the node to the pool: repair and validation do.
        with_crds.patch("/api/v1/nodes/gpu-1/status", node("gpu-1"))
        await world.until(lambda: _allocatable(sessions, "gpu-1") == 8000)
        assert world.health("gpu-1") is NodeHealth.CORDONED


async def test_a_device_error_exit_code_requeues_the_job_and_degrades_the_node(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    add_node(with_crds, "gpu-2")
    async with berth(fake_api, with_crds, sessions) as world:
        await world.until(lambda: world.health("gpu-2") is NodeHealth.HEALTHY)
        await _running_on(world, "crash", 2, "gpu-2")

        # An ordinary failure first: the watch delivers in order, so when the device error
        # has been handled, this one has been too, and left no trace below.
        with_crds.patch(f"{PODS}/crash-0/status", failed(1))
        with_crds.patch(f"{PODS}/crash-0/status", failed(74))
        await world.until(lambda: bool(world.evictions("crash")))

        assert world.health("gpu-2") is NodeHealth.DEGRADED
        [degraded] = world.history("gpu-2")
        assert degraded.why == (
            f"pod {NS}/crash-0 container train exited with device-error code 74 on node gpu-2"
        )
        [(reason, details)] = world.evictions("crash")
        assert reason == "NodeUnhealthy"
        assert details["deviceError"] == {
            "node": "gpu-2", "pod": "crash-0", "container": "train", "exitCode": 74,
        }  # fmt: skip


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(pod("p", "train", "gpu-1"), ("train", "gpu-1"), id="bound pod of a Job"),
        pytest.param(
            {**pod("p", "train", "gpu-1"), "status": {"phase": "Succeeded"}}, ("train", None),
            id="finished pod runs nowhere",
        ),
        pytest.param(
            {"metadata": {"name": "p", "labels": {"job-name": "train"},
                          "deletionTimestamp": "2026-01-01T00:00:00Z"},
             "spec": {"nodeName": "gpu-1"}},
            ("train", None), id="terminating pod runs nowhere",
        ),
        pytest.param({"metadata": {"name": "p"}, "spec": {}}, (None, None), id="not a Job's pod"),
    ],
)  # fmt: skip
def test_where_a_pod_runs(obj: dict[str, Any], expected: tuple[str | None, str | None]) -> None:
    claim = pod_claim(obj)
    assert (claim and claim.name, live_node(obj)) == expected


@pytest.mark.parametrize(
    ("status", "code"),
    [
        pytest.param(failed(74)["status"], 74, id="terminated with a device-error code"),
        pytest.param(failed(1)["status"], None, id="another exit code"),
        pytest.param(
            {"phase": "Running", "containerStatuses": [
                {"name": "train", "lastState": {"terminated": {"exitCode": 74}}}]},
            74, id="restarted after a device error",
        ),
    ],
)  # fmt: skip
def test_device_failure(status: dict[str, Any], code: int | None) -> None:
    found = device_failure({**pod("p", "train", "gpu-1"), "status": status}, {74, 75})
    assert (None if found is None else found.code) == code


def _allocatable(sessions: SessionScope, name: str) -> int | None:
    with sessions() as session:
        found = Ledger(session).get("Node", name)
    return found.allocatable.get("nvidia.com/gpu") if isinstance(found, Node) else None
