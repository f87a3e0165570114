"""deploy/: every overlay renders with the real ``kubectl kustomize``, and what it renders is
what Berth needs: RBAC granting exactly what admission/kube/ calls, the image, the probes,
the DSN from the overlay's Secret, the ServiceMonitor, the dashboard ConfigMap, and Kueue's
visibility API registered at the HTTPS listener that serves it to the aggregation layer."""

from __future__ import annotations

import functools
import importlib.metadata
import json
import shutil
import subprocess
from typing import Any

import pytest
import yaml
from builders.fakeapi.rbac import BUILT_IN
from builders.paths import DEPLOY, DEPLOY_BASE

from admission.kube import front_proxy
from admission.kube.client import (
    CONFIG_MAPS,
    EVENTS,
    JOBS,
    LEASES,
    NODES,
    POD_TEMPLATES,
    PODS,
    PROVISIONING_REQUESTS,
    SUBJECT_ACCESS_REVIEWS,
    ResourceRef,
)
from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.registry import ADAPTERS
from admission.kube.mirror import BERTH_KINDS
from berth import settings
from berth.settings_parsers import _url

Obj = dict[str, Any]
OVERLAYS = sorted(p.name for p in (DEPLOY / "overlays").iterdir() if p.is_dir())
KUBECTL = shutil.which("kubectl")

pytestmark = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not on PATH (its built-in kustomize renders deploy/)"
)


@functools.cache
def render(overlay: str) -> tuple[Obj, ...]:
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "kustomize", str(DEPLOY / "overlays" / overlay)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    return tuple(d for d in yaml.safe_load_all(done.stdout) if d)


@pytest.fixture(params=OVERLAYS)
def objects(request: pytest.FixtureRequest) -> tuple[Obj, ...]:
    return render(request.param)


def find(objects: tuple[Obj, ...], kind: str, name: str) -> Obj:
    return next(d for d in objects if d["kind"] == kind and d["metadata"]["name"] == name)


def allowed(rules: list[Obj], ref: ResourceRef, verb: str, *, sub: str = "") -> bool:
    resource = f"{ref.plural}/{sub}" if sub else ref.plural
    return any(
        ref.group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"]
        for r in rules
    )


def container(objects: tuple[Obj, ...]) -> Obj:
    (berth,) = find(objects, "Deployment", "berth")["spec"]["template"]["spec"]["containers"]
    return berth


def env(objects: tuple[Obj, ...]) -> dict[str, Obj]:
    return {e["name"]: e for e in container(objects)["env"]}


def test_the_overlays_are_the_two_documented_ones() -> None:
    assert OVERLAYS == ["cloudnative-pg", "external-postgres"]


def test_every_crd_file_is_in_the_base(objects: tuple[Obj, ...]) -> None:
    files = {yaml.safe_load(p.read_text())["metadata"]["name"]
             for p in (DEPLOY_BASE / "crds").glob("*.yaml")}
    rendered = {d["metadata"]["name"] for d in objects if d["kind"] == "CustomResourceDefinition"}
    assert rendered == files


CALLS = [
    pytest.param(JOBS, "", "watch", id="watches Jobs"),
    pytest.param(JOBS, "", "patch", id="suspends and steers Jobs"),
    pytest.param(JOBS, "status", "patch", id="clears an evicted Job's startTime"),
    pytest.param(EVENTS, "", "create", id="records Events"),
    pytest.param(NODES, "", "list", id="lists Nodes"),
    pytest.param(NODES, "", "watch", id="watches Nodes"),
    pytest.param(NODES, "", "patch", id="taints Nodes out of the pool"),
    pytest.param(PODS, "", "watch", id="watches Pods"),
    pytest.param(PODS, "", "delete", id="deletes an evicted pod group's Pods"),
    pytest.param(PROVISIONING_REQUESTS, "", "create", id="creates ProvisioningRequests"),
    pytest.param(PROVISIONING_REQUESTS, "", "delete", id="deletes finished ProvisioningRequests"),
    pytest.param(POD_TEMPLATES, "", "create", id="creates a ProvisioningRequest's PodTemplates"),
    pytest.param(POD_TEMPLATES, "", "delete", id="deletes them when the work is done"),
    *(pytest.param(ref, "", verb, id=f"{verb}s {ref.plural}")
      for ref in BERTH_KINDS.values() for verb in ("list", "watch")),
    *(pytest.param(ref, "status", "patch", id=f"writes {ref.plural} status")
      for ref in BERTH_KINDS.values()),
]


