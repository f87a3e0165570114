"""``berth audit``: the installed ``berth`` command against Berth served over real HTTP, on a
ledger that every kind of writer has written (objects, workloads, the loop, a node move)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from builders.paths import REPO
from builders.reads import World, pool, serve

from api.auth import parse_tokens
from quota.core.model import NodeHealth
from quota.ledger import nodes

pytestmark = pytest.mark.db

ADMIN, READ = "root-secret-token-1", "look-secret-token-2"
TOKENS = parse_tokens(f"{ADMIN}:admin,{READ}:read")
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-1}\nstatus: {capacity: {nvidia.com/gpu: '8'}}\n"
BERTH = Path(sys.executable).with_name("berth")  # the console script pip installed


@pytest.fixture(scope="module")
def server(pg_server: Any, migrated_template: str) -> Iterator[str]:
    """One ledger for the module (the commands only read it): a pool, a node, two
    workloads the loop admitted, then the node cordoned by an operator."""
    url = pg_server.create(template=migrated_template)
    world = World(url)
    world.apply(pool(("team-a", 4)) + "---\n" + NODE)
    world.submit("a1", 2, "team-a")
    world.submit("a2", 2, "team-a")
    world.cycle()
    with world.sessions() as session:
        nodes.set_health(session, "gpu-1", NodeHealth.HEALTHY, NodeHealth.CORDONED,
                         why="fan failure", actor="ops")  # fmt: skip
    world.close()
    try:
        with serve(url, TOKENS) as client:
            yield str(client.base_url)
    finally:
        pg_server.drop(url)


def berth(server: str, *args: str, token: str | None = ADMIN) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BERTH_")}
    if token is not None:
        env["BERTH_TOKEN"] = token
    return subprocess.run(
        [str(BERTH), "audit", "--server", server, *args],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=60,
    )  # fmt: skip


def test_the_table_shows_who_changed_what_newest_first(server: str) -> None:
    done = berth(server)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["AT", "ACTOR", "ACTION", "KIND", "NAME", "VERSION", "CHANGE"]
    newest = lines[1].split(maxsplit=6)
    assert newest[1:] == ["ops", "update", "Node", "gpu-1", "-", "health: Healthy -> Cordoned, why: fan failure"]
    assert newest[0].endswith("Z") and "T" in newest[0]
    admitted = [line.split(maxsplit=6)[1:] for line in lines if " admission-loop " in line]
    assert admitted == [
        ["admission-loop", "update", "Workload", "team-a/a2", "2", "admission, state: Pending -> Admitted"],
        ["admission-loop", "update", "Workload", "team-a/a1", "2", "admission, state: Pending -> Admitted"],
    ]
    assert lines[-1].split()[1:5] == ["test", "create", "ResourceFlavor", "h100"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(["--kind", "workloads"], {("Workload", "team-a/a1"), ("Workload", "team-a/a2")}, id="one kind"),
        pytest.param(["--kind", "cq"], {("ClusterQueue", "team-a")}, id="a kind by a short name"),
        pytest.param(["--name", "a2"], {("Workload", "team-a/a2")}, id="one name"),
        pytest.param(["--kind", "Node", "--since", "10m"], {("Node", "gpu-1")}, id="since a while ago"),
        pytest.param(["--since", "2999-01-01T00:00:00Z"], set(), id="since a time to come"),
    ],
)
def test_filters(server: str, args: list[str], expected: set[tuple[str, str]]) -> None:
    done = berth(server, *args, "-o", "json")
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)
    found = {(e["kind"], e["name"] if e["namespace"] is None else f"{e['namespace']}/{e['name']}") for e in entries}
    assert found == expected


def test_json_gives_the_newest_entries_as_the_api_does(server: str) -> None:
    every = json.loads(berth(server, "-o", "json").stdout)
    done = berth(server, "--limit", "2", "-o", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == every[:2]
    assert [e["id"] for e in every] == sorted((e["id"] for e in every), reverse=True)


def test_nothing_found_says_so(server: str) -> None:
    done = berth(server, "--kind", "Topology")
    assert (done.returncode, done.stdout) == (0, "No audit entries found.\n")


@pytest.mark.parametrize(
    ("args", "token", "code", "message"),
    [
        pytest.param([], READ, 1, "only an admin token may read this", id="a read token"),
        pytest.param([], None, 1, "an Authorization: Bearer <token> (or X-Berth-Token: <token>) header is required", id="no token"),
        pytest.param(["--since", "yesterday"], ADMIN, 2, "since: 'yesterday' is not an RFC 3339 date-time", id="since not a time"),
        pytest.param(["--kind", "Gadget"], ADMIN, 2, "unknown kind 'Gadget'", id="an unknown kind"),
        pytest.param(["--limit", "0"], ADMIN, 2, "'0' is not a positive whole number", id="limit zero"),
    ],
)
def test_errors_go_to_stderr_with_an_exit_code(server: str, args: list[str], token: str | None, code: int, message: str) -> None:
    done = berth(server, *args, token=token)
    assert (done.returncode, done.stdout) == (code, "")
    assert message in done.stderr
