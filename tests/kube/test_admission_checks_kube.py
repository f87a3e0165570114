"""Admission checks in Kubernetes mode, against the fake apiserver: a Job whose queue has
an external check stays suspended while its workload only reserves quota, even when
someone unsuspends it, and runs once the check's controller answers Ready over REST."""

from __future__ import annotations

from datetime import UTC, datetime

from builders import frameworks
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import BERTH, JOBS, NS, berth, job, running, setup_queues, workload_state

from admission.kube.jobs import SessionScope
from admission.kube.kinds.jobset import JOBSET
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
        # Kueue's counts: the reservation reserves quota but is not admitted yet.
        await cluster.until(lambda: _counts(with_crds) == (1, 0))
        with_crds.patch(f"{JOBS}/train", {"spec": {"suspend": False}})  # someone starts it
        await cluster.until(lambda: not running(cluster.job("train")))
        with sessions() as session:
            set_check_state(session, NS, "train", "capacity", state=CheckState.READY,
                            message="", requeue_after=None, now=datetime.now(UTC),
                            actor="test")
        await cluster.until(lambda: running(cluster.job("train")))
        assert workload_state(sessions, "train") is WorkloadState.ADMITTED
        await cluster.until(lambda: _counts(with_crds) == (1, 1))


def _counts(kubectl: FakeKubectl) -> tuple[int, int] | None:
    """``(reservingWorkloads, admittedWorkloads)`` of ClusterQueue team-a and LocalQueue
    main when both say the same; ``None`` until they do."""
    found = [kubectl.get(path).get("status") or {} for path in (
        f"{BERTH}/clusterqueues/team-a", f"{BERTH}/namespaces/{NS}/localqueues/main")]
    pairs = {(s.get("reservingWorkloads"), s.get("admittedWorkloads")) for s in found}
    return pairs.pop() if len(pairs) == 1 else None


PROVISIONING_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "provisioningrequests.autoscaling.x-k8s.io"},
    "spec": {"group": "autoscaling.x-k8s.io", "scope": "Namespaced",
             "names": {"kind": "ProvisioningRequest", "plural": "provisioningrequests",
                       "singular": "provisioningrequest"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {
                               "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
}
REQUESTS = f"/apis/autoscaling.x-k8s.io/v1/namespaces/{NS}/provisioningrequests"


def _provisioned(kubectl: FakeKubectl, name: str, kind: str, message: str) -> None:
    condition = {"type": kind, "status": "True", "reason": kind, "message": message,
                 "lastTransitionTime": "2026-12-01T00:00:00Z"}
    kubectl.patch(f"{REQUESTS}/{name}/status", {"status": {"conditions": [condition]}})


def _with_provisioning(kubectl: FakeKubectl) -> None:
    setup_queues(kubectl)
    kubectl.create("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", PROVISIONING_CRD)
    kubectl.create(f"{BERTH}/provisioningrequestconfigs", {
        "metadata": {"name": "gpus"},
        "spec": {"provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
                 "managedResources": ["nvidia.com/gpu"],
                 "retryStrategy": {"backoffLimitCount": 1, "backoffBaseSeconds": 0}}})
    kubectl.create(f"{BERTH}/admissionchecks", {
        "metadata": {"name": "prov"},
        "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                 "parameters": {"apiGroup": "kueue.x-k8s.io",
                                "kind": "ProvisioningRequestConfig", "name": "gpus"}}})
    kubectl.patch(f"{BERTH}/clusterqueues/team-a", {"spec": {"admissionChecks": ["prov"]}})


def _exists(kubectl: FakeKubectl, path: str) -> bool:
    return kubectl.request("GET", path).status_code == 200


async def test_a_provisioned_request_admits_the_job_onto_the_booked_capacity(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    _with_provisioning(with_crds)
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("train", 4))
        await cluster.until(lambda: _exists(with_crds, f"{REQUESTS}/train-prov-1"))
        request = with_crds.get(f"{REQUESTS}/train-prov-1")
        assert request["spec"]["provisioningClassName"] == "check-capacity.autoscaling.x-k8s.io"
        assert request["spec"]["podSets"] == [
            {"podTemplateRef": {"name": "ppt-train-prov-1-main"}, "count": 1}]
        owner = request["metadata"]["ownerReferences"][0]
        assert (owner["kind"], owner["name"]) == ("Job", "train")
        template = with_crds.get(f"/api/v1/namespaces/{NS}/podtemplates/ppt-train-prov-1-main")
        requests = template["template"]["spec"]["containers"][0]["resources"]
        assert set(requests.get("requests", requests.get("limits", {}))) == {"nvidia.com/gpu"}
        assert not running(cluster.job("train"))

        _provisioned(with_crds, "train-prov-1", "Provisioned", "booked")
        await cluster.until(lambda: running(cluster.job("train")))
        annotations = cluster.job("train")["spec"]["template"]["metadata"]["annotations"]
        assert annotations["autoscaling.x-k8s.io/consume-provisioning-request"] == "train-prov-1"
        assert annotations["autoscaling.x-k8s.io/provisioning-class-name"] == (
            "check-capacity.autoscaling.x-k8s.io")

        with_crds.delete(f"{JOBS}/train")  # finished work gives its request back
        await cluster.until(lambda: not _exists(with_crds, f"{REQUESTS}/train-prov-1"))


