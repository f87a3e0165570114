"""A read-only MCP server: the REST reads as tools for AI assistants (``berth mcp`` over
stdio, and streamable HTTP at ``/mcp`` behind the API's bearer tokens).

Each tool calls the REST route that answers the same question, with the same caller, so
its structured content *is* the REST answer (same queries, same shaping, same tenant
redaction by ``api.tenancy``); the text content is a paragraph written from that answer.
There are no write tools: every tool is a route of a read router, marked read-only.

Over HTTP the caller is the grant the request's bearer token carries (``api.auth``), put in
the request's scope by ``Guarded`` before the MCP transport sees the request; a request
without a valid token is answered 401 like any other route. Over stdio the caller is the
local operator, who already holds the database's credentials: it sees everything.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from api import auth
from api.auth import Grant
from api.deps import AppContext
from api.pagination import DEFAULT_LIMIT, MAX_LIMIT
from api.params import Rfc3339
from api.routers import audit as audit_routes
from api.routers import nodes, status, workloads
from quota.core.errors import BerthError
from quota.core.reasons import WaitReason
from quota.core.workload import WorkloadState
from quota.ledger.connect import read_only
from quota.ledger.reads.queue_cache import QuotaObjectCache
from quota.ledger.reads.usage import GROUPS
from quota.ledger.repository import Ledger

PATH = "/mcp"
CallerOf = Callable[[Context], Grant | None]
_GRANT = "berth_grant"  # the key of the caller's grant in the request scope's state
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
_WINDOW = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}

Namespace = Annotated[str, Field(min_length=1, max_length=63, pattern=r"^[^\x00]*$")]
Name = Annotated[str, Field(min_length=1, max_length=253, pattern=r"^[^\x00]*$")]
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT)]


def build(context: AppContext, caller_of: CallerOf, objects: QuotaObjectCache) -> MCPServer:
    """The server and its tools over ``context``'s ledger; ``caller_of`` says whose call."""
    # Every tool's transaction is READ ONLY: PostgreSQL itself refuses a write from here.
    context = dataclasses.replace(context, session_scope=read_only(context.session_scope))
    server: MCPServer = MCPServer(
        "berth",
        instructions="Read-only access to Berth's quota ledger: why a workload waits, "
        "queue status, pending work, metered usage, node health, history, audit.",
    )

    def ledger_read(read: Callable[[Ledger], Any]) -> Any:
        with context.session_scope() as session:
            return read(Ledger(session))

    def answer(ctx: Context, read: Callable[[Grant | None], Any], say: Summary) -> CallToolResult:
        try:
            data = _jsonable(read(caller_of(ctx)))
        except BerthError as exc:
            raise ToolError(f"{exc.code}: {exc}") from exc
        return CallToolResult(content=[TextContent(type="text", text=say(data))],
                              structured_content=data)  # fmt: skip

    tool = server.tool(annotations=_READ_ONLY, structured_output=False)

    @tool
    def why_pending(namespace: Namespace, name: Name, ctx: Context) -> CallToolResult:
        """Why a workload waits (or runs): its state, reasons, hints, who is ahead, when it
        may start (GET /api/v1/workloads/{namespace}/{name})."""
        return answer(
            ctx, lambda c: workloads.get_workload(namespace, name, context, c), _why_summary
        )

    @tool
    def queue_status(cluster_queue: Name, ctx: Context) -> CallToolResult:
        """A ClusterQueue's spec and live quota, usage, borrowing and counts
        (GET /api/v1/clusterqueues/{name})."""
        return answer(
            ctx, lambda c: status.get_cluster_queue(cluster_queue, context, objects, c),
            _queue_summary,
        )  # fmt: skip

    @tool
    def list_pending(
        ctx: Context,
        namespace: Namespace | None = None,
        cluster_queue: Name | None = None,
        reason: WaitReason | None = None,
        limit: Limit = DEFAULT_LIMIT,
    ) -> CallToolResult:
        """Pending workloads in submission order, filtered by namespace, ClusterQueue and
        primary wait reason (GET /api/v1/workloads?state=Pending)."""
        return answer(
            ctx,
            lambda c: ledger_read(lambda ledger: workloads.list_workloads(
                ledger, c, namespace=namespace, cluster_queue=cluster_queue,
                state=WorkloadState.PENDING, reason=reason, limit=limit,
            )),
            _pending_summary,
        )  # fmt: skip

    @tool
    def usage(
        ctx: Context,
        window: Annotated[str, Field(description="how far back from now: 30m, 24h, 7d")] = "1d",
        group_by: Annotated[
            str, Field(description="comma-separated, each at most once: " + ", ".join(GROUPS))
        ] = "clusterQueue,flavor",
    ) -> CallToolResult:
        """Metered resource-seconds, waste, fault time and cost per group over the last
        ``window`` (GET /api/v1/usage?from=…&to=…&groupBy=…)."""
        end = datetime.now(UTC)
        start = _window_start(window, end)
        return answer(
            ctx,
            lambda c: ledger_read(lambda ledger: status.get_usage(ledger, c, start, end, group_by)),
            _usage_summary,
        )

    @tool
    def node_health(ctx: Context, node: Name | None = None) -> CallToolResult:
        """Every node's health (GET /api/v1/node-health), or one node's transitions and the
        work its faults displaced (GET /api/v1/nodes/{node}/history)."""
        if node is None:
            return answer(ctx, lambda _: ledger_read(nodes.node_health), _nodes_summary)
        return answer(
            ctx, lambda c: ledger_read(lambda ledger: nodes.history(node, ledger, c)),
            _node_summary,
        )  # fmt: skip

    @tool
    def workload_history(namespace: Namespace, name: Name, ctx: Context) -> CallToolResult:
        """A workload's reason timeline with durations, admissions, evictions and requeues
        (GET /api/v1/workloads/{namespace}/{name}/history)."""
        return answer(
            ctx,
            lambda c: ledger_read(lambda ledger: workloads.get_history(namespace, name, ledger, c)),
            _history_summary,
        )

    @tool
    def audit(
        ctx: Context, kind: Name | None = None, name: Name | None = None,
        since: Rfc3339 | None = None, limit: Limit = DEFAULT_LIMIT,
    ) -> CallToolResult:  # fmt: skip
        """Who changed what and when, newest first; admin tokens only (GET /api/v1/audit)."""

        def read(caller: Grant | None) -> Any:
            auth.require_admin_reader(caller)
            return ledger_read(
                lambda ledger: audit_routes.list_audit(ledger, kind, name, since, limit)
            )

        return answer(ctx, read, _audit_summary)

    return server


