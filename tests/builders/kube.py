"""The Kubernetes end-to-end tests' world: a queued Job, queues in the fake cluster, Berth
running against it (``berth``), stepped by the test (``Cluster``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from admission.kube.jobs import SessionScope
from admission.kube.runtime import KubeRuntime, start_kubernetes
from admission.loop.loop import AdmissionLoop
from berth.serve import kube_settings
from berth.settings import ClusterSettings, Settings
from builders import manifests
from builders.fakeapi import FakeApiServer, FakeKubectl
from quota.core.workload import WorkloadState
from quota.ledger.repository import Ledger

NS = "team-a"


JOBS = f"/apis/batch/v1/namespaces/{NS}/jobs"


BERTH = "/apis/berth.dev/v1beta1"


def job(
    name: str, gpus: int, *, priority: str | None = None, suspend: bool = True
) -> dict[str, Any]:
    """A suspended one-pod Job for the fake cluster (the API server gives it ``NS``), with a
    nodeSelector of its own for Berth to keep."""
    return manifests.job(
        name, gpus, namespace=None, priority=priority, suspend=suspend, pods=1,
        nodeSelector={"zone": "a"},
    )  # fmt: skip


def setup_queues(kubectl: FakeKubectl, *, preemption: str = "Never") -> None:
    """The team's namespace, a flavor, a ClusterQueue of 8 GPUs, its LocalQueue ``main``."""
    kubectl.namespace(NS)
    kubectl.create(
        f"{BERTH}/resourceflavors",
        {
            "metadata": {"name": "h100"},
            "spec": {
                "nodeLabels": {"gpu": "h100"},
                "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
            },
        },
    )
    kubectl.create(
        f"{BERTH}/clusterqueues",
        {
            "metadata": {"name": "team-a"},
            "spec": {
                "namespaceSelector": {},
                "preemption": {"withinClusterQueue": preemption},
                "resourceGroups": [
                    {
                        "coveredResources": ["nvidia.com/gpu"],
                        "flavors": [
                            {
                                "name": "h100",
                                "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}],
                            }
                        ],
                    }
                ],
            },
        },
    )
    kubectl.create(
        f"{BERTH}/namespaces/{NS}/localqueues",
        {"metadata": {"name": "main"}, "spec": {"clusterQueue": "team-a"}},
    )
    kubectl.create(f"{BERTH}/workloadpriorityclasses", {"metadata": {"name": "high"}, "value": 100})


class Cluster:
    """The fake cluster plus Berth in Kubernetes mode, with a loop the test steps."""

    def __init__(self, kubectl: FakeKubectl, runtime: KubeRuntime, loop: AdmissionLoop) -> None:
        self.kubectl, self.runtime, self.loop = kubectl, runtime, loop

    def job(self, name: str) -> dict[str, Any]:
        return self.kubectl.get(f"{JOBS}/{name}")

    async def until(self, check: Callable[[], bool], seconds: float = 15) -> None:
        """Run cycles until ``check`` holds (the watchers catch up in between), renewing the
        Lease when this replica leads, as the loop's runner does."""
        async with asyncio.timeout(seconds):
            while not check():
                if self.runtime.lease is not None:
                    await self.runtime.lease.held()
                await self.loop.cycle()
                await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def berth(
    fake_api: FakeApiServer,
    kubectl: FakeKubectl,
    sessions: SessionScope,
    *,
    nodes: bool = False,
    taint_nodes: bool = True,
    leading: bool = True,
) -> AsyncIterator[Cluster]:
    """Berth's Kubernetes runtime and loop over the fake API server (``nodes``: watch Nodes
    and Pods too; ``taint_nodes``: the BERTH_TAINT_NODES setting; ``leading``: take the
    leader Lease first, as serve's runner does before its loop runs)."""
    tree = Settings(kube=ClusterSettings(taint_nodes=taint_nodes))
    settings = kube_settings(tree, host=fake_api.url, nodes=nodes, status_seconds=0.2)
    runtime = await start_kubernetes(settings, sessions, lambda: None)
    try:
        async with asyncio.timeout(10):
            await runtime.wait_synced()
        if leading:
            assert await runtime.leadership().acquire(), "the leader Lease was not taken"
        loop = AdmissionLoop(sessions, runtime.actuator)
        await loop.begin()
        yield Cluster(kubectl, runtime, loop)
    finally:
        await runtime.stop()


def workload_state(sessions: SessionScope, name: str) -> WorkloadState | None:
    with sessions() as session:
        found = Ledger(session).get_workload(NS, name)
    return None if found is None else found.state


def running(j: dict[str, Any]) -> bool:
    return not j["spec"].get("suspend")
