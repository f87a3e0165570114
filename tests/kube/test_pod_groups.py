"""Plain Pods and pod groups against the fake API server's Pod rules, with the real
kubernetes-asyncio client, the admission loop and a real PostgreSQL: a group becomes a
workload once all its pods exist; admission ungates every pod with the flavor added; a
group over quota waits, saying why on its pods; a labelled Pod alone is a group of one;
eviction deletes the group's pods."""

from __future__ import annotations

from typing import Any

from builders import frameworks
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import NS, berth, setup_queues, workload_state
from builders.waiting import eventually

from admission.kube import templates
from admission.kube.jobs import SessionScope
from admission.kube.kinds.pod import POD
from quota.core.workload import WorkloadState

PODS = f"/api/v1/namespaces/{NS}/pods"
H100_TOLERATION = {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}


def events_about(kubectl: FakeKubectl, name: str) -> list[str]:
    listing = kubectl.get(f"/api/v1/namespaces/{NS}/events")
    return [e["reason"] for e in listing["items"] if e["involvedObject"]["name"] == name]


async def test_a_pod_group_waits_for_its_pods_is_ungated_together_and_evicted_by_deletion(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    kubectl = with_crds
    setup_queues(kubectl, preemption="LowerPriority")

    def pod(name: str) -> dict[str, Any]:
        return kubectl.get(f"{PODS}/{name}")

    def names() -> set[str]:
        return {p["metadata"]["name"] for p in kubectl.get(PODS)["items"]}

    async with berth(fake_api, kubectl, sessions) as cluster:
        kubectl.create(PODS, frameworks.pod("first-0", "first", 2))
        kubectl.create(PODS, frameworks.pod("solo"))  # a group of one, seen after first-0
        await eventually(lambda: workload_state(sessions, "solo") is not None, what="solo")
        assert workload_state(sessions, "first") is None  # one of its two pods only
        await cluster.until(lambda: not POD.is_suspended(pod("solo")))
        assert pod("solo")["spec"]["nodeSelector"] == {"zone": "a", "gpu": "h100"}
        assert pod("solo")["spec"]["tolerations"] == [H100_TOLERATION]

        kubectl.create(PODS, frameworks.pod("first-1", "first", 2))
        await cluster.until(
            lambda: templates.WAIT_REASON in templates.annotations_of(pod("first-1"))
        )
        assert templates.annotations_of(pod("first-0"))[templates.WAIT_REASON] == "WaitingForQuota"
        assert "WaitingForQuota" in events_about(kubectl, "first-0")

        kubectl.patch(f"{PODS}/solo/status", {"status": {"phase": "Succeeded"}})
        await cluster.until(lambda: not POD.is_suspended(pod("first-0")))
        assert not POD.is_suspended(pod("first-1"))
        assert workload_state(sessions, "solo") == WorkloadState.FINISHED
        for name in ("first-0", "first-1"):
            assert pod(name)["spec"]["nodeSelector"] == {"zone": "a", "gpu": "h100"}

        for name in ("urgent-0", "urgent-1"):
            kubectl.create(PODS, frameworks.pod(name, "urgent", 2, priority="high"))
        await cluster.until(lambda: "urgent-0" in names() and not POD.is_suspended(pod("urgent-0")))
        assert not {"first-0", "first-1"} & names()  # a Pod cannot be suspended: deleted
        assert "Evicted" in events_about(kubectl, "first-0")
        await eventually(lambda: workload_state(sessions, "first") == WorkloadState.FINISHED,
                         what="the deleted group's workload ends")  # fmt: skip
