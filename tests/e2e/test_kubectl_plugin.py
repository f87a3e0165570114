"""``kubectl berth``: the real kubectl binary finds the ``kubectl-berth`` plugin on PATH
and it prints what ``berth`` prints, against a ``berth serve`` on real PostgreSQL reached
(1) through the fake API server's service proxy with a kubeconfig naming that API server,
and (2) with ``--server``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders.fakeapi import FakeApiServer
from builders.paths import REPO
from builders.serve_process import ServeProcess
from builders.waiting_queue import seed_waiting_queue

from berth.cli import kubectl as plugin

pytestmark = [
    pytest.mark.db,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs the kubectl binary"),
]
PLUGIN = Path(sys.executable).parent / "kubectl-berth"  # the console script pip installed


# Every test here only reads: one server, ledger and fake cluster serve them all.
@pytest.fixture(scope="module")
def berth_url(
    pg_server: Any, migrated_template: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """``berth serve`` over a migrated ledger, one workload running and two waiting."""
    url = pg_server.create(template=migrated_template)
    server = ServeProcess(url, tmp_path_factory.mktemp("serve") / "serve.log")
    server.start()
    try:
        seed_waiting_queue(server.client)
        yield str(server.client.base_url).rstrip("/")
    finally:
        server.stop()
        pg_server.drop(url)


@pytest.fixture(scope="module")
def cluster(berth_url: str) -> Iterator[FakeApiServer]:
    """A fake API server with deploy/base/berth.yaml's Service, its endpoints the Berth above."""
    api = FakeApiServer().start()
    kubectl = api.client()
    try:
        kubectl.namespace(plugin.SERVICE_NAMESPACE)
        kubectl.create(
            f"/api/v1/namespaces/{plugin.SERVICE_NAMESPACE}/services",
            {"metadata": {"name": plugin.SERVICE}, "spec": {"ports": [{"name": "http", "port": 80}]}},
        )
        kubectl.serve(plugin.SERVICE_NAMESPACE, plugin.SERVICE, int(plugin.SERVICE_PORT), berth_url)
        yield api
    finally:
        kubectl.close()
        api.stop()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, cluster: FakeApiServer) -> dict[str, str]:
    """PATH with only the plugin besides the system's binaries; KUBECONFIG naming the fake
    API server as the current context's cluster, with a token for its user."""
    tmp_path = tmp_path_factory.mktemp("kubectl")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl-berth").symlink_to(PLUGIN)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": cluster.url}}],
        "users": [{"name": "me", "user": {"token": "user-token"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "me"}}],
    }))  # fmt: skip
    base = {k: v for k, v in os.environ.items() if not k.startswith(("BERTH_", "KUBECONFIG"))}
    return {**base, "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "KUBECONFIG": str(kubeconfig)}


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return _together([command], env)[0]


def _together(commands: list[list[str]], env: dict[str, str]) -> list[subprocess.CompletedProcess[str]]:
    """Run ``commands`` at once (each is mostly Python starting up), their results in order."""
    running = [
        subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)
        for c in commands
    ]
    done = []
    for command, process in zip(commands, running, strict=True):
        out, err = process.communicate(timeout=30)
        done.append(subprocess.CompletedProcess(command, process.returncode, out, err))
    return done


def _steady(text: str) -> str:
    """The output with its durations (time waited so far) and clock times blanked: two runs
    a moment apart differ only there."""
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?", "<time>", text)
    return re.sub(r"\b\d+(\.\d+)?(ms|s|m|h|d)\b", "<duration>", text)


def test_kubectl_lists_the_plugin(env: dict[str, str]) -> None:
    listed = _run(["kubectl", "plugin", "list"], env)
    assert listed.returncode == 0, listed.stderr
    assert any(line.endswith("/kubectl-berth") for line in listed.stdout.splitlines())


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["why", "team-a/also-waits"], id="why prints the reason berth why prints"),
        pytest.param(["get", "workloads", "--pending"], id="get workloads prints berth's table"),
        pytest.param(["top"], id="top prints berth's usage bars"),
        pytest.param(["history", "team-a/waits"], id="history prints berth's history lines"),
    ],
)
def test_kubectl_berth_prints_what_berth_prints(env: dict[str, str], berth_url: str, command: list[str]) -> None:
    berth, proxied, direct = _together(
        [
            [sys.executable, "-m", "berth", *command, "--server", berth_url],
            ["kubectl", "berth", *command],
            ["kubectl", "berth", *command, "--server", berth_url],
        ],
        env,
    )
    assert berth.returncode == 0, berth.stderr
    for answer in (proxied, direct):
        assert (answer.returncode, answer.stderr) == (0, "")
        assert _steady(answer.stdout) == _steady(berth.stdout)


def test_why_and_history_through_the_service_proxy(env: dict[str, str]) -> None:
    why, history = _together(
        [["kubectl", "berth", "why", "team-a/also-waits"], ["kubectl", "berth", "history", "team-a/waits"]], env
    )
    assert why.stdout.splitlines()[1].startswith(
        "Why: WaitingForQuota: insufficient unused quota for nvidia.com/gpu"
    )
    # The part `why` ends with, alone: the summary, then the rows in time order.
    lines = history.stdout.splitlines()
    assert lines[0].startswith("History: waited ")
    assert [line.split("  ")[-1].split(" for ")[0] for line in lines[1:]] == ["PendingEvaluation", "WaitingForQuota"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        pytest.param(["--service", "nothing:80"], 'services "nothing" not found', id="a Service that is not there is named"),
        pytest.param(["--context", "elsewhere"], "elsewhere", id="a context the kubeconfig lacks is named"),
    ],
)
def test_kubectl_berth_says_what_it_could_not_reach(env: dict[str, str], flags: list[str], message: str) -> None:
    answer = _run(["kubectl", "berth", "why", "team-a/also-waits", *flags], env)
    assert answer.returncode != 0
    assert message in answer.stderr


def test_defaults_name_the_service_deploy_creates() -> None:
    documents = yaml.safe_load_all((REPO / "deploy" / "base" / "berth.yaml").read_text())
    service = next(d for d in documents if d and d["kind"] == "Service")
    ports = [str(p["port"]) for p in service["spec"]["ports"]]
    assert (service["metadata"]["namespace"], service["metadata"]["name"]) == (plugin.SERVICE_NAMESPACE, plugin.SERVICE)
    assert ports[0] == plugin.SERVICE_PORT
