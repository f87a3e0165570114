"""The read-only MCP server, driven by the ``mcp`` SDK's own client: over streamable HTTP at
``/mcp`` of a served app (behind its bearer tokens) and over stdio by spawning ``berth mcp``.
Every tool's structured answer is the REST answer for the same ledger and caller; a tenant
sees no other namespace's work; nothing is written."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

import anyio
import httpx
import httpx2
import pytest
import sqlalchemy as sa
from builders.reads import World, berth_context, serve
from builders.served import engine_for, running
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, TextContent, Tool

from api.app import create_app
from api.auth import parse_tokens
from quota.core.model import NodeHealth
from quota.ledger import nodes as ledger_nodes
from quota.ledger.connect import Transactions, read_only

pytestmark = pytest.mark.db

TOKENS = parse_tokens("root-secret-token-1:admin,tenant-secret-token-3:read:team-a")
ADMIN = {"authorization": "Bearer root-secret-token-1"}
TENANT = {"authorization": "Bearer tenant-secret-token-3"}
GPU = "nvidia.com/gpu"
TOOLS = {"why_pending", "queue_status", "list_pending", "usage", "node_health",
         "workload_history", "audit"}  # fmt: skip
OBJECTS = "---\n".join(
    [
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: shared}\n"
        "spec:\n  namespaceSelector: {}\n  resourceGroups:\n"
        f"    - coveredResources: [{GPU}]\n      flavors:\n        - name: h100\n"
        f"          resources:\n            - {{name: {GPU}, nominalQuota: 8}}\n",
        *(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
            f"metadata: {{name: main, namespace: {ns}}}\nspec: {{clusterQueue: shared}}\n"
            for ns in ("team-a", "rival")
        ),
        "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-1}\n"
        f"status:\n  capacity: {{{GPU}: '8'}}\n  allocatable: {{{GPU}: '8'}}\n",
    ]
)


@pytest.fixture(scope="module")
def ledger(pg_server: Any, migrated_template: str) -> Iterator[str]:
    """Rival's work holds the quota team-a waits for, and waits behind it; a finished job;
    a cordoned node."""
    url = pg_server.create(template=migrated_template)
    w = World(url)
    try:
        w.apply(OBJECTS)
        w.submit("done", 2, "team-a", queue="main")
        w.cycle()
        w.advance(minutes=10)
        w.finish("team-a", "done")
        w.submit("their-hog", 8, "rival", queue="main")
        w.cycle()
        w.advance(minutes=1)
        w.submit("want", 4, "team-a", queue="main")
        w.submit("their-next", 4, "rival", queue="main")
        w.cycle()
        with w.sessions() as session:
            ledger_nodes.set_health(session, "gpu-1", NodeHealth.HEALTHY, NodeHealth.CORDONED,
                                    why="fan failure", actor="test")  # fmt: skip
        yield url
    finally:
        w.close()
        pg_server.drop(url)


@pytest.fixture(scope="module")
def api(ledger: str) -> Iterator[httpx.Client]:
    with serve(ledger, TOKENS) as client:
        yield client


Call = tuple[str, dict[str, Any]]


def over_http(api: httpx.Client, headers: dict[str, str], *calls: Call) -> list[CallToolResult]:
    """``calls`` made in one session with the server at ``/mcp`` of ``api``."""

    async def session() -> list[CallToolResult]:
        async with httpx2.AsyncClient(headers=headers, timeout=10) as http:
            transport = streamable_http_client(str(api.base_url.join("/mcp")), http_client=http)
            async with Client(transport) as client:
                return [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return anyio.run(session)


def over_stdio(url: str, *calls: Call) -> tuple[list[Tool], list[CallToolResult]]:
    """The tools ``berth mcp`` lists, and ``calls`` made to it, spawned over ``url``."""
    berth = shutil.which("berth", path=str(Path(sys.executable).parent)) or "berth"

    async def session() -> tuple[list[Tool], list[CallToolResult]]:
        server = StdioServerParameters(command=berth, args=["mcp", "--database-url", url])
        async with Client(server) as client:
            listed = (await client.list_tools()).tools
            return listed, [await client.call_tool(tool, arguments) for tool, arguments in calls]

    return anyio.run(session)


def _text(result: CallToolResult) -> str:
    return " ".join(c.text for c in result.content if isinstance(c, TextContent))


# Each tool's call, and the REST read that answers the same question.
CALLS = [
    pytest.param("why_pending", {"namespace": "team-a", "name": "want"},
                 "/api/v1/workloads/team-a/want", {}, id="why a workload waits"),
    pytest.param("queue_status", {"cluster_queue": "shared"},
                 "/api/v1/clusterqueues/shared", {}, id="a ClusterQueue's live status"),
    pytest.param("list_pending", {"cluster_queue": "shared", "limit": 5},
                 "/api/v1/workloads", {"state": "Pending", "clusterQueue": "shared", "limit": 5},
                 id="pending work, filtered"),
    pytest.param("list_pending", {"reason": "WaitingForQuota"},
                 "/api/v1/workloads", {"state": "Pending", "reason": "WaitingForQuota"},
                 id="pending work by wait reason"),
    pytest.param("usage", {"window": "1d", "group_by": "namespace"},
                 "/api/v1/usage", {"groupBy": "namespace"}, id="metered usage over a window"),
    pytest.param("node_health", {}, "/api/v1/node-health", {}, id="every node's health"),
    pytest.param("node_health", {"node": "gpu-1"}, "/api/v1/nodes/gpu-1/history", {},
                 id="one node's health history"),
    pytest.param("workload_history", {"namespace": "team-a", "name": "done"},
                 "/api/v1/workloads/team-a/done/history", {}, id="a finished workload's timeline"),
    pytest.param("audit", {"kind": "ClusterQueue"}, "/api/v1/audit", {"kind": "ClusterQueue"},
                 id="the audit log, filtered by kind"),
]  # fmt: skip


TOOL_CALLS = [cast(Call, tuple(c.values[:2])) for c in CALLS]


def _same(tool: dict[str, Any] | None, rest: dict[str, Any]) -> bool:
    """Equal, but for an estimated start: computed from the clock when each answer is made."""
    if tool is None:
        return False
    tool, rest = dict(tool), dict(rest)
    at = [d.pop("estimatedStart", None) for d in (tool, rest)]
    if at[0] is not None and at[1] is not None:
        first, second = (datetime.fromisoformat(e.pop("at")) for e in at)
        if abs(first - second) > timedelta(seconds=5):
            return False
    return tool == rest and at[0] == at[1]


def _rest(api: httpx.Client, path: str, params: dict[str, Any], data: dict[str, Any],
          headers: dict[str, str]) -> Any:  # fmt: skip
    if path == "/api/v1/usage":  # the window the tool chose, as from/to
        params = {**params, "from": data["from"], "to": data["to"]}
    response = api.get(path, params=params, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize(("tool", "arguments", "path", "params"), CALLS)
@pytest.mark.parametrize("caller", [pytest.param(ADMIN, id="admin"),
                                    pytest.param(TENANT, id="tenant")])  # fmt: skip
def test_each_tool_answers_what_rest_answers_over_http(
    api: httpx.Client, caller: dict[str, str], tool: str, arguments: dict[str, Any],
    path: str, params: dict[str, Any],
) -> None:  # fmt: skip
    [result] = over_http(api, caller, (tool, arguments))
    if tool == "audit" and caller is TENANT:
        assert result.is_error and "Forbidden" in _text(result)
        assert api.get(path, params=params, headers=caller).status_code == 403
        return
    assert not result.is_error, result.content
    data = result.structured_content
    assert _same(data, _rest(api, path, params, data or {}, caller))
    assert _text(result).strip()


def test_stdio_lists_every_tool_read_only_and_answers_as_rest(
    api: httpx.Client, ledger: str
) -> None:
    listed, answers = over_stdio(ledger, *TOOL_CALLS)
    assert {t.name for t in listed} == TOOLS
    assert all(t.annotations and t.annotations.read_only_hint for t in listed)
    for call, result in zip(CALLS, answers, strict=True):
        _, _, path, params = call.values
        data = result.structured_content
        assert _same(data, _rest(api, path, params, data or {}, ADMIN)), call.id  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        pytest.param("why_pending", {"namespace": "rival", "name": "their-hog"},
                     id="another namespace's workload is refused"),
        pytest.param("workload_history", {"namespace": "rival", "name": "their-hog"},
                     id="another namespace's history is refused"),
        pytest.param("list_pending", {"namespace": "rival"},
                     id="another namespace's pending list is refused"),
    ],
)  # fmt: skip
def test_a_tenant_cannot_see_another_namespace(
    api: httpx.Client, tool: str, arguments: dict[str, Any]
) -> None:
    why_mine: Call = ("why_pending", {"namespace": "team-a", "name": "want"})
    allowed, named, every = over_http(api, ADMIN, (tool, arguments), why_mine,
                                      ("list_pending", {}))  # fmt: skip
    refused, mine, pending = over_http(api, TENANT, (tool, arguments), why_mine,
                                       ("list_pending", {}))  # fmt: skip
    assert not allowed.is_error
    assert refused.is_error and "Forbidden" in _text(refused)
    # Their work holds the quota mine waits for: named to an admin, to the tenant only counted.
    assert "rival/their-hog" in str(named.structured_content)
    assert "rival" not in str(mine.structured_content) + _text(mine)
    # Their pending work is listed to an admin, left out of the tenant's list.
    assert "their-next" in str(every.structured_content)
    assert "their-next" not in str(pending.structured_content) + _text(pending)


@pytest.mark.parametrize(
    "headers",
    [pytest.param({}, id="no token"),
     pytest.param({"authorization": "Bearer not-a-token-of-this-server"}, id="a wrong token")],
)  # fmt: skip
def test_an_unauthenticated_request_is_refused(api: httpx.Client, headers: dict[str, str]) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = api.post("/mcp", json=initialize, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [pytest.param({"window": "0h"}, "positive count", id="an empty window"),
     pytest.param({"window": "1 week"}, "s, m, h or d", id="a unit it does not know"),
     pytest.param({"window": "99999999d"}, "before year 1", id="a window before year 1"),
     pytest.param({"group_by": "team"}, "groupBy takes distinct names", id="an unknown group")],
)  # fmt: skip
def test_a_bad_usage_question_is_answered_with_what_is_wrong(
    api: httpx.Client, arguments: dict[str, Any], said: str
) -> None:
    [result] = over_http(api, ADMIN, ("usage", arguments))
    assert result.is_error and said in _text(result)


def test_the_same_app_serves_mcp_again_after_a_restart(ledger: str) -> None:
    """A session manager runs once: each lifespan of the app must get its own."""
    with engine_for(ledger) as engine:
        app = create_app(berth_context(engine, TOKENS))
        for _ in range(2):
            with running(app) as base, httpx.Client(base_url=base) as api:
                [result] = over_http(api, ADMIN, ("node_health", {}))
                assert not result.is_error, result.content


def test_no_tool_writes(api: httpx.Client, ledger: str) -> None:
    before = api.get("/api/v1/audit", headers=ADMIN).json()["items"]
    over_http(api, ADMIN, *TOOL_CALLS)
    assert api.get("/api/v1/audit", headers=ADMIN).json()["items"] == before
    # And the transaction every tool runs in refuses a write outright.
    engine = sa.create_engine(ledger, poolclass=sa.NullPool)
    try:
        refused = pytest.raises(sa.exc.InternalError, match="read-only transaction")
        with refused, read_only(Transactions(engine))() as session:
            session.execute(sa.text("DELETE FROM workloads"))
    finally:
        engine.dispose()