@pytest.mark.parametrize(("ref", "sub", "verb"), CALLS)
def test_cluster_role_grants_what_berth_calls(
    objects: tuple[Obj, ...], ref: ResourceRef, sub: str, verb: str
) -> None:
    assert allowed(find(objects, "ClusterRole", "berth")["rules"], ref, verb, sub=sub)


@pytest.mark.parametrize(
    ("ref", "sub", "verb"),
    [
        pytest.param(JOBS, "", "delete", id="never deletes Jobs"),
        pytest.param(PODS, "status", "patch", id="never changes a Pod's status"),
        pytest.param(PODS, "eviction", "create", id="never evicts Pods through the API"),
        pytest.param(ResourceRef("", "v1", "secrets", "Secret", namespaced=True), "", "get",
                     id="never reads Secrets"),
        pytest.param(BERTH_KINDS["ClusterQueue"], "", "patch", id="never changes a queue's spec"),
    ],
)
def test_cluster_role_grants_nothing_more(
    objects: tuple[Obj, ...], ref: ResourceRef, sub: str, verb: str
) -> None:
    assert not allowed(find(objects, "ClusterRole", "berth")["rules"], ref, verb, sub=sub)


@pytest.mark.parametrize("verb", ["get", "create", "update"])
def test_leases_only_in_berths_namespace(objects: tuple[Obj, ...], verb: str) -> None:
    role = find(objects, "Role", "berth-leader-election")
    assert role["metadata"]["namespace"] == "berth-system"
    assert allowed(role["rules"], LEASES, verb)


def test_two_replicas_of_this_version_with_the_service_account(objects: tuple[Obj, ...]) -> None:
    deployment = find(objects, "Deployment", "berth")
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 2 and pod["serviceAccountName"] == "berth"
    assert container(objects)["image"] == f"berth:{importlib.metadata.version('berth')}"


def test_probes_ask_healthz_and_readyz_on_the_port_berth_listens_on(
    objects: tuple[Obj, ...],
) -> None:
    berth = container(objects)
    ports = {p["name"]: p["containerPort"] for p in berth["ports"]}
    listens = int(berth["args"][berth["args"].index("--port") + 1])
    live, ready = berth["livenessProbe"]["httpGet"], berth["readinessProbe"]["httpGet"]
    assert (live["path"], ready["path"]) == ("/healthz", "/readyz")
    assert ports[live["port"]] == ports[ready["port"]] == listens


def test_tokens_come_from_a_secret_since_berth_listens_beyond_loopback(
    objects: tuple[Obj, ...],
) -> None:
    assert container(objects)["args"][container(objects)["args"].index("--host") + 1] == "0.0.0.0"
    assert env(objects)["BERTH_TOKENS"]["valueFrom"]["secretKeyRef"] == {
        "name": "berth-tokens", "key": "tokens"}


def test_cloudnative_pg_gives_berth_the_read_write_uri_of_a_three_instance_cluster() -> None:
    objects = render("cloudnative-pg")
    (cluster,) = (d for d in objects if d["kind"] == "Cluster")
    assert cluster["apiVersion"] == "postgresql.cnpg.io/v1" and cluster["spec"]["instances"] == 3
    assert cluster["metadata"]["namespace"] == "berth-system"
    # The operator's "<cluster>-app" Secret: its `uri` names the "<cluster>-rw" Service.
    assert env(objects)["BERTH_DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {
        "name": f"{cluster['metadata']['name']}-app", "key": "uri"}


