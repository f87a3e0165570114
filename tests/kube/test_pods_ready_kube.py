"""waitForPodsReady in Kubernetes mode, against the fake apiserver and a real PostgreSQL:
the Pod watcher counts a Job's Ready pods into the ledger, the loop times out a Job whose
pods never all become Ready, suspends it, requeues it with backoff and deactivates it past
the limit; ``berth why`` shows each step. (The issue's case is a JobSet of 2 replicated
jobs × 4 pods; this is the same with a batch/v1 Job of parallelism 8.)"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from builders import manifests
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import JOBS, NS, running, setup_queues
from builders.served import served

from admission.kube.jobs import SessionScope
from admission.kube.runtime import start_kubernetes
from admission.loop.loop import AdmissionLoop
from berth.cli import why as why_cli
from berth.serve import kube_settings
from berth.settings import Settings
from quota.core.pods_ready import PodsReadyPolicy
from quota.ledger.repository import Ledger

pytestmark = pytest.mark.db

PODS = f"/api/v1/namespaces/{NS}/pods"
POLICY = PodsReadyPolicy(enable=True, timeout=timedelta(minutes=5), backoff_limit_count=2)


class Clock:
    """The loop's clock: real time plus however far the test moved it on."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.ahead


class World:
    def __init__(self, kubectl: FakeKubectl, sessions: SessionScope, loop: AdmissionLoop,
                 clock: Clock) -> None:  # fmt: skip
        self.kubectl, self.sessions, self.loop, self.clock = kubectl, sessions, loop, clock

    async def until(self, check: Callable[[], bool], seconds: float = 15) -> None:
        async with asyncio.timeout(seconds):
            while not check():
                await self.loop.cycle()
                await asyncio.sleep(0.05)

    def row(self, name: str) -> Any:
        with self.sessions() as session:
            return Ledger(session).get_workload(NS, name)

    def reason(self, name: str) -> str | None:
        with self.sessions() as session:
            code: str | None = session.execute(sa.text(
                "SELECT reason_code FROM workloads WHERE namespace = :ns AND name = :name "
                "ORDER BY id DESC LIMIT 1"), {"ns": NS, "name": name}).scalar_one()
        return code

    def running(self, name: str) -> bool:
        return running(self.kubectl.get(f"{JOBS}/{name}"))

    def pods(self, job: str, count: int, *, ready: int) -> None:
        """``count`` pods of ``job`` bound to a node, the first ``ready`` of them Ready."""
        for index in range(count):
            name = f"{job}-{index}"
            self.kubectl.create(PODS, {
                "metadata": {"name": name, "labels": {"job-name": job}, "ownerReferences": [
                    {"apiVersion": "batch/v1", "kind": "Job", "name": job, "controller": True}]},
                "spec": {"nodeName": "gpu-1", "containers": [{"name": "train", "image": "t"}]},
            })  # fmt: skip
            status = "True" if index < ready else "False"
            self.kubectl.patch(f"{PODS}/{name}/status", {"status": {
                "phase": "Running", "conditions": [{"type": "Ready", "status": status}]}})

    def delete_pods(self, job: str, count: int) -> None:
        """What the Job controller does when Berth suspends the Job."""
        for index in range(count):
            self.kubectl.delete(f"{PODS}/{job}-{index}")


@contextlib.asynccontextmanager
async def berth(fake_api: FakeApiServer, kubectl: FakeKubectl,
                sessions: SessionScope) -> AsyncIterator[World]:  # fmt: skip
    settings = kube_settings(Settings(pods_ready=POLICY), host=fake_api.url, nodes=False,
                             status_seconds=0.2)  # fmt: skip
    runtime = await start_kubernetes(settings, sessions, lambda: None)
    try:
        async with asyncio.timeout(10):
            await runtime.wait_synced()
        clock = Clock()
        loop = AdmissionLoop(sessions, runtime.actuator, clock=clock, pods_ready=POLICY)
        await loop.begin()
        yield World(kubectl, sessions, loop, clock)
    finally:
        await runtime.stop()


