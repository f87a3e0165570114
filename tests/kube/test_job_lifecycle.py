"""A Job's life against the fake API server's Job rules, with the real kubernetes-asyncio
client, the admission loop and a real PostgreSQL: a started Job is evicted the way the API
server allows and admitted again elsewhere; a Job recreated under the same name while Berth
was away is a new workload."""

from __future__ import annotations

from typing import Any

from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import BERTH, JOBS, NS, berth, job, running, setup_queues

from admission.kube import templates
from admission.kube.jobs import SessionScope
from quota.core.workload import WorkloadState
from quota.ledger.repository import Ledger


def started_at(j: dict[str, Any]) -> str | None:
    return (j.get("status") or {}).get("startTime")


def add_a100(kubectl: FakeKubectl) -> None:
    """A second flavor, a100, behind h100 in the ClusterQueue (8 GPUs each)."""
    kubectl.create(
        f"{BERTH}/resourceflavors", {"metadata": {"name": "a100"}, "spec": {"nodeLabels": {"gpu": "a100"}}}
    )
    flavors = [{"name": f, "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]}
               for f in ("h100", "a100")]  # fmt: skip
    groups = [{"coveredResources": ["nvidia.com/gpu"], "flavors": flavors}]
    kubectl.patch(f"{BERTH}/clusterqueues/team-a", {"spec": {"resourceGroups": groups}})


async def test_a_started_job_is_evicted_step_by_step_and_admitted_into_another_flavor(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds, preemption="LowerPriority")
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("low", 8))
        await cluster.until(lambda: running(cluster.job("low")))
        assert started_at(cluster.job("low")) is not None  # the Job controller started it
        assert cluster.job("low")["spec"]["template"]["spec"]["nodeSelector"]["gpu"] == "h100"

        with_crds.create(JOBS, job("high", 8, priority="high"))
        await cluster.until(lambda: running(cluster.job("high")))
        low = cluster.job("low")
        assert templates.is_suspended(low) and started_at(low) is None
        assert low["spec"]["template"]["spec"]["nodeSelector"] == {"zone": "a"}
        assert "tolerations" not in low["spec"]["template"]["spec"]
        assert templates.ORIGINAL_TEMPLATE not in templates.annotations_of(low)

        # Room in another flavor: re-admission steers the template again, which the API
        # server allows only because the eviction cleared startTime.
        add_a100(with_crds)
        await cluster.until(lambda: running(cluster.job("low")))
        low = cluster.job("low")
        assert low["spec"]["template"]["spec"]["nodeSelector"] == {"zone": "a", "gpu": "a100"}
        assert started_at(low) is not None


async def test_a_job_recreated_under_its_name_while_berth_was_away_is_a_new_workload(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("train", 8))
        await cluster.until(lambda: running(cluster.job("train")))
        first_uid = cluster.job("train")["metadata"]["uid"]
    # Berth is not watching: the Job goes and another one takes its name, asking less.
    with_crds.delete(f"{JOBS}/train")
    second_uid = with_crds.create(JOBS, job("train", 2))["metadata"]["uid"]
    assert second_uid != first_uid
    async with berth(fake_api, with_crds, sessions) as cluster:
        await cluster.until(lambda: running(cluster.job("train")))
        with sessions() as session:
            workload = Ledger(session).get_workload(NS, "train")
        assert workload is not None and workload.state == WorkloadState.ADMITTED
        assert workload.annotations[templates.JOB_UID] == second_uid
        # The old Job's 8 GPUs were given back: only the new Job's 2 are in use.
        await cluster.until(lambda: gpus_in_use(with_crds) == "2")


def gpus_in_use(kubectl: FakeKubectl) -> str | None:
    status = kubectl.get(f"{BERTH}/clusterqueues/team-a").get("status") or {}
    for flavor in status.get("flavorsUsage") or []:
        for resource in flavor["resources"]:
            if resource["name"] == "nvidia.com/gpu":
                return str(resource["total"])
    return None
