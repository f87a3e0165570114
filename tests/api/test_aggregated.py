"""Kueue's visibility API on Berth's HTTPS listener, as the aggregation layer calls it: over
real TLS (uvicorn as ``berth serve`` configures it, certificates made here), the front
proxy's client certificate and identity headers authenticate, an authorizer (a table here;
``SubjectAccessReviewer`` in a cluster) decides, and the answer is the HTTP port's."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from builders.certs import Authority, Issued, client_context
from builders.manifests import job
from builders.ports import free_port
from builders.reads import World, pool, serve
from builders.served import engine_for, running_config

from admission.kube.access_review import Decision, ResourceAttributes
from admission.kube.errors import KubernetesUnavailable
from admission.kube.front_proxy import FrontProxy, Identity
from api.aggregated import Aggregation
from api.app import create_webhook_app
from api.auth import Grant, Role
from api.deps import AppContext, Readiness
from berth.https import HttpsConfig
from quota.ledger.connect import Transactions

pytestmark = pytest.mark.db

GROUP = "visibility.kueue.x-k8s.io"
CQ_PATH = f"/apis/{GROUP}/v1beta2/clusterqueues/team-a/pendingworkloads"
LQ_PATH = f"/apis/{GROUP}/v1beta1/namespaces/team-a/localqueues/main/pendingworkloads"
ADMIN = Grant("admin-token-0123456789abcdef", Role.ADMIN)
ALICE = {"X-Remote-User": "alice"}


@dataclass
class Table:
    """An authorizer answering from a table of (user, resource, name, namespace); it
    records every question."""

    allowed: set[tuple[str, str, str, str]]
    asked: list[tuple[Identity, ResourceAttributes]] = field(default_factory=list)

    async def __call__(self, identity: Identity, attributes: ResourceAttributes) -> Decision:
        self.asked.append((identity, attributes))
        if identity.user == "carol":
            raise KubernetesUnavailable("SubjectAccessReview: cannot reach the API server")
        key = (identity.user, attributes.resource, attributes.name, attributes.namespace)
        return Decision(allowed=key in self.allowed, reason="" if key in self.allowed else "no RBAC rule")


@dataclass
class Pki:
    server_ca: Authority
    front_proxy_ca: Authority
    front_proxy: Issued  # CN front-proxy-client, signed by the front-proxy CA
    other_cn: Issued  # signed by the front-proxy CA, CN not allowed
    other_ca: Issued  # CN front-proxy-client, signed by another CA
    certs: Path  # tls.crt/tls.key of the listener


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    root = tmp_path_factory.mktemp("pki")
    server_ca = Authority("server", root)
    certs = root / "listener"
    certs.mkdir()
    listener = server_ca.issue("tls", "berth.berth-system.svc", server=True)
    (certs / "tls.crt").write_text(listener.cert_pem)
    (certs / "tls.key").write_text(listener.key_pem)
    front = Authority("front-proxy", root)
    other = Authority("elsewhere", root)
    return Pki(
        server_ca=server_ca,
        front_proxy_ca=front,
        front_proxy=front.issue("front-proxy-client", "front-proxy-client", organization="k8s"),
        other_cn=front.issue("kubelet", "system:node:worker-1"),
        other_ca=other.issue("impostor", "front-proxy-client"),
        certs=certs,
    )


@pytest.fixture(scope="module")
def world(pg_server: Any, migrated_template: str) -> Iterator[World]:
    """ClusterQueue team-a (4 GPUs) runs ``big``; a1 and a2 wait in LocalQueue team-a/main."""
    url = pg_server.create(template=migrated_template)
    w = World(url)
    w.apply(pool(("team-a", 4), cohort=None))
    w.submit("big", 4, "team-a")
    w.cycle()
    for name in ("a1", "a2"):
        w.advance(minutes=1)
        w.submit(name, 2, "team-a")
    w.cycle()
    yield w
    w.close()
    pg_server.drop(url)


@pytest.fixture(scope="module")
def table() -> Table:
    return Table(allowed={("alice", "clusterqueues", "team-a", ""),
                          ("alice", "localqueues", "main", "team-a")})  # fmt: skip


@pytest.fixture(scope="module")
def listener(world: World, pki: Pki, table: Table) -> Iterator[str]:
    """The HTTPS listener with the aggregated API; its base URL."""
    front_proxy_ca = pki.front_proxy_ca.pem
    front_proxy = FrontProxy(front_proxy_ca, allowed_names=frozenset({"front-proxy-client"}))
    with engine_for(world.url) as engine:
        context = AppContext(session_scope=Transactions(engine),
                             readiness=lambda: Readiness(True, "test"))  # fmt: skip
        app = create_webhook_app(context, Aggregation(front_proxy, table))
        config = HttpsConfig(app, certs=pki.certs, client_ca=front_proxy_ca,
                             host="127.0.0.1", port=free_port(), log_level="warning")  # fmt: skip
        with running_config(config) as base:
            yield base


@pytest.fixture(scope="module")
def http_api(world: World) -> Iterator[httpx.Client]:
    """The same ledger on Berth's HTTP port, read with an admin token."""
    with serve(world.url, tokens=[ADMIN]) as client:
        client.headers["Authorization"] = f"Bearer {ADMIN.token}"
        yield client


