"""The installed ``berth`` against Berth served over real HTTP (real PostgreSQL): every
object and workload command goes to the one server ``BERTH_SERVER`` names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders.manifests import job
from builders.paths import REPO
from builders.reads import World, pool, serve

pytestmark = pytest.mark.db
BERTH = Path(sys.executable).with_name("berth")  # the console script pip installed


@pytest.fixture
def ledger_url(pg_server: Any, migrated_template: str) -> Iterator[str]:
    url = pg_server.create(template=migrated_template)
    try:
        yield url
    finally:
        pg_server.drop(url)


@pytest.fixture
def server(ledger_url: str) -> Iterator[str]:
    with serve(ledger_url) as client:
        yield str(client.base_url)


def berth(server: str, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_")}
    env["BERTH_SERVER"] = server
    return subprocess.run(
        [str(BERTH), *args], input=stdin, capture_output=True, text=True, env=env, cwd=REPO,
        timeout=60,
    )  # fmt: skip


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_apply_says_what_it_did_per_object_in_kubectls_words(server: str) -> None:
    first = ok(berth(server, "apply", "-f", "-", stdin=pool(("team-a", 4))))
    assert first.splitlines() == [
        "resourceflavor/h100 created", "clusterqueue/team-a created",
        "localqueue/team-a/main created",
    ]  # fmt: skip
    again = ok(berth(server, "apply", "-f", "-", stdin=pool(("team-a", 4))))
    assert {line.split()[1] for line in again.splitlines()} == {"unchanged"}
    changed = ok(berth(server, "apply", "-f", "-", stdin=pool(("team-a", 6))))
    assert "clusterqueue/team-a configured" in changed.splitlines()


def test_dry_run_prints_a_diff_and_changes_nothing(server: str) -> None:
    ok(berth(server, "apply", "-f", "-", stdin=pool(("team-a", 4))))
    out = ok(berth(server, "apply", "--dry-run", "-f", "-", stdin=pool(("team-a", 6))))
    lines = out.splitlines()
    assert "clusterqueue/team-a configured (dry run)" in lines
    assert "--- clusterqueue/team-a (stored)" in lines
    assert "-        nominalQuota: '4'" in lines and "+        nominalQuota: '6'" in lines
    shown = json.loads(ok(berth(server, "get", "cq", "team-a", "-o", "json")))
    assert shown["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] == "4"


def test_dry_run_of_a_job_is_checked_by_the_server_and_not_submitted(server: str) -> None:
    manifest = pool(("team-a", 4)) + "---\n" + yaml.safe_dump(job("train", 2))
    out = ok(berth(server, "apply", "--dry-run", "-f", "-", stdin=manifest))
    assert out.splitlines()[-1] == "job/team-a/train created (dry run)"
    assert ok(berth(server, "get", "cq")) == "No ClusterQueue objects.\n"
    assert "No workloads found." in ok(berth(server, "get", "wl"))


def test_get_shows_kueues_columns_status_and_implicit_cohorts(server: str) -> None:
    ok(berth(server, "apply", "-f", "-", stdin=pool(("team-a", 4), ("team-b", 2))))
    ok(berth(server, "submit", "-f", "-", stdin=yaml.safe_dump(job("runs", 4))))
    ok(berth(server, "submit", "-f", "-", stdin=yaml.safe_dump(job("waits", 4))))
    # The served app runs no admission loop: both wait, pending in team-a's queues.
    queues = [line.split() for line in ok(berth(server, "get", "clusterqueues")).splitlines()]
    assert queues[0] == ["NAME", "COHORT", "STRATEGY", "PENDING", "ADMITTED", "USAGE"]
    assert queues[1][:5] == ["team-a", "all", "BestEffortFIFO", "2", "0"]
    assert queues[2][:5] == ["team-b", "all", "BestEffortFIFO", "0", "0"]
    local = [line.split() for line in ok(berth(server, "get", "lq", "-n", "team-a")).splitlines()]
    assert local == [["NAMESPACE", "NAME", "CLUSTERQUEUE", "PENDING", "ADMITTED"],
                     ["team-a", "main", "team-a", "2", "0"]]  # fmt: skip
    cohorts = ok(berth(server, "get", "cohorts")).splitlines()
    assert cohorts[1].split() == ["all", "-", "team-a,team-b", "<implicit>"]
    status = yaml.safe_load(ok(berth(server, "get", "cq", "team-a", "-o", "yaml")))["status"]
    assert (status["pendingWorkloads"], status["admittedWorkloads"]) == (2, 0)


def test_get_counts_what_the_loop_admitted_and_who_borrows(server: str, ledger_url: str) -> None:
    ok(berth(server, "apply", "-f", "-", stdin=pool(("team-a", 4), ("team-b", 4))))
    for name, gpus in (("runs", 4), ("borrows", 2), ("waits", 4)):
        ok(berth(server, "submit", "-f", "-", stdin=yaml.safe_dump(job(name, gpus))))
    world = World(ledger_url)
    try:
        world.cycle()  # the real admission loop: runs and borrows fit (2 borrowed from team-b)
    finally:
        world.close()
    queues = [line.split() for line in ok(berth(server, "get", "cq", "-o", "wide")).splitlines()]
    assert queues[0][-2:] == ["BORROWED", "LENT"]
    assert queues[1] == ["team-a", "all", "BestEffortFIFO", "1", "2", "h100(nvidia.com/gpu=6/4)",
                         "h100(nvidia.com/gpu=2)", "-"]  # fmt: skip
    assert queues[2] == ["team-b", "all", "BestEffortFIFO", "0", "0", "h100(nvidia.com/gpu=0/4)",
                         "-", "h100(nvidia.com/gpu=2)"]  # fmt: skip
    local = [line.split() for line in ok(berth(server, "get", "lq")).splitlines()]
    assert local[1:] == [["team-a", "main", "team-a", "1", "2"], ["team-b", "main", "team-b", "0", "0"]]
    shown = json.loads(ok(berth(server, "get", "lq", "main", "-n", "team-a", "-o", "json")))
    assert shown["status"] == {"pendingWorkloads": 1, "reservingWorkloads": 2, "admittedWorkloads": 2}


def test_get_workloads_filters_by_name_and_prints_yaml(server: str) -> None:
    ok(berth(server, "apply", "-f", "-", stdin=pool(("team-a", 4))))
    for name in ("one", "two"):
        ok(berth(server, "submit", "-f", "-", stdin=yaml.safe_dump(job(name, 1))))
    rows = ok(berth(server, "get", "wl", "two")).splitlines()
    assert [r.split()[:3] for r in rows[1:]] == [["team-a", "two", "Pending"]]
    shown = yaml.safe_load(ok(berth(server, "get", "workload", "team-a/one", "-o", "yaml")))
    assert (shown["name"], shown["state"], shown["queueName"]) == ("one", "Pending", "main")


def test_apply_of_a_job_submits_it_and_finish_and_delete_work(server: str) -> None:
    manifest = pool(("team-a", 4)) + "---\n" + yaml.safe_dump(job("train", 2))
    out = ok(berth(server, "apply", "-f", "-", stdin=manifest))
    assert out.splitlines()[-1] == "job/team-a/train created"
    assert ok(berth(server, "finish", "team-a/train")) == "workload/team-a/train finished\n"
    ok(berth(server, "submit", "-f", "-", stdin=yaml.safe_dump(job("train", 2))))
    gone = ok(berth(server, "delete", "workload", "train", "-n", "team-a"))
    assert gone == "workload/team-a/train deleted\n"
    state = json.loads(ok(berth(server, "get", "wl", "team-a/train", "-o", "json")))["state"]
    assert state == "Finished"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["get", "gadgets"], "unknown kind 'gadgets'; expected one of: resourceflavors", id="unknown kind"),
        pytest.param(["get", "cq", "ghost"], "ClusterQueue 'ghost' not found", id="unknown object"),
        pytest.param(["get", "wl", "team-a/ghost"], "Workload team-a/ghost not found", id="unknown workload"),
        pytest.param(["finish", "team-a/ghost"], "Workload team-a/ghost not found", id="finish nothing"),
        pytest.param(["delete", "cq", "ghost"], "ClusterQueue 'ghost' not found", id="delete nothing"),
        pytest.param(["finish", "no-namespace"], "expected NAMESPACE/NAME", id="a workload without namespace"),
    ],
)
def test_wrong_requests_exit_2_with_one_line(server: str, args: list[str], message: str) -> None:
    done = berth(server, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert message in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["get", "cq"], id="get"),
        pytest.param(["apply", "-f", str(REPO / "examples" / "gpu-pool.yaml")], id="apply"),
        pytest.param(["top"], id="top"),
        pytest.param(["delete", "cq", "x"], id="delete"),
        pytest.param(["finish", "a/b"], id="finish"),
    ],
)
def test_no_server_is_one_line_saying_how_to_start_one(args: list[str]) -> None:
    done = berth("http://127.0.0.1:9", *args)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("error: no Berth answers at http://127.0.0.1:9")
    assert "berth serve --demo" in line


def test_every_command_reads_the_server_it_is_pointed_at(
    server: str, pg_server: Any, migrated_template: str
) -> None:
    """Two users' servers on one machine: each command sees the one it is pointed at (the
    issue: `berth top` showed another server's queues while `apply` wrote elsewhere)."""
    other_url = pg_server.create(template=migrated_template)
    try:
        with serve(other_url) as other:
            ok(berth(server, "apply", "-f", "-", stdin=pool(("mine", 4))))
            ok(berth(str(other.base_url), "apply", "-f", "-", stdin=pool(("theirs", 2))))
            for where, name in ((server, "mine"), (str(other.base_url), "theirs")):
                names = {line.split()[0] for line in ok(berth(where, "top")).splitlines()[1:]}
                assert names == {name}
                listed = ok(berth(where, "get", "cq")).splitlines()
                assert [line.split()[0] for line in listed[1:]] == [name]
            # --server wins over BERTH_SERVER.
            flagged = ok(berth(server, "get", "cq", "--server", str(other.base_url)))
            assert flagged.splitlines()[1].split()[0] == "theirs"
    finally:
        pg_server.drop(other_url)


