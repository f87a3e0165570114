"""Admission checks in Kubernetes mode, against the fake apiserver: a Job whose queue has
an external check stays suspended while its workload only reserves quota, even when
someone unsuspends it, and runs once the check's controller answers Ready over REST."""

from __future__ import annotations

from datetime import UTC, datetime

from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import BERTH, JOBS, NS, berth, job, running, setup_queues, workload_state

from admission.kube.jobs import SessionScope
from quota.core.checks import CheckState
from quota.core.workload import WorkloadState
from quota.ledger.check_states import set_check_state


async def test_a_reserved_job_stays_suspended_until_its_check_is_ready(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    with_crds.create(f"{BERTH}/admissionchecks", {
        "metadata": {"name": "capacity"}, "spec": {"controllerName": "example.com/capacity"}})
    with_crds.patch(f"{BERTH}/clusterqueues/team-a", {"spec": {"admissionChecks": ["capacity"]}})
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("train", 4))
        await cluster.until(lambda: workload_state(sessions, "train")
                            is WorkloadState.QUOTA_RESERVED)
        assert not running(cluster.job("train"))
        with_crds.patch(f"{JOBS}/train", {"spec": {"suspend": False}})  # someone starts it
        await cluster.until(lambda: not running(cluster.job("train")))
        with sessions() as session:
            set_check_state(session, NS, "train", "capacity", state=CheckState.READY,
                            message="", requeue_after=None, now=datetime.now(UTC),
                            actor="test")
        await cluster.until(lambda: running(cluster.job("train")))
        assert workload_state(sessions, "train") is WorkloadState.ADMITTED