def call(base: str, pki: Pki, path: str, cert: Issued | None, headers: Any = (),
         method: str = "GET", **options: Any) -> httpx.Response:  # fmt: skip
    with httpx.Client(base_url=base, verify=client_context(pki.server_ca, cert), timeout=10) as c:
        return c.request(method, path, headers=httpx.Headers(headers), **options)


@pytest.mark.parametrize("path", [pytest.param(CQ_PATH, id="a ClusterQueue's"),
                                  pytest.param(LQ_PATH, id="a LocalQueue's")])  # fmt: skip
def test_the_front_proxy_reads_what_the_http_port_gives(
    listener: str, pki: Pki, http_api: httpx.Client, table: Table, path: str
) -> None:
    headers = [("X-Remote-User", "alice"), ("X-Remote-Group", "team-a"),
               ("X-Remote-Group", "system:authenticated"), ("X-Remote-Extra-Scopes", "view")]  # fmt: skip
    response = call(listener, pki, path, pki.front_proxy, headers)
    assert response.status_code == 200, response.text
    expected = http_api.get(path)
    assert expected.status_code == 200
    assert response.json() == expected.json()
    assert [i["metadata"]["name"] for i in response.json()["items"]] == ["a1", "a2"]
    identity, attributes = table.asked[-1]
    assert identity == Identity("alice", ("team-a", "system:authenticated"), {"scopes": ("view",)})
    namespaced = "localqueues" in path
    assert attributes == ResourceAttributes(
        group=GROUP, version=path.split("/")[3],
        resource="localqueues" if namespaced else "clusterqueues", subresource="pendingworkloads",
        name="main" if namespaced else "team-a", namespace="team-a" if namespaced else "",
    )


@pytest.mark.parametrize(
    ("cert", "headers", "why"),
    [
        pytest.param(None, {}, "no client certificate", id="no certificate"),
        pytest.param(None, ALICE, "no client certificate", id="identity headers without the certificate"),
        pytest.param("other_cn", ALICE, "'system:node:worker-1' is not an allowed name", id="CN not allowed"),
        pytest.param("front_proxy", {}, "no user named in X-Remote-User", id="the certificate, no user"),
    ],
)
def test_unauthenticated_requests_are_a_401_status(
    listener: str, pki: Pki, table: Table, cert: str | None, headers: dict[str, str], why: str
) -> None:
    asked = len(table.asked)
    response = call(listener, pki, CQ_PATH, getattr(pki, cert) if cert else None, headers)
    assert response.status_code == 401, response.text
    status = response.json()
    assert (status["kind"], status["apiVersion"], status["reason"], status["code"]) == ("Status", "v1", "Unauthorized", 401)
    assert why in status["message"]
    assert len(table.asked) == asked  # nobody is asked about an unauthenticated request


