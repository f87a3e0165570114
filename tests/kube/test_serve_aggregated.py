"""`berth serve` with ``BERTH_AGGREGATED_API`` as a real process behind the fake API server's
aggregation layer: it reads the front-proxy settings the fake publishes, serves Kueue's
visibility API on its HTTPS listener to the fake's front proxy, and asks the fake with a
SubjectAccessReview (answered from its RBAC objects) before answering. The real
``kubectl get --raw`` goes the whole way: token user, API server, APIService, Berth."""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml
from builders.certs import Authority, Issued, client_context
from builders.crds import CRD_DIR
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import JOBS, job, setup_queues
from builders.paths import REPO
from builders.ports import free_port

pytestmark = pytest.mark.db

GROUP, VERSION = "visibility.kueue.x-k8s.io", "v1beta2"
CONFIG_MAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
RBAC = "/apis/rbac.authorization.k8s.io/v1"
ALICE, BOB = "alice-token-0123456789", "bob-token-0123456789"
PENDING = f"/apis/{GROUP}/{VERSION}/clusterqueues/team-a/pendingworkloads"
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl")


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    """HTTPS (kubectl sends tokens over TLS only); alice and bob authenticate by token."""
    server = FakeApiServer({ALICE: ("alice", ["team-a"]), BOB: ("bob", [])}, tls=True).start()
    try:
        yield server
    finally:
        server.stop()


def _allow_alice(kubectl: FakeKubectl) -> None:
    """alice may get ClusterQueue team-a's pending workloads; bob has no binding."""
    rule = {"apiGroups": [GROUP], "resources": ["clusterqueues/pendingworkloads"],
            "resourceNames": ["team-a"], "verbs": ["get"]}  # fmt: skip
    kubectl.create(f"{RBAC}/clusterroles", {"metadata": {"name": "pending"}, "rules": [rule]})
    kubectl.create(f"{RBAC}/clusterrolebindings", {
        "metadata": {"name": "alice-pending"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "pending"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}],
    })  # fmt: skip


def _aggregate(kubectl: FakeKubectl, https: str, ca: Authority) -> dict[str, object]:
    """berth-system/berth:443 with Berth's listener as its endpoints, and the APIService
    deploy/base/visibility.yaml makes, its caBundle the listener's CA."""
    kubectl.namespace("berth-system")
    service = {"metadata": {"name": "berth"}, "spec": {"ports": [{"name": "https", "port": 443}]}}
    kubectl.create("/api/v1/namespaces/berth-system/services", service)
    kubectl.serve("berth-system", "berth", 443, https)
    return kubectl.create("/apis/apiregistration.k8s.io/v1/apiservices", {
        "metadata": {"name": f"{VERSION}.{GROUP}"},
        "spec": {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 100,
                 "versionPriority": 100, "caBundle": base64.b64encode(ca.pem.encode()).decode(),
                 "service": {"namespace": "berth-system", "name": "berth", "port": 443}},
    })  # fmt: skip


@dataclass
class Pki:
    server_ca: Authority
    front_proxy: Issued  # the fake's own front-proxy client certificate
    certs: Path


@pytest.fixture
def pki(tmp_path: Path, fake_api: FakeApiServer) -> Pki:
    server_ca = Authority("server", tmp_path)
    certs = tmp_path / "webhook-tls"
    certs.mkdir()
    # The aggregator checks the name SERVICE.NAMESPACE.svc; the test reaches 127.0.0.1.
    hosts = ("berth.berth-system.svc", "localhost", "127.0.0.1")
    listener = server_ca.issue("listener", "berth.berth-system.svc", server=True, hosts=hosts)
    (certs / "tls.crt").write_text(listener.cert_pem)
    (certs / "tls.key").write_text(listener.key_pem)
    front = fake_api.front_proxy
    issued = Issued("", "", Path(front.cert_file), Path(front.key_file))
    return Pki(server_ca, issued, certs)


def _until(check: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.1)


@dataclass
class Berth:
    process: subprocess.Popen[bytes]
    log: Path
    https: str
    kubectl: FakeKubectl

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture
def start(
    db_url: str, tmp_path: Path, pki: Pki, fake_api: FakeApiServer, kubectl: FakeKubectl
) -> Iterator[Callable[[], Berth]]:
    """``berth serve --kubeconfig`` with the aggregated API, against the fake cluster (as
    its admin: no token)."""
    started: list[Berth] = []

    def run() -> Berth:
        for path in sorted(CRD_DIR.glob("*.yaml")):
            kubectl.create(CRDS, yaml.safe_load(path.read_text()))
        kubeconfig = fake_api.kubeconfig(tmp_path / "kubeconfig")
        env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_")}
        env.update(BERTH_POD_NAME="berth-test-0", BERTH_AGGREGATED_API="true")
        https_port, log = free_port(), tmp_path / "serve.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "berth", "serve", "--port", str(free_port()),
                 "--database-url", db_url, "--loop-interval", "0.2",
                 "--kubeconfig", str(kubeconfig), "--webhook-cert-dir", str(pki.certs),
                 "--webhook-port", str(https_port)],
                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO,
            )  # fmt: skip
        berth = Berth(process, log, f"https://127.0.0.1:{https_port}", kubectl)
        started.append(berth)
        return berth

    try:
        yield run
    finally:
        for berth in started:
            if berth.process.poll() is None:
                berth.process.send_signal(signal.SIGTERM)
                berth.process.wait(timeout=30)
            print(berth.output())


