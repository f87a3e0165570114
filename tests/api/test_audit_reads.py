"""GET /api/v1/audit over HTTP: admin tokens only, what each writer's rows say, the filters,
pages that give every row exactly once (newest first), and 422 naming a bad parameter."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from builders.manifests import job
from builders.reads import World, pool, serve

from admission.intake.workloads import submit_workload
from api.auth import parse_tokens
from quota.core.model import NodeHealth
from quota.ledger import nodes
from quota.ledger.repository import Ledger

pytestmark = pytest.mark.db

TOKENS = parse_tokens("root-secret-token-1:admin,look-secret-token-2:read,tenant-secret-token-3:read:team-a")
ADMIN = {"authorization": "Bearer root-secret-token-1"}
NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-1}\nstatus: {capacity: {nvidia.com/gpu: '8'}}\n"
SPARE = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: spare}\n"


@pytest.fixture
def world(db_url: str) -> Iterator[World]:
    """Every writer once: objects applied, changed and deleted; workloads submitted and
    admitted by the loop; a node cordoned by an operator."""
    w = World(db_url)
    w.apply(pool(("team-a", 4), ("team-b", 4)) + "---\n" + NODE + "---\n" + SPARE)
    w.submit("a1", 2, "team-a")
    w.submit("b1", 8, "team-b")
    w.cycle()
    w.apply(pool(("team-a", 6)))  # team-a's quota grows: an update
    with w.sessions() as session:
        Ledger(session).delete("ResourceFlavor", "spare", actor="test")
        nodes.set_health(session, "gpu-1", NodeHealth.HEALTHY, NodeHealth.CORDONED,
                         why="fan failure", actor="ops")  # fmt: skip
    yield w
    w.close()


@pytest.fixture
def api(world: World) -> Iterator[httpx.Client]:
    with serve(world.url, TOKENS) as client:
        client.headers.update(ADMIN)
        yield client


def _all(api: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    response = api.get("/api/v1/audit", params={"limit": 1000, **params})
    assert response.status_code == 200, response.text
    assert response.json()["nextCursor"] is None
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def _one(api: httpx.Client, kind: str, name: str, action: str) -> dict[str, Any]:
    [entry] = [e for e in _all(api, kind=kind, name=name) if e["action"] == action]
    return entry


@pytest.mark.parametrize(
    ("token", "status"),
    [
        pytest.param(None, 401, id="no token"),
        pytest.param("look-secret-token-2", 403, id="a read token may not read the audit log"),
        pytest.param("tenant-secret-token-3", 403, id="nor may a tenant"),
        pytest.param("root-secret-token-1", 200, id="an admin token may"),
    ],
)
def test_only_admin_tokens_read_the_audit_log(world: World, token: str | None, status: int) -> None:
    with serve(world.url, TOKENS) as client:
        headers = {"authorization": f"Bearer {token}"} if token else {}
        response = client.get("/api/v1/audit", headers=headers)
    assert response.status_code == status, response.text
    if status == 403:
        assert response.json()["error"]["code"] == "Forbidden"


@pytest.mark.parametrize(
    ("kind", "name", "action", "expected"),
    [
        pytest.param("ClusterQueue", "team-a", "create", {"actor": "test", "namespace": None, "version": 1, "before": None}, id="a created object: version 1, nothing before"),
        pytest.param("ClusterQueue", "team-a", "update", {"version": 2, "changed": ["resource_groups"]}, id="a changed object: the next version and the field that changed"),
        pytest.param("ResourceFlavor", "spare", "delete", {"version": 1, "after": None}, id="a deleted object: the version deleted, nothing after"),
        pytest.param("Workload", "a1", "create", {"actor": "test", "namespace": "team-a", "version": 1}, id="a submitted workload"),
        pytest.param("Node", "gpu-1", "update", {"actor": "ops", "version": None, "changed": ["health", "why"], "before": {"health": "Healthy"}, "after": {"health": "Cordoned", "why": "fan failure"}}, id="a node health move has no version"),
    ],
)
def test_each_entry_says_who_changed_what(api: httpx.Client, kind: str, name: str, action: str, expected: dict[str, Any]) -> None:
    entry = _one(api, kind, name, action)
    assert {key: entry[key] for key in expected} == expected


def test_an_admission_is_the_loops_update_of_state_and_admission(api: httpx.Client) -> None:
    entry = _one(api, "Workload", "a1", "update")
    assert (entry["actor"], entry["version"], entry["changed"]) == ("admission-loop", 2, ["admission", "state"])
    assert (entry["before"]["state"], entry["after"]["state"]) == ("Pending", "Admitted")
    assert entry["after"]["admission"]["clusterQueue"] == "team-a"


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        pytest.param({"kind": "ClusterQueue"}, {("ClusterQueue", "team-a"), ("ClusterQueue", "team-b")}, id="by kind"),
        pytest.param({"kind": "cq"}, {("ClusterQueue", "team-a"), ("ClusterQueue", "team-b")}, id="by a name berth get takes"),
        pytest.param({"kind": "workloads"}, {("Workload", "team-a/a1"), ("Workload", "team-b/b1")}, id="workloads"),
        pytest.param({"name": "main"}, {("LocalQueue", "team-a/main"), ("LocalQueue", "team-b/main")}, id="by name, in every namespace"),
        pytest.param({"kind": "Workload", "name": "b1"}, {("Workload", "team-b/b1")}, id="by kind and name"),
        pytest.param({"kind": "Topology"}, set(), id="a kind nothing changed"),
    ],
)
def test_filters(api: httpx.Client, params: dict[str, str], expected: set[tuple[str, str]]) -> None:
    assert {(e["kind"], _key(e)) for e in _all(api, **params)} == expected


def _key(entry: dict[str, Any]) -> str:
    return entry["name"] if entry["namespace"] is None else f"{entry['namespace']}/{entry['name']}"


def test_since_keeps_the_entries_written_at_or_after_it(api: httpx.Client) -> None:
    everything = _all(api)
    times = sorted({_time(e) for e in everything})  # one per writing transaction
    cut = times[len(times) // 2]
    later = _all(api, since=cut.isoformat())
    assert later == [e for e in everything if _time(e) >= cut]
    assert 0 < len(later) < len(everything)
    elsewhere = cut.astimezone(timezone(timedelta(hours=-5))).isoformat()
    assert _all(api, since=elsewhere) == later  # the same instant in another zone
    # A date-time before year 1 in UTC is still one: every entry was written after it.
    assert _all(api, since="0001-01-01T00:00:00+05:00") == _all(api)


def _time(entry: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(entry["at"])


@pytest.mark.parametrize("size", [1, 3, 7])
def test_paging_gives_every_entry_once_newest_first(api: httpx.Client, size: int) -> None:
    everything = _all(api)
    seen: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": size}
    while True:
        page = api.get("/api/v1/audit", params=params).json()
        assert len(page["items"]) <= size
        seen += page["items"]
        if page["nextCursor"] is None:
            break
        params["cursor"] = page["nextCursor"]
    assert seen == everything
    ids = [e["id"] for e in seen]
    assert ids == sorted(set(ids), reverse=True)


def test_paging_filtered_stays_within_the_filter(api: httpx.Client) -> None:
    first = api.get("/api/v1/audit", params={"kind": "Workload", "limit": 2}).json()
    rest = api.get("/api/v1/audit", params={"kind": "Workload", "cursor": first["nextCursor"]}).json()
    assert [e["id"] for e in first["items"] + rest["items"]] == [e["id"] for e in _all(api, kind="Workload")]


def test_a_change_committed_after_the_first_page_is_on_a_later_one(world: World, api: httpx.Client) -> None:
    """A transaction that took its id first but committed last still shows up: pages go
    down from the newest, and its id lies below the cursor."""
    with world.sessions() as slow:
        submit_workload(Ledger(slow), job("late", 1), now=world.now, actor="slow")
        world.submit("quick", 1, "team-a")  # a later id, committed first
        first = api.get("/api/v1/audit", params={"limit": 1}).json()
        assert [e["name"] for e in first["items"]] == ["quick"]
    rest = _paged(api, first["nextCursor"])
    assert rest[0]["name"] == "late"


def _paged(api: httpx.Client, cursor: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"cursor": cursor, "limit": 1000}
    while True:
        page = api.get("/api/v1/audit", params=params).json()
        items += page["items"]
        if page["nextCursor"] is None:
            return items
        params["cursor"] = page["nextCursor"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        pytest.param({"kind": "Gadget"}, "kind", id="unknown kind"),
        pytest.param({"since": "yesterday"}, "query.since", id="since not a time"),
        pytest.param({"since": "2026-11-30T21:00:00"}, "query.since", id="since without a zone"),
        pytest.param({"since": "2026-11-30"}, "query.since", id="since a date alone"),
        pytest.param({"name": ""}, "query.name", id="empty name"),
        pytest.param({"name": "x" * 254}, "query.name", id="name longer than any object's"),
        pytest.param({"limit": "0"}, "query.limit", id="limit zero"),
        pytest.param({"limit": "1001"}, "query.limit", id="limit above the maximum"),
        pytest.param({"cursor": "not-a-cursor"}, "cursor", id="a cursor the API never gave"),
        pytest.param({"kind": "Node\0"}, "query.kind", id="a NUL character"),
    ],
)
def test_bad_parameters_are_422_naming_the_parameter(api: httpx.Client, params: dict[str, str], field: str) -> None:
    response = api.get("/api/v1/audit", params=params)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == field