OTHER_KINDS = """\
apiVersion: v1
kind: Node
metadata: {name: gpu-1}
status: {capacity: {nvidia.com/gpu: '8'}, allocatable: {nvidia.com/gpu: '7'}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a, labels: {tier: gold}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: capacity}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: gpus}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ProvisioningRequestConfig
metadata: {name: gpus}
spec: {provisioningClassName: check-capacity.autoscaling.x-k8s.io, managedResources: [nvidia.com/gpu]}
"""


def test_check_set_answers_an_external_admission_check(server: str, ledger_url: str) -> None:
    checked = pool(("team-a", 4)).replace("  namespaceSelector: {}\n",
                                          "  namespaceSelector: {}\n  admissionChecks: [cap]\n")
    check = ("---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\n"
             "metadata: {name: cap}\nspec: {controllerName: example.com/cap}\n")
    ok(berth(server, "apply", "-f", "-", stdin=checked + check))
    ok(berth(server, "submit", "-f", "-", stdin=yaml.safe_dump(job("train", 2))))
    world = World(ledger_url)
    try:
        world.cycle()
        out = ok(berth(server, "check", "set", "team-a/train", "cap", "--state", "Ready",
                       "--message", "nodes are up"))
        assert out == "workload/team-a/train check cap Ready (QuotaReserved)\n"
        world.cycle()
    finally:
        world.close()
    state = json.loads(ok(berth(server, "get", "wl", "team-a/train", "-o", "json")))["state"]
    assert state == "Admitted"
    wrong = berth(server, "check", "set", "team-a/train", "cap", "--state", "Ready")
    assert wrong.returncode == 2 and "not reserving quota" in wrong.stderr


@pytest.mark.parametrize(
    ("kind", "row"),
    [
        pytest.param("nodes", ["gpu-1", "Healthy", "yes", "nvidia.com/gpu=7"], id="a Node's own status stays"),
        pytest.param("ns", ["team-a", "tier=gold"], id="Namespace"),
        pytest.param("priorityclasses", ["high", "1000"], id="WorkloadPriorityClass"),
        pytest.param("ac", ["capacity", "kueue.x-k8s.io/provisioning-request",
                            "ProvisioningRequestConfig/gpus"], id="AdmissionCheck"),
        pytest.param("prc", ["gpus", "check-capacity.autoscaling.x-k8s.io", "nvidia.com/gpu",
                             "3x", "60s..1800s"], id="ProvisioningRequestConfig"),
    ],
)
def test_get_lists_every_other_kind(server: str, kind: str, row: list[str]) -> None:
    ok(berth(server, "apply", "-f", "-", stdin=OTHER_KINDS))
    assert ok(berth(server, "get", kind)).splitlines()[1].split() == row