async def test_a_failed_request_is_retried_then_rejects_the_workload(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    _with_provisioning(with_crds)
    async with berth(fake_api, with_crds, sessions) as cluster:
        with_crds.create(JOBS, job("train", 4))
        await cluster.until(lambda: _exists(with_crds, f"{REQUESTS}/train-prov-1"))
        _provisioned(with_crds, "train-prov-1", "Failed", "out of stock")
        await cluster.until(lambda: _exists(with_crds, f"{REQUESTS}/train-prov-2"))
        _provisioned(with_crds, "train-prov-2", "Failed", "still out of stock")
        await cluster.until(lambda: workload_state(sessions, "train")
                            is WorkloadState.DEACTIVATED)
        assert not running(cluster.job("train"))


async def test_identical_pod_sets_are_asked_for_as_one_pod_template(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    _with_provisioning(with_crds)
    frameworks.install(with_crds)
    with_crds.patch(f"{BERTH}/provisioningrequestconfigs/gpus",
                    {"spec": {"podSetMergePolicy": "IdenticalPodTemplates"}})
    async with berth(fake_api, with_crds, sessions) as cluster:
        # A JobSet of two replicatedJobs of the same template: two pod sets, one each.
        with_crds.create(frameworks.collection(JOBSET), frameworks.workload(JOBSET, "pair"))
        await cluster.until(lambda: _exists(with_crds, f"{REQUESTS}/pair-prov-1"))
        request = with_crds.get(f"{REQUESTS}/pair-prov-1")
        assert request["spec"]["podSets"] == [
            {"podTemplateRef": {"name": "ppt-pair-prov-1-a"}, "count": 2}]
        templates = with_crds.get(f"/api/v1/namespaces/{NS}/podtemplates")["items"]
        assert [t["metadata"]["name"] for t in templates] == ["ppt-pair-prov-1-a"]


def _gpus(kubectl: FakeKubectl, name: str) -> dict[str, str]:
    template = kubectl.get(f"/api/v1/namespaces/{NS}/podtemplates/{name}")
    resources = template["template"]["spec"]["containers"][0]["resources"]
    return dict(resources.get("requests") or resources.get("limits") or {})


async def test_a_jobsets_replicated_jobs_are_each_asked_for_and_booked(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    _with_provisioning(with_crds)
    frameworks.install(with_crds)
    jobset = frameworks.workload(JOBSET, "train")
    # Replicated job b asks for two GPUs: a template of its own.
    jobset["spec"]["replicatedJobs"][1]["template"]["spec"]["template"] = frameworks.pod_template(2)
    where = f"{frameworks.collection(JOBSET)}/train"
    async with berth(fake_api, with_crds, sessions) as cluster:
        created = with_crds.create(frameworks.collection(JOBSET), jobset)
        await cluster.until(lambda: _exists(with_crds, f"{REQUESTS}/train-prov-1"))
        request = with_crds.get(f"{REQUESTS}/train-prov-1")
        assert request["spec"]["podSets"] == [
            {"podTemplateRef": {"name": "ppt-train-prov-1-a"}, "count": 1},
            {"podTemplateRef": {"name": "ppt-train-prov-1-b"}, "count": 1}]
        assert _gpus(with_crds, "ppt-train-prov-1-a") == {"nvidia.com/gpu": "4"}
        assert _gpus(with_crds, "ppt-train-prov-1-b") == {"nvidia.com/gpu": "2"}
        for path in (f"{REQUESTS}/train-prov-1",
                     f"/api/v1/namespaces/{NS}/podtemplates/ppt-train-prov-1-b"):
            owner = with_crds.get(path)["metadata"]["ownerReferences"][0]
            assert (owner["apiVersion"], owner["kind"], owner["name"], owner["uid"]) == (
                JOBSET.api_version, "JobSet", "train", created["metadata"]["uid"])
        assert with_crds.get(where)["spec"]["suspend"] is True

        _provisioned(with_crds, "train-prov-1", "Provisioned", "booked")
        await cluster.until(lambda: with_crds.get(where)["spec"]["suspend"] is False)
        for job in with_crds.get(where)["spec"]["replicatedJobs"]:
            annotations = job["template"]["spec"]["template"]["metadata"]["annotations"]
            assert annotations == {
                "autoscaling.x-k8s.io/consume-provisioning-request": "train-prov-1",
                "autoscaling.x-k8s.io/provisioning-class-name":
                    "check-capacity.autoscaling.x-k8s.io"}, job["name"]


async def test_only_the_leader_asks_for_capacity(
    fake_api: FakeApiServer, with_crds: FakeKubectl, sessions: SessionScope
) -> None:
    _with_provisioning(with_crds)
    async with berth(fake_api, with_crds, sessions, leading=False) as follower:
        with_crds.create(JOBS, job("train", 4))
        await follower.until(lambda: workload_state(sessions, "train")
                             is WorkloadState.QUOTA_RESERVED)
        provisioning = follower.runtime.provisioning
        assert provisioning is not None
        assert not await provisioning.tick()  # no Lease: the follower leaves it alone
        assert not _exists(with_crds, f"{REQUESTS}/train-prov-1")

        assert await follower.runtime.leadership().acquire()  # it becomes the leader
        assert await provisioning.tick()
        assert _exists(with_crds, f"{REQUESTS}/train-prov-1")
