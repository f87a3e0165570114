"""Every workload kind Berth queues, one life each against the fake API server (with each
framework's CRD registered as its project installs it), the real kubernetes-asyncio client,
the admission loop and a real PostgreSQL: created with the queue label it stays suspended
until admitted; admission resumes it with the flavor in every pod template; a second one
over quota waits, saying why; the first finishing (as its controller reports it) lets the
second start; a higher-priority third preempts the second, which is suspended with its
templates given back."""

from __future__ import annotations

from typing import Any

import pytest
from builders import frameworks
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import NS, berth, setup_queues, workload_state
from builders.waiting import eventually

from admission.kube import templates
from admission.kube.jobs import SessionScope
from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.job import JOB
from admission.kube.kinds.jobset import JOBSET
from admission.kube.kinds.registry import SUSPENDED
from quota.core.workload import WorkloadState

H100_TOLERATION = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}


def events_about(kubectl: FakeKubectl, name: str) -> list[str]:
    listing = kubectl.get(f"/api/v1/namespaces/{NS}/events")
    return [e["reason"] for e in listing["items"] if e["involvedObject"]["name"] == name]


@pytest.mark.parametrize("adapter", [pytest.param(a, id=a.kind) for a in SUSPENDED])
async def test_a_kind_is_queued_admitted_into_its_flavor_released_and_preempted(
    adapter: Adapter, fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    kubectl = with_crds
    frameworks.install(kubectl)
    setup_queues(kubectl, preemption="LowerPriority")
    where = frameworks.collection(adapter)

    def get(name: str) -> dict[str, Any]:
        return kubectl.get(f"{where}/{name}")

    def running(name: str) -> bool:
        return not adapter.is_suspended(get(name))

    async with berth(fake_api, kubectl, sessions) as cluster:
        kubectl.create(where, frameworks.workload(adapter, "first"))
        # Recorded by the watcher, before any admission cycle: still suspended.
        await eventually(lambda: workload_state(sessions, "first") is not None, what="recorded")
        assert adapter.is_suspended(get("first"))
        await cluster.until(lambda: running("first"))
        pods = frameworks.templates_of(adapter, get("first"))
        assert len(pods) == (1 if adapter.kind == "Job" else 2)
        for pod in pods:  # every pod template steered to the flavor, its own selector kept
            assert pod["nodeSelector"] == {"zone": "a", "gpu": "h100"}
            assert pod["tolerations"] == [H100_TOLERATION]

        kubectl.create(where, frameworks.workload(adapter, "second"))
        await cluster.until(
            lambda: templates.WAIT_REASON in templates.annotations_of(get("second"))
        )
        assert templates.annotations_of(get("second"))[templates.WAIT_REASON] == "WaitingForQuota"
        assert "WaitingForQuota" in events_about(kubectl, "second")
        assert adapter.is_suspended(get("second"))

        frameworks.finish(kubectl, adapter, "first")
        await cluster.until(lambda: running("second"))
        assert workload_state(sessions, "first") == WorkloadState.FINISHED

        kubectl.create(where, frameworks.workload(adapter, "third", priority="high"))
        await cluster.until(lambda: running("third"))
        second = get("second")
        assert adapter.is_suspended(second)
        assert templates.ORIGINAL_TEMPLATE not in templates.annotations_of(second)
        for pod in frameworks.templates_of(adapter, second):
            assert pod["nodeSelector"] == {"zone": "a"} and "tolerations" not in pod
        assert "Evicted" in events_about(kubectl, "second")


@pytest.mark.parametrize("adapter", [pytest.param(a, id=a.kind) for a in SUSPENDED])
async def test_a_kind_created_unsuspended_is_suspended_until_admitted(
    adapter: Adapter, fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    kubectl = with_crds
    frameworks.install(kubectl)
    setup_queues(kubectl)
    where = frameworks.collection(adapter)
    async with berth(fake_api, kubectl, sessions) as cluster:
        kubectl.create(where, frameworks.workload(adapter, "eager", suspend=False))
        await cluster.until(lambda: "Suspended" in events_about(kubectl, "eager"))
        await cluster.until(lambda: not adapter.is_suspended(kubectl.get(f"{where}/eager")))
        for pod in frameworks.templates_of(adapter, kubectl.get(f"{where}/eager")):
            assert pod["nodeSelector"]["gpu"] == "h100"


async def test_a_jobsets_own_jobs_are_left_to_it_and_a_name_belongs_to_one_kind(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    kubectl = with_crds
    frameworks.install(kubectl)
    setup_queues(kubectl)
    jobs = frameworks.collection(JOB)
    async with berth(fake_api, kubectl, sessions) as cluster:
        created = kubectl.create(frameworks.collection(JOBSET), frameworks.workload(JOBSET, "train"))
        await cluster.until(lambda: workload_state(sessions, "train") == WorkloadState.ADMITTED)
        # The JobSet controller's Job carries the JobSet's labels and runs at once.
        owner = {"apiVersion": JOBSET.api_version, "kind": "JobSet", "name": "train",
                 "uid": created["metadata"]["uid"], "controller": True}  # fmt: skip
        child = frameworks.workload(JOB, "train-a-0", suspend=False)
        child["metadata"]["ownerReferences"] = [owner]
        kubectl.create(jobs, child)
        # A Job of the user's own under the JobSet's name cannot have its workload.
        kubectl.create(jobs, frameworks.workload(JOB, "train"))
        await cluster.until(lambda: "InvalidJob" in events_about(kubectl, "train"))
        await cluster.loop.cycle()
        assert not JOB.is_suspended(kubectl.get(f"{jobs}/train-a-0"))
        assert workload_state(sessions, "train-a-0") is None
        assert JOB.is_suspended(kubectl.get(f"{jobs}/train"))
        with_kind = [e for e in kubectl.get(f"/api/v1/namespaces/{NS}/events")["items"]
                     if e["reason"] == "InvalidJob"]  # fmt: skip
        assert "taken by the unfinished workload of JobSet" in with_kind[0]["message"]


async def test_a_framework_without_its_crd_is_not_watched(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    setup_queues(with_crds)
    with_crds.create(frameworks.CRDS, frameworks.crd(JOBSET))
    async with berth(fake_api, with_crds, sessions) as cluster:
        watched = set(cluster.runtime.informers)
    assert {"Job", "JobSet"} <= watched
    assert not watched & {a.kind for a in SUSPENDED if a not in (JOB, JOBSET)}
