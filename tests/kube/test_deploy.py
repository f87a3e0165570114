"""deploy/: the manifests parse, and RBAC grants exactly what admission/kube/ calls."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from builders.paths import DEPLOY

from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.registry import ADAPTERS


def documents() -> list[dict[str, Any]]:
    docs = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def find(kind: str, name: str) -> dict[str, Any]:
    return next(d for d in documents() if d["kind"] == kind and d["metadata"]["name"] == name)


def allowed(rules: list[dict[str, Any]], group: str, resource: str, verb: str) -> bool:
    return any(
        group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules
    )


@pytest.mark.parametrize(
    ("group", "resource", "verb"),
    [
        pytest.param("batch", "jobs", "watch", id="watches Jobs"),
        pytest.param("batch", "jobs", "patch", id="suspends and steers Jobs"),
        pytest.param("batch", "jobs/status", "patch", id="clears an evicted Job's startTime"),
        pytest.param("", "events", "create", id="records Events"),
        pytest.param("", "nodes", "list", id="lists Nodes"),
        pytest.param("", "nodes", "patch", id="taints Nodes out of the pool"),
        pytest.param("", "pods", "watch", id="watches Pods"),
        pytest.param("", "pods", "delete", id="deletes an evicted pod group's Pods"),
        pytest.param("berth.dev", "clusterqueues", "watch", id="watches ClusterQueues"),
        pytest.param("berth.dev", "localqueues/status", "patch", id="writes LocalQueue status"),
    ],
)
def test_cluster_role_grants_what_berth_calls(group: str, resource: str, verb: str) -> None:
    assert allowed(find("ClusterRole", "berth")["rules"], group, resource, verb)


@pytest.mark.parametrize(
    ("group", "resource", "verb"),
    [
        pytest.param("batch", "jobs", "delete", id="never deletes Jobs"),
        pytest.param("", "pods/status", "patch", id="never changes a Pod's status"),
        pytest.param("", "pods/eviction", "create", id="never evicts Pods through the API"),
        pytest.param("", "secrets", "get", id="never reads Secrets"),
        pytest.param("berth.dev", "clusterqueues", "patch", id="never changes a queue's spec"),
    ],
)
def test_cluster_role_grants_nothing_more(group: str, resource: str, verb: str) -> None:
    assert not allowed(find("ClusterRole", "berth")["rules"], group, resource, verb)


def test_leases_only_in_berths_namespace() -> None:
    role = find("Role", "berth-leader-election")
    assert role["metadata"]["namespace"] == "berth-system"
    assert allowed(role["rules"], "coordination.k8s.io", "leases", "update")


def test_two_replicas_with_the_service_account_and_the_database_secret() -> None:
    deployment = find("Deployment", "berth")
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 2 and pod["serviceAccountName"] == "berth"
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    assert env["BERTH_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == "berth-db"


def test_the_webhook_points_at_berths_route() -> None:
    (hook,) = find("MutatingWebhookConfiguration", "berth")["webhooks"]
    assert hook["clientConfig"]["service"]["path"] == "/mutate/workloads"
    assert hook["rules"][0]["operations"] == ["CREATE"]


@pytest.mark.parametrize("adapter", [pytest.param(a, id=a.kind) for a in ADAPTERS])
def test_every_kind_berth_queues_is_watched_patched_and_suspended_at_creation(
    adapter: Adapter,
) -> None:
    rules = find("ClusterRole", "berth")["rules"]
    ref = adapter.ref
    for verb in ("get", "list", "watch", "patch"):
        assert allowed(rules, ref.group, ref.plural, verb), verb
    (hook,) = find("MutatingWebhookConfiguration", "berth")["webhooks"]
    assert any(
        ref.group in rule["apiGroups"] and ref.version in rule["apiVersions"]
        and ref.plural in rule["resources"] and rule["operations"] == ["CREATE"]
        for rule in hook["rules"]
    )


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_kueues_visibility_api_is_registered_at_berths_service(version: str) -> None:
    spec = find("APIService", f"{version}.visibility.kueue.x-k8s.io")["spec"]
    assert (spec["group"], spec["version"]) == ("visibility.kueue.x-k8s.io", version)
    service = find("Service", spec["service"]["name"])
    assert service["metadata"]["namespace"] == spec["service"]["namespace"]
    assert spec["service"]["port"] in [p["port"] for p in service["spec"]["ports"]]


@pytest.mark.parametrize(
    ("role", "resource"),
    [
        pytest.param("pending-workloads-cq-viewer-role", "clusterqueues/pendingworkloads",
                     id="a ClusterQueue's pending workloads"),
        pytest.param("pending-workloads-lq-viewer-role", "localqueues/pendingworkloads",
                     id="a LocalQueue's pending workloads"),
    ],
)  # fmt: skip
def test_users_may_be_given_the_visibility_reads_and_view_includes_them(
    role: str, resource: str
) -> None:
    found = find("ClusterRole", role)
    assert allowed(found["rules"], "visibility.kueue.x-k8s.io", resource, "get")
    assert found["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
