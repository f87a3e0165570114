"""`berth serve` with ``BERTH_AGGREGATED_API`` as a real process: it reads the front-proxy
settings from the cluster at start, serves Kueue's visibility API on its HTTPS listener to
a caller holding the front proxy's certificate, and asks the cluster with a
SubjectAccessReview before answering.

The fake API server serves neither ConfigMaps nor SubjectAccessReviews yet; here its app is
mounted behind two routes that answer them (the ConfigMap with the CA made here, the review
from a table), and everything else is the fake's as usual."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
import yaml
from builders.certs import Authority, Issued, client_context
from builders.crds import CRD_DIR
from builders.fakeapi.app import Options, create_app
from builders.fakeapi.server import FakeKubectl
from builders.fakeapi.store import Store
from builders.kube import JOBS, job, setup_queues
from builders.paths import REPO
from builders.served import free_port, running_config
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

pytestmark = pytest.mark.db

GROUP = "visibility.kueue.x-k8s.io"
CONFIG_MAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


@dataclass
class Cluster:
    """The fake API server plus the two aggregation calls; what Berth asked is kept."""

    front_proxy_ca: str | None  # None: the ConfigMap does not exist
    reviews: list[dict[str, Any]] = field(default_factory=list)

    def app(self) -> Starlette:
        async def config_map(_: Request) -> JSONResponse:
            if self.front_proxy_ca is None:
                body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 404,
                        "reason": "NotFound", "message": 'configmaps "extension-apiserver-authentication" not found'}  # fmt: skip
                return JSONResponse(body, status_code=404)
            data = {"requestheader-client-ca-file": self.front_proxy_ca,
                    "requestheader-allowed-names": '["front-proxy-client"]',
                    "requestheader-username-headers": '["X-Remote-User"]',
                    "requestheader-group-headers": '["X-Remote-Group"]',
                    "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]'}  # fmt: skip
            return JSONResponse({"apiVersion": "v1", "kind": "ConfigMap", "data": data,
                                 "metadata": {"name": "extension-apiserver-authentication",
                                              "namespace": "kube-system"}})  # fmt: skip

        async def review(request: Request) -> JSONResponse:
            body = json.loads(await request.body())
            self.reviews.append(body)
            spec = body["spec"]
            allowed = spec["user"] == "alice" and spec["resourceAttributes"]["name"] == "team-a"
            return JSONResponse({**body, "status": {"allowed": allowed}}, status_code=201)

        routes = [Route(CONFIG_MAP, config_map), Route(REVIEWS, review, methods=["POST"]),
                  Mount("", app=create_app(Store(), Options()))]  # fmt: skip
        return Starlette(routes=routes)


@dataclass
class Pki:
    server_ca: Authority
    front_proxy_ca: Authority
    front_proxy: Issued
    certs: Path


@pytest.fixture
def pki(tmp_path: Path) -> Pki:
    server_ca = Authority("server", tmp_path)
    certs = tmp_path / "webhook-tls"
    certs.mkdir()
    listener = server_ca.issue("listener", "berth.berth-system.svc", server=True)
    (certs / "tls.crt").write_text(listener.cert_pem)
    (certs / "tls.key").write_text(listener.key_pem)
    front = Authority("front-proxy", tmp_path)
    return Pki(server_ca, front, front.issue("front-proxy-client", "front-proxy-client"), certs)


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
def start(db_url: str, tmp_path: Path, pki: Pki) -> Iterator[Callable[[Cluster], Berth]]:
    """``berth serve --kubeconfig`` with the aggregated API, against ``cluster``."""
    with contextlib.ExitStack() as stack:
        started: list[Berth] = []

        def run(cluster: Cluster) -> Berth:
            config = uvicorn.Config(cluster.app(), host="127.0.0.1", port=free_port(),
                                    log_level="warning", lifespan="off")  # fmt: skip
            api = stack.enter_context(running_config(config))
            kubectl = FakeKubectl(api)
            stack.callback(kubectl.close)
            for path in sorted(CRD_DIR.glob("*.yaml")):
                kubectl.create(CRDS, yaml.safe_load(path.read_text()))
            kubeconfig = tmp_path / "kubeconfig"
            kubeconfig.write_text(yaml.safe_dump({
                "apiVersion": "v1", "kind": "Config", "current-context": "fake",
                "clusters": [{"name": "fake", "cluster": {"server": api}}],
                "users": [{"name": "berth", "user": {"token": "test"}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "berth"}}],
            }))  # fmt: skip
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


def test_serve_answers_kubectl_get_raw_as_the_aggregator_forwards_it(
    start: Callable[[Cluster], Berth], pki: Pki
) -> None:
    cluster = Cluster(pki.front_proxy_ca.pem)
    berth = start(cluster)
    _until(lambda: _answers(berth, pki))
    setup_queues(berth.kubectl)
    berth.kubectl.create(JOBS, job("first", 8))
    berth.kubectl.create(JOBS, job("second", 8))
    _until(lambda: "berth.dev/wait-reason"
           in berth.kubectl.get(f"{JOBS}/second")["metadata"].get("annotations", {}))  # fmt: skip

    path = f"/apis/{GROUP}/v1beta2/clusterqueues/team-a/pendingworkloads"
    alice = get(berth, pki, path, pki.front_proxy, **{"X-Remote-User": "alice"})
    assert alice.status_code == 200, alice.text
    assert [i["metadata"]["name"] for i in alice.json()["items"]] == ["second"]
    assert cluster.reviews[-1]["spec"] == {
        "user": "alice", "groups": [],
        "resourceAttributes": {"group": GROUP, "version": "v1beta2", "resource": "clusterqueues",
                               "subresource": "pendingworkloads", "name": "team-a", "verb": "get"},
    }  # fmt: skip
    bob = get(berth, pki, path, pki.front_proxy, **{"X-Remote-User": "bob"})
    assert (bob.status_code, bob.json()["reason"]) == (403, "Forbidden")
    assert get(berth, pki, path, None, **{"X-Remote-User": "alice"}).status_code == 401
    discovery = get(berth, pki, f"/apis/{GROUP}/v1beta2", pki.front_proxy,
                    **{"X-Remote-User": "system:kube-aggregator"})  # fmt: skip
    assert discovery.json()["kind"] == "APIResourceList"


def test_serve_stops_at_start_when_the_cluster_has_no_front_proxy(
    start: Callable[[Cluster], Berth], pki: Pki
) -> None:
    berth = start(Cluster(front_proxy_ca=None))
    assert berth.process.wait(timeout=60) != 0
    said = berth.output()
    assert "ConfigMap kube-system/extension-apiserver-authentication does not exist" in said
    assert "Traceback" not in said