def get(berth: Berth, pki: Pki, path: str, cert: Issued | None, **headers: str) -> httpx.Response:
    with httpx.Client(verify=client_context(pki.server_ca, cert), timeout=5) as client:
        return client.get(berth.https + path, headers=headers)


def _answers(berth: Berth, pki: Pki) -> bool:
    assert berth.process.poll() is None, berth.output()
    try:
        return get(berth, pki, "/healthz", None).status_code == 200
    except httpx.TransportError:
        return False


def _kubectl_raw(fake_api: FakeApiServer, tmp_path: Path, path: str, token: str) -> subprocess.CompletedProcess[str]:
    config = fake_api.kubeconfig(tmp_path / f"kubeconfig-{token}", token)
    return subprocess.run(["kubectl", "--kubeconfig", str(config), "get", "--raw", path],
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip


def _two_pending(berth: Berth) -> None:
    """ClusterQueue team-a of 8 GPUs: ``first`` (8) admitted, ``second`` (8) waiting."""
    setup_queues(berth.kubectl)
    berth.kubectl.create(JOBS, job("first", 8))
    berth.kubectl.create(JOBS, job("second", 8))
    _until(lambda: "berth.dev/wait-reason"
           in berth.kubectl.get(f"{JOBS}/second")["metadata"].get("annotations", {}))  # fmt: skip


@needs_kubectl
def test_kubectl_get_raw_reaches_berth_through_the_aggregation_layer(
    start: Callable[[], Berth], pki: Pki, fake_api: FakeApiServer, tmp_path: Path
) -> None:
    berth = start()
    _until(lambda: _answers(berth, pki))
    _two_pending(berth)
    _allow_alice(berth.kubectl)
    apiservice = _aggregate(berth.kubectl, berth.https, pki.server_ca)
    assert apiservice["status"]["conditions"][0]["status"] == "True", apiservice

    alice = _kubectl_raw(fake_api, tmp_path, PENDING, ALICE)
    assert alice.returncode == 0, alice.stderr
    assert [i["metadata"]["name"] for i in json.loads(alice.stdout)["items"]] == ["second"]
    # Berth asked the API server about the user the front proxy named, as kubectl's caller.
    assert berth.kubectl.reviews()[-1]["spec"] == {
        "user": "alice", "groups": ["team-a", "system:authenticated"],
        "resourceAttributes": {"group": GROUP, "version": VERSION, "resource": "clusterqueues",
                               "subresource": "pendingworkloads", "name": "team-a", "verb": "get"},
    }  # fmt: skip
    # bob has no binding: the API server refuses him before Berth is asked.
    asked = len(berth.kubectl.reviews())
    bob = _kubectl_raw(fake_api, tmp_path, PENDING, BOB)
    assert (bob.returncode, "Forbidden" in bob.stderr) == (1, True), bob.stderr
    assert len(berth.kubectl.reviews()) == asked
    groups = {g["name"] for g in berth.kubectl.get("/apis")["groups"]}
    assert GROUP in groups


def test_berth_asks_the_cluster_about_whom_the_front_proxy_names(
    start: Callable[[], Berth], pki: Pki
) -> None:
    """Straight to Berth's listener with the fake's front-proxy certificate: Berth's own
    SubjectAccessReview decides, and without the certificate the headers count for nothing."""
    berth = start()
    _until(lambda: _answers(berth, pki))
    _two_pending(berth)
    _allow_alice(berth.kubectl)
    alice = get(berth, pki, PENDING, pki.front_proxy, **{"X-Remote-User": "alice"})
    assert alice.status_code == 200, alice.text
    assert [i["metadata"]["name"] for i in alice.json()["items"]] == ["second"]
    bob = get(berth, pki, PENDING, pki.front_proxy, **{"X-Remote-User": "bob"})
    assert (bob.status_code, bob.json()["reason"]) == (403, "Forbidden")
    assert get(berth, pki, PENDING, None, **{"X-Remote-User": "alice"}).status_code == 401
    discovery = get(berth, pki, f"/apis/{GROUP}/{VERSION}", pki.front_proxy,
                    **{"X-Remote-User": "system:kube-aggregator"})  # fmt: skip
    assert discovery.json()["kind"] == "APIResourceList"


def test_serve_stops_at_start_when_the_cluster_has_no_front_proxy(
    start: Callable[[], Berth], kubectl: FakeKubectl
) -> None:
    kubectl.delete(CONFIG_MAP)
    berth = start()
    assert berth.process.wait(timeout=60) != 0
    said = berth.output()
    assert "ConfigMap kube-system/extension-apiserver-authentication does not exist" in said
    assert "Traceback" not in said