def test_a_certificate_from_another_ca_is_refused_in_the_handshake(listener: str, pki: Pki) -> None:
    # CERT_OPTIONAL: a certificate, if presented, must verify, or no request is read at all
    with pytest.raises(httpx.TransportError):
        call(listener, pki, CQ_PATH, pki.other_ca, ALICE)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        pytest.param(f"/apis/{GROUP}/v1beta2/clusterqueues/gpu-pool/pendingworkloads",
                     f'clusterqueues.{GROUP} "gpu-pool" is forbidden: User "bob" cannot get resource '
                     f'"clusterqueues/pendingworkloads" in API group "{GROUP}" at the cluster scope: no RBAC rule',
                     id="a ClusterQueue"),
        pytest.param(f"/apis/{GROUP}/v1beta2/namespaces/team-b/localqueues/main/pendingworkloads",
                     f'localqueues.{GROUP} "main" is forbidden: User "bob" cannot get resource '
                     f'"localqueues/pendingworkloads" in API group "{GROUP}" in the namespace "team-b": no RBAC rule',
                     id="a LocalQueue"),
    ],
)
def test_a_user_the_authorizer_refuses_gets_kubernetes_403(
    listener: str, pki: Pki, path: str, message: str
) -> None:
    response = call(listener, pki, path, pki.front_proxy, {"X-Remote-User": "bob"})
    assert response.status_code == 403, response.text
    status = response.json()
    assert (status["kind"], status["reason"], status["code"]) == ("Status", "Forbidden", 403)
    assert status["message"] == message
    assert status["details"]["kind"] in ("clusterqueues", "localqueues")


def test_a_review_that_fails_is_kubernetes_internal_error(listener: str, pki: Pki) -> None:
    response = call(listener, pki, CQ_PATH, pki.front_proxy, {"X-Remote-User": "carol"})
    assert response.status_code == 500, response.text
    status = response.json()
    assert (status["kind"], status["reason"]) == ("Status", "InternalError")
    assert "cannot reach the API server" in status["message"]


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_discovery_lists_kueues_resources_to_any_front_proxy_user(
    listener: str, pki: Pki, table: Table, version: str
) -> None:
    asked = len(table.asked)
    identity = {"X-Remote-User": "system:kube-aggregator", "X-Remote-Group": "system:masters"}
    found = call(listener, pki, f"/apis/{GROUP}/{version}", pki.front_proxy, identity)
    assert found.status_code == 200, found.text
    document = found.json()
    assert (document["kind"], document["apiVersion"], document["groupVersion"]) == ("APIResourceList", "v1", f"{GROUP}/{version}")
    served = {r["name"]: (r["namespaced"], r["kind"], r["verbs"]) for r in document["resources"]}
    assert served == {
        "clusterqueues": (False, "PendingWorkloadsSummary", []),
        "clusterqueues/pendingworkloads": (False, "PendingWorkloadsSummary", ["get"]),
        "localqueues": (True, "PendingWorkloadsSummary", []),
        "localqueues/pendingworkloads": (True, "PendingWorkloadsSummary", ["get"]),
    }
    group = call(listener, pki, f"/apis/{GROUP}", pki.front_proxy, identity).json()
    assert (group["kind"], group["name"]) == ("APIGroup", GROUP)
    assert [v["version"] for v in group["versions"]] == ["v1beta2", "v1beta1"]
    assert group["preferredVersion"] == {"groupVersion": f"{GROUP}/v1beta2", "version": "v1beta2"}
    assert len(table.asked) == asked  # discovery needs no review
    assert call(listener, pki, f"/apis/{GROUP}/{version}", None, identity).status_code == 401


@pytest.mark.parametrize("path", ["/healthz", "/livez", "/readyz"])
def test_probes_answer_without_a_certificate(listener: str, pki: Pki, path: str) -> None:
    assert call(listener, pki, path, None).status_code == 200


def test_the_webhook_still_answers_the_api_server_without_a_certificate(listener: str, pki: Pki) -> None:
    review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
              "request": {"uid": "u-1", "operation": "CREATE", "object": job("j", 1, suspend=False)}}  # fmt: skip
    response = call(listener, pki, "/mutate/batch/v1/jobs", None, method="POST", json=review)
    assert response.status_code == 200, response.text
    answer = response.json()["response"]
    assert (answer["uid"], answer["allowed"]) == ("u-1", True)
    assert answer.get("patchType") == "JSONPatch"  # suspended at creation


def test_bearer_token_routes_are_not_on_the_listener(listener: str, pki: Pki) -> None:
    response = call(listener, pki, "/api/v1/workloads", pki.front_proxy, ALICE)
    assert response.status_code == 404


def test_a_nul_in_the_path_is_refused_before_anyone_is_asked(listener: str, pki: Pki, table: Table) -> None:
    asked = len(table.asked)
    response = call(listener, pki, CQ_PATH.replace("team-a", "team%00a"), pki.front_proxy, ALICE)
    assert response.status_code == 422, response.text
    assert len(table.asked) == asked