def stdio_caller(_: Context) -> Grant | None:
    """Over stdio: the local operator, who holds the database's credentials."""
    return None


def http_caller(ctx: Context) -> Grant | None:
    """Over HTTP: the grant ``Guarded`` found for the request (refused when there is none)."""
    request = ctx.request_context.request
    state = request.scope.get("state", {}) if isinstance(request, Request) else {}
    if _GRANT not in state:
        raise ToolError("Unauthorized: the request carries no checked bearer token")
    grant: Grant | None = state[_GRANT]
    return grant


def http_transport(server: MCPServer) -> AbstractAsyncContextManager[None]:
    """Run the streamable HTTP transport (stateless, JSON answers) for one lifespan of the
    app: a session manager runs once, so each lifespan gets a new one."""
    # Bearer tokens authenticate every request, as on every other route; the SDK's
    # Host-header check (DNS rebinding) would refuse the names Berth is served under.
    server.streamable_http_app(
        streamable_http_path=PATH, stateless_http=True, json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )  # fmt: skip
    return server.session_manager.run()


class Guarded:
    """``server``'s transport (``http_transport``) behind the read scope of ``api.auth``:
    401 without a valid token. (A class, not a closure: Starlette's ``Route`` treats a plain
    function as a request handler.)"""

    def __init__(self, server: MCPServer, tokens: Callable[[], tuple[Grant, ...]]) -> None:
        self.server = server
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            try:
                grant = auth.authenticate(self.tokens(), Request(scope).headers)
            except auth.Unauthorized as exc:
                response: Response = JSONResponse(
                    {"error": exc.to_dict()}, status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )  # fmt: skip
                await response(scope, receive, send)
                return
            scope.setdefault("state", {})[_GRANT] = grant
        await self.server.session_manager.handle_request(scope, receive, send)


Summary = Callable[[dict[str, Any]], str]


def _jsonable(value: Any) -> dict[str, Any]:
    """A route's answer as the JSON REST sends: a response's body, or a model by alias."""
    if isinstance(value, Response):
        data: dict[str, Any] = json.loads(bytes(value.body))
        return data
    dumped: dict[str, Any] = value.model_dump(mode="json", by_alias=True)
    return dumped


