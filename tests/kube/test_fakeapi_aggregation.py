"""The fake API server's authentication and aggregation layer against the real one's: the
real ``kubectl get --raw`` under an APIService reaches a real HTTPS backend as the front
proxy (its client certificate, the caller in ``X-Remote-*``, nothing the caller forged),
a wrong token is refused, an unreachable backend answers 503, and discovery lists the
APIService's group once it is available."""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from builders.certs import Authority
from builders.fakeapi import FakeApiServer, FakeKubectl

GROUP, VERSION = "visibility.kueue.x-k8s.io", "v1beta2"
PENDING = f"/apis/{GROUP}/{VERSION}/clusterqueues/cq-a/pendingworkloads"
APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"
AUTH_CONFIG = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
TOKEN = "alice-token-0123456789"
BOB = "bob-token-0123456789"  # a user no binding names
VIEWER = {
    "metadata": {"name": "pending-viewer"},
    "rules": [{"apiGroups": [GROUP], "resources": ["clusterqueues/pendingworkloads"], "verbs": ["get"]}],
}
TEAM_A_VIEWS = {
    "metadata": {"name": "team-a-views-pending"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pending-viewer"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team-a"}],
}
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")


class _Echo(BaseHTTPRequestHandler):
    """Answers with what it was sent: path, the verified client certificate's CN, headers."""

    def do_GET(self) -> None:
        assert isinstance(self.connection, ssl.SSLSocket)
        peer = self.connection.getpeercert() or {}
        subject = dict(pair[0] for pair in peer.get("subject", ()))
        body = json.dumps(
            {
                "path": self.path,
                "cn": subject.get("commonName"),
                "user": self.headers.get_all("X-Remote-User"),
                "groups": self.headers.get_all("X-Remote-Group"),
                "authorization": self.headers.get("Authorization"),
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    server = FakeApiServer({TOKEN: ("alice", ["team-a"]), BOB: ("bob", [])}, tls=True).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def serving_ca(tmp_path: Path) -> Authority:
    return Authority("berth-serving", tmp_path)


@pytest.fixture
def backend(kubectl: FakeKubectl, serving_ca: Authority) -> Iterator[str]:
    """An HTTPS server with a certificate for berth.berth-system.svc that verifies, when it
    is offered, a client certificate against the published front-proxy CA."""
    front_ca = kubectl.get(AUTH_CONFIG)["data"]["requestheader-client-ca-file"]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    serving = serving_ca.issue("serving", "berth", server=True, hosts=("berth.berth-system.svc",))
    context.load_cert_chain(serving.cert_file, serving.key_file)
    context.load_verify_locations(cadata=front_ca)
    context.verify_mode = ssl.CERT_OPTIONAL
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _apiservice(ca: Authority | None, **spec: Any) -> dict[str, Any]:
    tls = {"caBundle": base64.b64encode(ca.pem.encode()).decode()} if ca else {"insecureSkipTLSVerify": True}
    return {
        "metadata": {"name": f"{VERSION}.{GROUP}"},
        "spec": {
            "group": GROUP, "version": VERSION, "groupPriorityMinimum": 100, "versionPriority": 100,
            "service": {"namespace": "berth-system", "name": "berth", "port": 443},
            **tls, **spec,
        },
    }


@pytest.fixture
def cluster(kubectl: FakeKubectl, backend: str, serving_ca: Authority) -> FakeKubectl:
    """berth-system/berth:443 served by the backend, its APIService for GROUP/VERSION, and
    RBAC letting group team-a get clusterqueues/pendingworkloads there."""
    kubectl.create("/apis/rbac.authorization.k8s.io/v1/clusterroles", VIEWER)
    kubectl.create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", TEAM_A_VIEWS)
    kubectl.namespace("berth-system")
    service = {"metadata": {"name": "berth"}, "spec": {"ports": [{"name": "https", "port": 443}]}}
    kubectl.create("/api/v1/namespaces/berth-system/services", service)
    kubectl.serve("berth-system", "berth", 443, backend)
    kubectl.create(APISERVICES, _apiservice(serving_ca))
    return kubectl


def _kubectl_raw(fake_api: FakeApiServer, tmp_path: Path, path: str, token: str) -> subprocess.CompletedProcess[str]:
    config = fake_api.kubeconfig(tmp_path / "kubeconfig", token)
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(config), "get", "--raw", path],
        capture_output=True, text=True, timeout=60, check=False,
    )


@needs_kubectl
def test_kubectl_reaches_the_backend_as_the_front_proxy(
    cluster: FakeKubectl, fake_api: FakeApiServer, tmp_path: Path
) -> None:
    done = _kubectl_raw(fake_api, tmp_path, f"{PENDING}?limit=2", TOKEN)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "path": f"{PENDING}?limit=2",
        "cn": "front-proxy-client",
        "user": ["alice"],
        "groups": ["team-a", "system:authenticated"],
        "authorization": None,
    }


def test_a_client_cannot_forge_the_remote_headers(cluster: FakeKubectl) -> None:
    forged = {
        "Authorization": f"Bearer {TOKEN}",
        "X-Remote-User": "system:admin",
        "X-Remote-Group": "system:masters",
        "X-Remote-Extra-Scopes": "all",
    }
    seen = cluster.request("GET", PENDING, headers=forged).json()
    assert (seen["user"], seen["groups"]) == (["alice"], ["team-a", "system:authenticated"])


