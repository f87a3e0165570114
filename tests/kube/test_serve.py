"""`berth serve --kubeconfig` as a real process against the fake apiserver: the wiring of
watchers, Lease leadership, the Job actuator and the HTTPS admission webhook."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
import yaml
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.kube import JOBS, job, setup_queues
from builders.paths import REPO
from builders.ports import free_port

LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"

pytestmark = pytest.mark.db


def _kubeconfig(path: Path, server: str) -> Path:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "fake", "cluster": {"server": server}}],
        "users": [{"name": "berth", "user": {"token": "test"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "berth"}}],
        "current-context": "fake",
    }
    path.write_text(yaml.safe_dump(config))
    return path


def _certificate(folder: Path) -> Path:
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-keyout", str(folder / "tls.key"),
         "-out", str(folder / "tls.crt")],
        check=True, capture_output=True,
    )
    return folder


def _until(check: Callable[[], bool], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        time.sleep(0.1)


class Served:
    """One ``berth serve --kubeconfig`` process; its output goes to ``log`` as it runs."""

    def __init__(self, process: subprocess.Popen[bytes], log: Path, api: str, webhook: str):
        self.process, self.log, self.api, self.webhook = process, log, api, webhook

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture
def start(
    with_crds: FakeKubectl, fake_api: FakeApiServer, db_url: str, tmp_path: Path
) -> Iterator[Callable[[], Served]]:
    """Start Berth against the fake cluster (after the test has shaped it)."""
    started: list[Served] = []

    def run() -> Served:
        webhook_port, api_port = free_port(), free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_")}
        env["BERTH_POD_NAME"] = "berth-test-0"
        log = tmp_path / "serve.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "berth", "serve", "--port", str(api_port),
                 "--database-url", db_url, "--loop-interval", "0.2",
                 "--kubeconfig", str(_kubeconfig(tmp_path / "kubeconfig", fake_api.url)),
                 "--webhook-cert-dir", str(_certificate(tmp_path)),
                 "--webhook-port", str(webhook_port)],
                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO,
            )  # fmt: skip
        served = Served(
            process, log, f"http://127.0.0.1:{api_port}", f"https://127.0.0.1:{webhook_port}"
        )
        started.append(served)
        return served

    try:
        yield run
    finally:
        for served in started:
            served.process.send_signal(signal.SIGTERM)
            served.process.wait(timeout=30)
            print(served.output())


@pytest.fixture
def serve(start: Callable[[], Served]) -> Served:
    return start()


def test_serve_in_kubernetes_mode_admits_a_job_and_holds_the_lease(
    serve: Served, with_crds: FakeKubectl
) -> None:
    # No berth-system namespace: out of the cluster the Lease goes to the kubeconfig
    # context's namespace, else default (the kubeconfig here names none).
    assert "berth-system" not in {
        ns["metadata"]["name"] for ns in with_crds.get("/api/v1/namespaces")["items"]
    }
    setup_queues(with_crds)
    with_crds.create(JOBS, job("first", 8))
    with_crds.create(JOBS, job("second", 8))

    def first_started() -> bool:
        return with_crds.get(f"{JOBS}/first")["spec"].get("suspend") is False

    _until(first_started)
    first = with_crds.get(f"{JOBS}/first")["spec"]["template"]["spec"]
    assert first["nodeSelector"] == {"zone": "a", "gpu": "h100"}
    _until(lambda: "berth.dev/wait-reason" in with_crds.get(f"{JOBS}/second")["metadata"].get("annotations", {}))
    second = with_crds.get(f"{JOBS}/second")
    assert second["spec"]["suspend"] is True
    assert second["metadata"]["annotations"]["berth.dev/wait-reason"] == "WaitingForQuota"
    lease = with_crds.get(f"{LEASES}/berth-leader")
    assert lease["spec"]["holderIdentity"] == "berth-test-0"
    leader = httpx.get(f"{serve.api}/api/v1/leader", timeout=5).json()
    assert leader["identity"] == leader["leader"] == "berth-test-0"
    assert leader["leading"] is True and leader["reason"] is None
    assert leader["lease"] == "the Lease default/berth-leader"
    since = datetime.fromisoformat(leader["since"].replace("Z", "+00:00"))
    assert since == datetime.fromisoformat(lease["spec"]["acquireTime"].replace("Z", "+00:00"))


def test_a_forbidden_lease_is_logged_and_the_leader_route_says_why(
    start: Callable[[], Served], with_crds: FakeKubectl
) -> None:
    with_crds.forbid("coordination.k8s.io", "leases")
    served = start()

    def follower_says_why() -> bool:
        try:
            answer = httpx.get(f"{served.api}/api/v1/leader", timeout=5)
        except httpx.HTTPError:
            return False
        return answer.status_code == 200 and answer.json()["reason"] is not None and (
            "forbidden" in answer.json()["reason"]
        )

    _until(follower_says_why)
    leader = httpx.get(f"{served.api}/api/v1/leader", timeout=5).json()
    assert leader["leading"] is False and leader["leader"] is None
    assert leader["reason"].startswith("cannot read the Lease default/berth-leader: forbidden: ")
    assert 'cannot get resource "leases"' in leader["reason"]
    _until(lambda: "forbidden" in served.output())
    lines = [line for line in served.output().splitlines() if "forbidden" in line]
    assert "cannot read the Lease default/berth-leader: forbidden" in lines[0]


def test_webhook_suspends_a_new_job_over_https(serve: Served) -> None:
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "abc-123",
            "operation": "CREATE",
            "kind": {"group": "batch", "version": "v1", "kind": "Job"},
            "object": job("new", 1, suspend=False) | {"metadata": {"name": "new", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "main"}}},
        },
    }

    def answer() -> httpx.Response | None:
        try:
            return httpx.post(f"{serve.webhook}/mutate/batch/v1/jobs", json=review, verify=False, timeout=5)
        except httpx.HTTPError:
            return None

    _until(lambda: answer() is not None)
    response = answer()
    assert response is not None and response.status_code == 200
    body = response.json()["response"]
    assert body["uid"] == "abc-123" and body["allowed"] is True
    assert body["patchType"] == "JSONPatch"