def test_external_postgres_reads_the_dsn_from_its_secret_which_berth_accepts() -> None:
    objects = render("external-postgres")
    ref = env(objects)["BERTH_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    secret = find(objects, "Secret", ref["name"])
    assert secret["metadata"]["namespace"] == "berth-system"
    assert _url(secret["stringData"][ref["key"]]).startswith("postgresql+psycopg://")
    assert not any(d["kind"] == "Cluster" for d in objects)


def test_the_service_monitor_scrapes_metrics_with_a_read_token(objects: tuple[Obj, ...]) -> None:
    monitor = find(objects, "ServiceMonitor", "berth")
    service = find(objects, "Service", "berth")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    auth = endpoint["authorization"]
    assert auth["type"] == "Bearer" and auth["credentials"]["name"] == "berth-tokens"


def test_the_dashboard_ships_as_a_configmap_grafana_loads(objects: tuple[Obj, ...]) -> None:
    (config,) = (d for d in objects if d["kind"] == "ConfigMap"
                 and d["metadata"].get("labels", {}).get("grafana_dashboard") == "1")
    shipped = json.loads((DEPLOY_BASE / "grafana" / "berth.json").read_text())
    assert json.loads(config["data"]["berth.json"]) == shipped


def test_the_webhook_points_at_berths_route(objects: tuple[Obj, ...]) -> None:
    (hook,) = find(objects, "MutatingWebhookConfiguration", "berth")["webhooks"]
    assert hook["clientConfig"]["service"]["path"] == "/mutate/workloads"
    assert hook["rules"][0]["operations"] == ["CREATE"]


@pytest.mark.parametrize("adapter", [pytest.param(a, id=a.kind) for a in ADAPTERS])
def test_every_kind_berth_queues_is_watched_patched_and_suspended_at_creation(
    objects: tuple[Obj, ...], adapter: Adapter,
) -> None:
    rules = find(objects, "ClusterRole", "berth")["rules"]
    ref = adapter.ref
    for verb in ("get", "list", "watch", "patch"):
        assert allowed(rules, ref, verb), verb
    (hook,) = find(objects, "MutatingWebhookConfiguration", "berth")["webhooks"]
    assert any(
        ref.group in rule["apiGroups"] and ref.version in rule["apiVersions"]
        and ref.plural in rule["resources"] and rule["operations"] == ["CREATE"]
        for rule in hook["rules"]
    )


def bound_rules(objects: tuple[Obj, ...], namespace: str | None) -> list[Obj]:
    """The built-in roles' rules (Kubernetes' bootstrap policy, as the fake API server
    holds it) bound to Berth's ServiceAccount (cluster-wide, or in ``namespace``)."""
    rules: list[Obj] = []
    for binding in objects:
        if binding["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if binding["kind"] == "RoleBinding" and binding["metadata"].get("namespace") != namespace:
            continue
        subjects = binding.get("subjects", [])
        if {"kind": "ServiceAccount", "name": "berth", "namespace": "berth-system"} in subjects:
            rules += BUILT_IN.get((binding["roleRef"]["kind"], binding["roleRef"]["name"]), [])
    return rules


def test_berth_may_ask_the_api_server_who_may_read_the_visibility_api(objects: tuple[Obj, ...]) -> None:
    assert allowed(bound_rules(objects, None), SUBJECT_ACCESS_REVIEWS, "create")


def test_berth_may_read_the_front_proxy_settings_in_kube_system(objects: tuple[Obj, ...]) -> None:
    rules = bound_rules(objects, front_proxy.NAMESPACE)
    assert allowed(rules, CONFIG_MAPS, "get")
    assert any(front_proxy.NAME in r.get("resourceNames", []) for r in rules)


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_kueues_visibility_api_is_registered_at_berths_https_listener(
    objects: tuple[Obj, ...], version: str
) -> None:
    spec = find(objects, "APIService", f"{version}.visibility.kueue.x-k8s.io")["spec"]
    assert (spec["group"], spec["version"]) == ("visibility.kueue.x-k8s.io", version)
    service = find(objects, "Service", spec["service"]["name"])
    assert service["metadata"]["namespace"] == spec["service"]["namespace"]
    (port,) = (p for p in service["spec"]["ports"] if p["port"] == spec["service"]["port"])
    (target,) = (p for p in container(objects)["ports"] if p["name"] == port["targetPort"])
    served = settings.load(env={e["name"]: e["value"] for e in container(objects)["env"]
                                if "value" in e})  # fmt: skip
    assert served.webhook.aggregated_api
    assert target["containerPort"] == served.webhook.port  # the HTTPS listener's port


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
    found = find(render(OVERLAYS[0]), "ClusterRole", role)
    assert any(
        "visibility.kueue.x-k8s.io" in r["apiGroups"] and resource in r["resources"]
        and "get" in r["verbs"]
        for r in found["rules"]
    )
    assert found["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
