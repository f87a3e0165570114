"""Berth's real kubernetes-asyncio code, the admission loop and a real PostgreSQL against the
fake apiserver: Jobs are admitted, wait with a visible reason, finish, and get preempted."""

from __future__ import annotations

import json

import pytest
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import (
    BERTH,
    JOBS,
    NS,
    berth,
    job,
    running,
    setup_queues,
    workload_state,
)

from admission.kube import templates
from admission.kube.jobs import SessionScope
from quota.core.workload import WorkloadState


async def test_admit_wait_finish_and_admit_the_next(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("first", 6))
        await cluster.until(lambda: running(cluster.job("first")))
        first = cluster.job("first")
        pod = first["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == {"zone": "a", "gpu": "h100"}
        assert pod["tolerations"] == [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
        saved = json.loads(first["metadata"]["annotations"][templates.ORIGINAL_TEMPLATE])
        assert saved == {"nodeSelector": {"zone": "a"}}

        with_crds.create(JOBS, job("second", 4))
        await cluster.until(
            lambda: templates.WAIT_REASON in templates.annotations_of(cluster.job("second"))
        )
        second = cluster.job("second")
        assert not running(second)
        annotations = templates.annotations_of(second)
        assert annotations[templates.WAIT_REASON] == "WaitingForQuota"
        assert "nvidia.com/gpu" in annotations[templates.WAIT_MESSAGE]
        reasons = [
            e["reason"]
            for e in with_crds.get(f"/api/v1/namespaces/{NS}/events")["items"]
            if e["involvedObject"]["name"] == "second"
        ]
        assert "WaitingForQuota" in reasons

        await cluster.until(
            lambda: (
                with_crds.get(f"{BERTH}/clusterqueues/team-a")
                .get("status", {})
                .get("pendingReasons")
                == {"WaitingForQuota": 1}
            )
        )
        status = with_crds.get(f"{BERTH}/clusterqueues/team-a")["status"]
        assert status["flavorsUsage"] == [
            {"name": "h100", "resources": [{"name": "nvidia.com/gpu", "total": "6"}]}
        ]

        with_crds.patch(
            f"{JOBS}/first/status",
            {"status": {"conditions": [{"type": "Complete", "status": "True"}]}},
        )
        await cluster.until(lambda: running(cluster.job("second")))
        assert workload_state(sessions, "first") == WorkloadState.FINISHED
        assert templates.WAIT_REASON not in templates.annotations_of(cluster.job("second"))


async def test_preemption_suspends_the_victim_and_restores_its_template(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds, preemption="LowerPriority")
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("low", 8))
        await cluster.until(lambda: running(cluster.job("low")))
        with_crds.create(JOBS, job("high", 8, priority="high"))
        await cluster.until(lambda: running(cluster.job("high")))
        low = cluster.job("low")
        assert not running(low)
        assert low["spec"]["template"]["spec"]["nodeSelector"] == {"zone": "a"}
        assert "tolerations" not in low["spec"]["template"]["spec"]
        assert templates.ORIGINAL_TEMPLATE not in templates.annotations_of(low)
        assert workload_state(sessions, "low") == WorkloadState.PENDING


async def test_a_job_created_unsuspended_is_suspended_and_noted(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    with_crds.create(JOBS, job("hog", 6))
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("eager", 4, suspend=False))
        await cluster.until(
            lambda: (
                templates.annotations_of(cluster.job("eager")).get(templates.WAIT_REASON)
                == "WaitingForQuota"
            )
        )
        assert not running(cluster.job("eager"))
        events = with_crds.get(f"/api/v1/namespaces/{NS}/events")["items"]
        assert any(e["reason"] == "Suspended" and e["type"] == "Warning" for e in events)


async def test_watches_recover_from_410_and_see_what_happened_meanwhile(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    async with berth(fake_api, with_crds, sessions) as cluster:
        jobs = cluster.runtime.informers["Job"]
        with_crds.create(JOBS, job("before", 2))
        await cluster.until(lambda: running(cluster.job("before")))
        assert jobs.lists == 1
        # The watch ends and, before Berth can reconnect (this test holds the event loop), a
        # Job arrives and the history is compacted: the resumed watch gets 410 Gone.
        with_crds.end_watches()
        with_crds.create(JOBS, job("during", 2))
        with_crds.compact()
        await cluster.until(lambda: running(cluster.job("during")))
        assert jobs.lists == 2


@pytest.mark.parametrize("suspend", [False, True], ids=["unsuspended Job", "suspended Job"])
def test_the_webhook_route_suspends_a_queued_job(suspend: bool) -> None:
    from fastapi.testclient import TestClient

    from api.app import create_webhook_app

    app = create_webhook_app()
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u-1", "operation": "CREATE", "object": job("j", 1, suspend=suspend)},
    }
    with TestClient(app) as client:
        answer = client.post("/mutate/batch/v1/jobs", json=review).json()
    response = answer["response"]
    assert (answer["kind"], response["uid"], response["allowed"]) == (
        "AdmissionReview",
        "u-1",
        True,
    )
    assert ("patch" in response) is not suspend