def _window_start(text: str, end: datetime) -> datetime:
    """When a window of ``text`` (``30m``, ``24h``, ``7d``) ending at ``end`` begins."""
    found = _WINDOW.match(text)
    if found is None or int(found.group(1)) == 0:
        raise ToolError(f"window {text!r}: expected a positive count and s, m, h or d (24h)")
    try:
        return end - timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})
    except OverflowError:
        raise ToolError(f"window {text!r} reaches before year 1") from None


def _why_summary(w: Mapping[str, Any]) -> str:
    where = f" in ClusterQueue {w['clusterQueue']}" if w.get("clusterQueue") else ""
    text = f"Workload {w['namespace']}/{w['name']} is {w['state']}{where}."
    if w.get("position") is not None:
        text += f" It is at position {w['position']} ({w.get('aheadCount') or 0} ahead)."
    if w.get("reason"):
        text += f" Reason {w['reason']}: {w.get('message') or ''}".rstrip() + "."
    if w.get("hints"):
        text += " Hints: " + " ".join(str(h) for h in w["hints"])
    if w.get("estimatedStart"):
        text += f" Estimated start: {w['estimatedStart']['at']}."
    return text


def _history_summary(h: Mapping[str, Any]) -> str:
    return (
        f"Workload {h['namespace']}/{h['name']} is {h['state']}; admitted "
        f"{h['admissions']} time(s), evicted {h['evictionCount']} time(s). {h['summary']}"
    )


def _queue_summary(q: Mapping[str, Any]) -> str:
    s = q["status"]
    used = "; ".join(
        f"{f['name']}: " + ", ".join(f"{r['name']} {r['used']} of {r['nominal']}"
                                     for r in f["resources"])
        for f in s["flavors"]
    )  # fmt: skip
    by_reason = ", ".join(f"{k} {v}" for k, v in sorted(s["pendingByReason"].items()))
    return (
        f"ClusterQueue {q['metadata']['name']}: {s['pendingWorkloads']} pending"
        f"{f' ({by_reason})' if by_reason else ''}, {s['admittedWorkloads']} admitted, "
        f"{s['reservingWorkloads']} reserving quota. Used: {used or 'no quota declared'}."
    )


def _pending_summary(page: Mapping[str, Any]) -> str:
    items = page["items"]
    if not items:
        return "No pending workloads match."
    counts = Counter(str(w.get("reason")) for w in items)
    first = items[0]
    return (
        f"{len(items)} pending workload(s){' (more on later pages)' if page['nextCursor'] else ''}"
        f", by reason: {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}. "
        f"Oldest: {first['namespace']}/{first['name']} ({first.get('message') or first['reason']})."
    )


def _usage_summary(report: Mapping[str, Any]) -> str:
    totals: dict[str, float] = {}
    for item in report["items"]:
        totals[item["resource"]] = totals.get(item["resource"], 0) + item["resourceHours"]
    spent = ", ".join(f"{hours:g} {name}-hours" for name, hours in sorted(totals.items()))
    return (
        f"From {report['from']} to {report['to']}, {len(report['items'])} line(s) grouped by "
        f"{', '.join(report['groupBy']) or 'nothing'}: {spent or 'nothing metered'}."
    )


def _nodes_summary(report: Mapping[str, Any]) -> str:
    unhealthy = [n for n in report["items"] if n["health"] != "Healthy"]
    named = ", ".join(f"{n['node']} {n['health']} since {n['healthSince']}" for n in unhealthy)
    return (
        f"{len(report['items'])} node(s), {len(unhealthy)} not Healthy"
        f"{': ' + named if named else ''}."
    )


def _node_summary(node: Mapping[str, Any]) -> str:
    last = node["transitions"][-1] if node["transitions"] else None
    why = f" ({last['why']})" if last else ""
    return (
        f"Node {node['node']} is {node['health']} since {node['healthSince']}{why}; "
        f"{len(node['transitions'])} transition(s), "
        f"{len(node['displaced'])} workload(s) displaced by its faults."
    )


def _audit_summary(page: Mapping[str, Any]) -> str:
    items = page["items"]
    if not items:
        return "No audit entries match."
    newest = items[0]
    return (
        f"{len(items)} audit entr{'y' if len(items) == 1 else 'ies'}"
        f"{' (more on later pages)' if page['nextCursor'] else ''}; newest: "
        + ", ".join(f"{k}={newest[k]}" for k in ("at", "actor", "action", "kind", "name")
                    if k in newest)
        + "."
    )  # fmt: skip
