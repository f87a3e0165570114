"""waitForPodsReady in Kubernetes mode, against the fake apiserver and a real PostgreSQL:
the Pod watcher counts a workload's Ready pods into the ledger, the loop times out one
whose pods never all become Ready, suspends it, requeues it with backoff and deactivates
it past the limit; ``berth why`` shows each step. Each case runs for a batch/v1 Job of
parallelism 8 and for a JobSet of 2 replicated jobs × 4 pods, whose pods carry the JobSet
controller's labels (and their own Job's name)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from builders import frameworks, manifests
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import JOBS, NS, setup_queues
from builders.served import served

from admission.kube.jobs import SessionScope
from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.job import JOB
from admission.kube.kinds.jobset import JOBSET
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


@dataclass(frozen=True)
class Kind:
    """A workload of 8 one-GPU pods and the pods its controllers make for it."""

    adapter: Adapter
    where: str  # its collection
    manifest: Callable[[str], dict[str, Any]]
    pod_of: Callable[[str, int], tuple[str, dict[str, str], dict[str, str]]]  # name, labels, owner


def eight_pods(name: str) -> dict[str, Any]:
    return manifests.job(name, 1, namespace=None, suspend=True, pods=8,
                         nodeSelector={"zone": "a"})  # fmt: skip


def job_pod(job: str, index: int) -> tuple[str, dict[str, str], dict[str, str]]:
    return f"{job}-{index}", {"job-name": job}, {"apiVersion": "batch/v1", "kind": "Job",
                                                 "name": job}  # fmt: skip


def two_by_four(name: str) -> dict[str, Any]:
    job = {"parallelism": 4, "completions": 4, "template": frameworks.pod_template(gpus=1)}
    jobs = [{"name": n, "replicas": 1, "template": {"spec": job}} for n in ("a", "b")]
    return {"apiVersion": JOBSET.api_version, "kind": "JobSet",
            "metadata": {"name": name, "labels": {"kueue.x-k8s.io/queue-name": "main"}},
            "spec": {"suspend": True, "replicatedJobs": jobs}}  # fmt: skip


def jobset_pod(jobset: str, index: int) -> tuple[str, dict[str, str], dict[str, str]]:
    """As the JobSet controller makes them: Job ``<jobset>-<replicatedJob>-0``, its pods
    labelled with the JobSet, the replicated job and their own Job."""
    replicated = "ab"[index // 4]
    job = f"{jobset}-{replicated}-0"
    labels = {"jobset.sigs.k8s.io/jobset-name": jobset,
              "jobset.sigs.k8s.io/replicatedjob-name": replicated, "job-name": job}  # fmt: skip
    return f"{job}-{index % 4}", labels, {"apiVersion": "batch/v1", "kind": "Job", "name": job}


KINDS = [
    pytest.param(Kind(JOB, JOBS, eight_pods, job_pod), id="Job of 8 pods"),
    pytest.param(Kind(JOBSET, frameworks.collection(JOBSET), two_by_four, jobset_pod),
                 id="JobSet of 2 replicated jobs x 4 pods"),
]


class Clock:
    """The loop's clock: real time plus however far the test moved it on."""

    def __init__(self) -> None:
        self.ahead = timedelta(0)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.ahead


class World:
    def __init__(self, kubectl: FakeKubectl, sessions: SessionScope, loop: AdmissionLoop,
                 clock: Clock, kind: Kind) -> None:  # fmt: skip
        self.kubectl, self.sessions, self.loop, self.clock = kubectl, sessions, loop, clock
        self.kind = kind

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

    def create(self, name: str) -> None:
        self.kubectl.create(self.kind.where, self.kind.manifest(name))

    def running(self, name: str) -> bool:
        return not self.kind.adapter.is_suspended(self.kubectl.get(f"{self.kind.where}/{name}"))

    def pod(self, workload: str, index: int) -> str:
        return self.kind.pod_of(workload, index)[0]

    def pods(self, workload: str, count: int, *, ready: int) -> None:
        """``count`` pods of ``workload`` bound to a node, the first ``ready`` of them Ready."""
        for index in range(count):
            name, labels, owner = self.kind.pod_of(workload, index)
            self.kubectl.create(PODS, {
                "metadata": {"name": name, "labels": labels,
                             "ownerReferences": [{**owner, "controller": True}]},
                "spec": {"nodeName": "gpu-1", "containers": [{"name": "train", "image": "t"}]},
            })  # fmt: skip
            self.ready(name, index < ready)

    def ready(self, pod: str, ready: bool = True) -> None:
        self.kubectl.patch(f"{PODS}/{pod}/status", {"status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}})  # fmt: skip

    def delete_pods(self, workload: str, count: int) -> None:
        """What the controllers do when Berth suspends the workload."""
        for index in range(count):
            self.kubectl.delete(f"{PODS}/{self.pod(workload, index)}")


@contextlib.asynccontextmanager
async def berth(fake_api: FakeApiServer, kubectl: FakeKubectl,
                sessions: SessionScope, kind: Kind) -> AsyncIterator[World]:  # fmt: skip
    settings = kube_settings(Settings(pods_ready=POLICY), host=fake_api.url, nodes=False,
                             status_seconds=0.2)  # fmt: skip
    runtime = await start_kubernetes(settings, sessions, lambda: None)
    try:
        async with asyncio.timeout(10):
            await runtime.wait_synced()
        clock = Clock()
        loop = AdmissionLoop(sessions, runtime.actuator, clock=clock, pods_ready=POLICY)
        await loop.begin()
        yield World(kubectl, sessions, loop, clock, kind)
    finally:
        await runtime.stop()


@pytest.mark.parametrize("kind", KINDS)
async def test_pods_all_ready_in_time_are_recorded_and_never_evicted(
    kind: Kind, fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    frameworks.install(with_crds)
    setup_queues(with_crds)
    async with berth(fake_api, with_crds, sessions, kind) as world:
        world.create("train")
        await world.until(lambda: world.running("train"))
        world.pods("train", 8, ready=7)
        last = world.pod("train", 7)
        await world.until(lambda: last in str(world.kubectl.get(f"{PODS}/{last}")))
        await world.loop.cycle()
        assert world.row("train").readiness == "WaitForStart"  # 7 of 8 is not all

        world.ready(last)
        await world.until(lambda: world.row("train").readiness == "PodsReady")
        world.clock.ahead = timedelta(hours=1)  # long past the timeout
        await world.loop.cycle()
        assert (world.row("train").state, world.running("train")) == ("Admitted", True)
        assert world.row("train").requeue_count == 0

        world.kubectl.delete(f"{PODS}/{world.pod('train', 3)}")  # lost: the recovery wait
        await world.until(lambda: world.row("train").readiness == "WaitForRecovery")


@pytest.mark.parametrize("kind", KINDS)
async def test_never_ready_is_evicted_requeued_with_backoff_and_deactivated(
    kind: Kind, fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope,
    db_url: str,
) -> None:  # fmt: skip
    frameworks.install(with_crds)
    setup_queues(with_crds)
    async with berth(fake_api, with_crds, sessions, kind) as world:
        world.create("stuck")
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