@needs_kubectl
def test_an_unknown_token_is_refused_with_401(
    cluster: FakeKubectl, fake_api: FakeApiServer, tmp_path: Path
) -> None:
    response = cluster.request("GET", PENDING, headers={"Authorization": "Bearer not-a-token"})
    assert (response.status_code, response.json()["reason"]) == (401, "Unauthorized")
    done = _kubectl_raw(fake_api, tmp_path, PENDING, "not-a-token")
    assert done.returncode == 1
    assert "Unauthorized" in done.stderr


@needs_kubectl
def test_the_api_server_authorizes_before_it_proxies(
    cluster: FakeKubectl, fake_api: FakeApiServer, tmp_path: Path
) -> None:
    done = _kubectl_raw(fake_api, tmp_path, PENDING, BOB)
    assert done.returncode == 1
    assert done.stderr == (
        'Error from server (Forbidden): clusterqueues.visibility.kueue.x-k8s.io "cq-a" is '
        'forbidden: User "bob" cannot get resource "clusterqueues/pendingworkloads" in API '
        f'group "{GROUP}" at the cluster scope\n'
    )
    # Discovery names no resource: every user may read it.
    assert _kubectl_raw(fake_api, tmp_path, f"/apis/{GROUP}/{VERSION}", BOB).returncode == 0


def test_a_request_without_credentials_is_the_admin(cluster: FakeKubectl) -> None:
    seen = cluster.request("GET", PENDING).json()
    assert (seen["user"], seen["groups"]) == (["system:admin"], ["system:masters", "system:authenticated"])


@needs_kubectl
def test_a_backend_that_is_down_answers_503(
    cluster: FakeKubectl, fake_api: FakeApiServer, tmp_path: Path
) -> None:
    cluster.serve("berth-system", "berth", 443, "https://127.0.0.1:1")
    response = cluster.request("GET", PENDING)
    assert (response.status_code, response.text) == (503, "service unavailable\n")
    condition = cluster.get(f"{APISERVICES}/{VERSION}.{GROUP}")["status"]["conditions"][0]
    assert (condition["type"], condition["status"]) == ("Available", "False")
    done = _kubectl_raw(fake_api, tmp_path, PENDING, TOKEN)
    assert done.returncode == 1
    assert "ServiceUnavailable" in done.stderr


def test_a_backend_whose_certificate_the_ca_bundle_does_not_sign_is_unavailable(
    kubectl: FakeKubectl, backend: str, tmp_path: Path
) -> None:
    kubectl.namespace("berth-system")
    service = {"metadata": {"name": "berth"}, "spec": {"ports": [{"port": 443}]}}
    kubectl.create("/api/v1/namespaces/berth-system/services", service)
    kubectl.serve("berth-system", "berth", 443, backend)
    created = kubectl.create(APISERVICES, _apiservice(Authority("some-other", tmp_path)))
    assert created["status"]["conditions"][0]["status"] == "False"
    assert kubectl.request("GET", PENDING).status_code == 503
    kubectl.delete(f"{APISERVICES}/{VERSION}.{GROUP}")
    insecure = kubectl.create(APISERVICES, _apiservice(None))
    assert insecure["status"]["conditions"][0]["status"] == "True"
    assert kubectl.request("GET", PENDING).json()["cn"] == "front-proxy-client"


def test_discovery_lists_the_available_group(cluster: FakeKubectl) -> None:
    apiservice = cluster.get(f"{APISERVICES}/{VERSION}.{GROUP}")
    condition = apiservice["status"]["conditions"][0]
    assert {k: v for k, v in condition.items() if k != "lastTransitionTime"} == {
        "type": "Available", "status": "True", "reason": "Passed", "message": "all checks passed",
    }
    groups = {g["name"]: g for g in cluster.get("/apis")["groups"]}
    assert groups[GROUP]["preferredVersion"] == {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}
    assert cluster.get(f"/apis/{GROUP}/{VERSION}")["path"] == f"/apis/{GROUP}/{VERSION}"


def test_an_unavailable_apiservice_is_not_in_discovery(kubectl: FakeKubectl) -> None:
    kubectl.namespace("berth-system")
    kubectl.create(APISERVICES, _apiservice(None))  # no such Service
    assert GROUP not in {g["name"] for g in kubectl.get("/apis")["groups"]}


def test_the_front_proxy_configuration_is_published(kubectl: FakeKubectl) -> None:
    data = kubectl.get(AUTH_CONFIG)["data"]
    assert {k: v for k, v in data.items() if k != "requestheader-client-ca-file"} == {
        "requestheader-allowed-names": '["front-proxy-client"]',
        "requestheader-username-headers": '["X-Remote-User"]',
        "requestheader-group-headers": '["X-Remote-Group"]',
        "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]',
    }
    assert data["requestheader-client-ca-file"].startswith("-----BEGIN CERTIFICATE-----")


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        pytest.param({"version": "v1"}, "metadata.name: must be spec.version+'.'+spec.group", id="the name must be version.group"),
        pytest.param({"caBundle": "eA==", "insecureSkipTLSVerify": True}, "may not be true if caBundle is present", id="a ca bundle and skipping verification conflict"),
    ],
)
def test_an_invalid_apiservice_is_refused(kubectl: FakeKubectl, spec: dict[str, Any], problem: str) -> None:
    response = kubectl.request("POST", APISERVICES, json=_apiservice(None, **spec))
    assert response.status_code == 422
    assert problem in response.json()["message"]