def eight_pods(name: str) -> dict[str, Any]:
    return manifests.job(name, 1, namespace=None, suspend=True, pods=8,
                         nodeSelector={"zone": "a"})  # fmt: skip


async def test_pods_all_ready_are_recorded_and_a_lost_pod_starts_the_recovery_wait(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    async with berth(fake_api, with_crds, sessions) as world:
        with_crds.create(JOBS, eight_pods("train"))
        await world.until(lambda: world.running("train"))
        world.pods("train", 8, ready=7)
        await world.until(lambda: "train-7" in str(world.kubectl.get(f"{PODS}/train-7")))
        assert world.row("train").readiness == "WaitForStart"  # 7 of 8 is not all

        world.kubectl.patch(f"{PODS}/train-7/status", {"status": {
            "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
        await world.until(lambda: world.row("train").readiness == "PodsReady")
        world.clock.ahead = timedelta(hours=1)
        await world.loop.cycle()
        assert (world.row("train").state, world.running("train")) == ("Admitted", True)

        world.kubectl.delete(f"{PODS}/train-3")  # a pod lost: the recovery wait starts
        await world.until(lambda: world.row("train").readiness == "WaitForRecovery")


async def test_never_ready_is_evicted_requeued_with_backoff_and_deactivated(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope, db_url: str
) -> None:
    setup_queues(with_crds)
    async with berth(fake_api, with_crds, sessions) as world:
        with_crds.create(JOBS, eight_pods("stuck"))
        await world.until(lambda: world.running("stuck"))
        admitted = world.row("stuck").admitted_at
        steps = []
        for _ in range(2):  # two timeouts, each followed by a backoff
            world.pods("stuck", 8, ready=6)
            world.clock.ahead = admitted + POLICY.timeout - datetime.now(UTC)
            await world.until(lambda: not world.running("stuck"))
            row = world.row("stuck")
            steps.append((str(row.state), row.requeue_count, row.requeue_at - row.evicted_at))
            world.delete_pods("stuck", 8)
            await world.loop.cycle()
            assert not world.running("stuck"), "admitted again before its backoff ended"
            world.clock.ahead = row.requeue_at - datetime.now(UTC)
            await world.until(lambda: world.running("stuck"))
            admitted = world.row("stuck").admitted_at
        world.pods("stuck", 8, ready=6)
        world.clock.ahead = admitted + POLICY.timeout - datetime.now(UTC)
        await world.until(lambda: not world.running("stuck"))
        # Its wait reason may need one more cycle: a pod watcher's write can make the
        # cycle's reason write stale (it is then written the cycle after).
        await world.until(lambda: world.reason("stuck") == "Deactivated")
        final = world.row("stuck")

    assert steps == [("Pending", 1, timedelta(seconds=60)), ("Pending", 2, timedelta(seconds=120))]
    assert (str(final.state), final.active, final.deactivation) == (
        "Deactivated", False, "WorkloadRequeuingLimitExceeded")

    with served(db_url) as api:
        args = argparse.Namespace(workload=f"{NS}/stuck", server=str(api.base_url))
        out = await asyncio.to_thread(_why, args)
    assert "Evicted from ClusterQueue team-a (PodsReadyTimeout, WaitForStart)" in out
    assert out.count("Requeued (PodsReadyTimeout), backoff until ") == 2
    assert "Evicted from ClusterQueue team-a (Deactivated, WorkloadRequeuingLimitExceeded)" in out
    assert "evicted 3 times (2 PodsReadyTimeout, 1 Deactivated)" in out
    assert "WaitingForPodsReady" in out
    assert out.splitlines()[-1].strip().endswith("Deactivated for 0s (still waiting)")


def _why(args: argparse.Namespace) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        assert why_cli.why(args) == 0
    return buffer.getvalue()
