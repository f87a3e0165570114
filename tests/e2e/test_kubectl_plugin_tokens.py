"""``kubectl berth`` against a Berth that requires tokens (``BERTH_TOKENS``), reached through
the service proxy of a fake API server that authenticates the kubeconfig user's token and
strips it, as the real one does (the user has the RBAC on services/proxy the README asks
for): the Berth token (``BERTH_TOKEN``) travels in
``X-Berth-Token`` and grants what it grants as a bearer token, no more."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.paths import REPO
from builders.serve_process import ServeProcess
from builders.waiting_queue import seed_waiting_queue

from berth.cli import kubectl as plugin

pytestmark = [
    pytest.mark.db,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs the kubectl binary"),
]
PLUGIN = Path(sys.executable).parent / "kubectl-berth"
ADMIN, READ, TENANT_B = "root-secret-token-1", "look-secret-token-2", "tenant-b-secret-token-3"
KUBE_TOKEN = "kube-user-token-0123"


@pytest.fixture(scope="module")
def berth_url(pg_server: Any, migrated_template: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``berth serve`` with tokens, one workload running and two waiting in team-a."""
    url = pg_server.create(template=migrated_template)
    tokens = f"{ADMIN}:admin,{READ}:read,{TENANT_B}:read:team-b"
    server = ServeProcess(url, tmp_path_factory.mktemp("serve") / "serve.log", env={"BERTH_TOKENS": tokens})
    server.start()
    try:
        server.client.headers["authorization"] = f"Bearer {ADMIN}"
        seed_waiting_queue(server.client)
        yield str(server.client.base_url).rstrip("/")
    finally:
        server.stop()
        pg_server.drop(url)


@pytest.fixture(scope="module")
def env(berth_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """PATH with the plugin; KUBECONFIG naming a fake API server that knows KUBE_TOKEN and
    whose berth-system/berth Service's endpoints are the Berth above."""
    api = FakeApiServer({KUBE_TOKEN: ("alice", ["team-a"])}).start()
    kubectl = api.client()
    try:
        kubectl.namespace(plugin.SERVICE_NAMESPACE)
        service = {"metadata": {"name": plugin.SERVICE}, "spec": {"ports": [{"name": "http", "port": 80}]}}
        kubectl.create(f"/api/v1/namespaces/{plugin.SERVICE_NAMESPACE}/services", service)
        kubectl.serve(plugin.SERVICE_NAMESPACE, plugin.SERVICE, int(plugin.SERVICE_PORT), berth_url)
        _allow_the_service_proxy(kubectl, "alice")
        tmp_path = tmp_path_factory.mktemp("kubectl")
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin" / "kubectl-berth").symlink_to(PLUGIN)
        config = api.kubeconfig(tmp_path / "kubeconfig", KUBE_TOKEN)
        base = {k: v for k, v in os.environ.items() if not k.startswith(("BERTH_", "KUBECONFIG"))}
        yield {**base, "PATH": f"{tmp_path / 'bin'}:/usr/local/bin:/usr/bin:/bin", "KUBECONFIG": str(config)}
    finally:
        kubectl.close()
        api.stop()


def _allow_the_service_proxy(kubectl: FakeKubectl, user: str) -> None:
    """The RBAC the README asks for: get and create on services/proxy in berth-system."""
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{plugin.SERVICE_NAMESPACE}"
    rule = {"apiGroups": [""], "resources": ["services/proxy"], "verbs": ["get", "create"]}
    kubectl.create(f"{rbac}/roles", {"metadata": {"name": "berth-proxy"}, "rules": [rule]})
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "berth-proxy"}
    subject = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
    kubectl.create(f"{rbac}/rolebindings", {"metadata": {"name": "berth-proxy"}, "roleRef": ref, "subjects": [subject]})


def _kubectl_berth(env: dict[str, str], token: str | None, *command: str) -> subprocess.CompletedProcess[str]:
    given = {**env, "BERTH_TOKEN": token} if token else env
    return subprocess.run(
        ["kubectl", "berth", *command], capture_output=True, text=True, env=given, cwd=REPO, timeout=60, check=False
    )


def test_the_token_reaches_berth_through_the_service_proxy(env: dict[str, str]) -> None:
    answer = _kubectl_berth(env, READ, "why", "team-a/also-waits")
    assert (answer.returncode, answer.stderr) == (0, "")
    assert "Why: WaitingForQuota" in answer.stdout


@pytest.mark.parametrize(
    ("token", "message"),
    [
        pytest.param(None, "Authorization: Bearer <token> (or X-Berth-Token: <token>) header is required", id="without a token berth answers 401"),
        pytest.param("wrong-secret-token-9", "the bearer token is not valid", id="a wrong token is refused"),
        pytest.param(TENANT_B, "this token may not see namespace 'team-a'", id="a tenant token is kept to its namespaces"),
    ],
)
def test_berth_refuses_what_the_token_does_not_grant(env: dict[str, str], token: str | None, message: str) -> None:
    answer = _kubectl_berth(env, token, "why", "team-a/also-waits")
    assert answer.returncode != 0
    assert message in answer.stderr
