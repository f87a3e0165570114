"""The FastAPI application: routers, error shape, the context the shell provides."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import Depends, FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, iter_route_contexts
from starlette.routing import Route

from admission.simulate.limits import SimulationLimits
from api import aggregated, auth, deps, docs, errors, mcp, metrics, openapi
from api.body_limit import BodyLimit
from api.deps import AppContext
from api.guards import no_nul
from api.routers import (
    admission_checks,
    apply,
    audit,
    dashboard,
    deletes,
    demand,
    health,
    leader,
    nodes,
    objects,
    simulate,
    status,
    visibility,
    webhook,
    workload_actions,
    workloads,
)
from api.schemas.errors import error_responses
from quota.ledger.reads.queue_cache import QuotaObjectCache

READS = frozenset({"GET", "HEAD"})
# Worker threads for the sync routes. Every thread that runs Python competes for the
# interpreter lock with the event loop, which waits about one switch interval (5 ms) per
# competitor: with anyio's default of 40, twenty concurrent submissions held /healthz up
# for 150-200 ms; with 8 it answers within a few tens. More threads would not add
# throughput either: the work is the database's, over a pool of about as many connections.
WORKER_THREADS = 8


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    anyio.to_thread.current_default_thread_limiter().total_tokens = WORKER_THREADS
    async with mcp.http_transport(app.state.berth_mcp):  # /mcp
        yield


def create_app(context: AppContext, *, simulation: SimulationLimits | None = None) -> FastAPI:
    """Build the app around a session scope and readiness check given by the shell;
    ``simulation``: the limits of ``POST /api/v1/simulate`` (default: the built-in ones)."""
    app = FastAPI(
        title="Berth",
        version="0.1.0",
        summary="Job queueing and quota admission for shared GPU clusters",
        lifespan=_lifespan,
        docs_url=None,  # api.docs serves both pages from packaged assets
        redoc_url=None,
    )
    app.state.berth = context
    app.state.berth_quota_objects = QuotaObjectCache()
    app.state.berth_mcp = mcp.build(context, mcp.http_caller, app.state.berth_quota_objects)
    simulate.install(app, simulation or SimulationLimits())
    errors.install(app)
    auth.install(app)
    openapi.install(app, secured=bool(context.tokens))
    docs.install(app)
    app.add_middleware(BodyLimit)
    # Parameters are checked before the token: both run before any query or write. What
    # they answer is declared with them, and the ledger's 503 (every router below but the
    # simulator's reaches the ledger; it declares its own 503).
    read = [Depends(no_nul), Depends(auth.reader)]
    admin = [Depends(no_nul), Depends(auth.admin)]
    read_errors = error_responses(401, 422, 503)
    admin_errors = error_responses(401, 403, 422, 503)
    admin_read = [Depends(no_nul), Depends(auth.admin_reader)]
    app.include_router(health.router)
    # No ledger behind it: what the replica last saw of its lease.
    app.include_router(leader.router, dependencies=read, responses=error_responses(401, 422))
    metrics.install(
        app, context, dependencies=[] if context.metrics_open else read,
        responses=error_responses(503) if context.metrics_open else read_errors,
    )  # fmt: skip
    app.include_router(apply.router, dependencies=admin, responses=admin_errors)
    app.include_router(workload_actions.router, dependencies=admin, responses=admin_errors)
    app.include_router(admission_checks.router, dependencies=admin, responses=admin_errors)
    app.include_router(simulate.router, dependencies=admin, responses=admin_errors)
    app.include_router(dashboard.router)
    app.include_router(nodes.actions, dependencies=admin, responses=admin_errors)
    app.include_router(deletes.router, dependencies=admin, responses=admin_errors)
    app.include_router(audit.router, dependencies=admin_read, responses=admin_errors)
    app.include_router(nodes.reads, dependencies=read, responses=read_errors)
    app.include_router(workloads.router, dependencies=read, responses=read_errors)
    app.include_router(status.router, dependencies=read, responses=read_errors)
    app.include_router(demand.router, dependencies=read, responses=read_errors)
    app.include_router(visibility.router, dependencies=read, responses=read_errors)
    # The MCP tools are the read routes above, called with the caller a read token names.
    transport = mcp.Guarded(app.state.berth_mcp, lambda: tuple(context.tokens))
    app.router.routes.append(Route(mcp.PATH, transport, methods=["GET", "POST", "DELETE"]))
    # last: its /{plural} paths would shadow fixed ones
    app.include_router(objects.router, dependencies=read, responses=read_errors)
    check_routes(app)
    return app


def create_webhook_app(
    context: AppContext | None = None, aggregation: aggregated.Aggregation | None = None
) -> FastAPI:
    """The HTTPS listener's app: the mutating webhook, which the API server calls without a
    bearer token (TLS authenticates Berth to it), so no bearer-token route may be reachable
    there; with ``aggregation`` (and the ``context`` its routes read the ledger through),
    Kueue's visibility API for the aggregation layer too (``api.aggregated``)."""
    if (context is None) != (aggregation is None):
        raise TypeError("the aggregated API needs both the context and the aggregation")
    app = FastAPI(title="Berth admission webhook", version="0.1.0")
    errors.install(app)
    app.add_middleware(BodyLimit)
    app.add_api_route("/healthz", health.healthz, methods=["GET"], tags=["health"])
    app.include_router(webhook.router)
    if context is not None and aggregation is not None:
        app.state.berth = context
        # the aggregated servers' probes, as Kubernetes' are: unauthenticated
        app.add_api_route("/livez", health.healthz, methods=["GET"], tags=["health"])
        app.add_api_route("/readyz", health.readyz, methods=["GET"], tags=["health"])
        aggregated.install(app, aggregation)
        check_routes(app)
    return app


def check_routes(app: FastAPI) -> None:
    """Refuse, at start, a route that could acknowledge before committing or block the
    event loop: a write using the read-only ``ledger`` dependency (its commit would run
    after the response), or an ``async def`` route that reaches the ledger."""
    # Every route, those of included routers too, with the dependencies the include adds
    # (FastAPI keeps an included router whole in app.routes).
    for route in iter_route_contexts(app.routes):
        if not isinstance(route.original_route, APIRoute):
            continue
        calls = set(_calls(route.dependant))
        methods = route.methods or set()
        if methods - READS and deps.ledger in calls:
            raise RuntimeError(
                f"{sorted(methods)} {route.path}: a write must open its transaction in "
                "the route (ctx.session_scope), not through the read-only ledger dependency"
            )
        reaches_ledger = deps.ledger in calls or deps.context in calls
        if reaches_ledger and inspect.iscoroutinefunction(route.endpoint):
            raise RuntimeError(
                f"{route.path}: a route that reaches the ledger must be a plain def (it runs "
                "in the threadpool, off the event loop the admission loop shares)"
            )


def _calls(dependant: Dependant) -> list[object]:
    """What a route's dependencies call, except inside the token checks (they only read the
    context's token list)."""
    found: list[object] = []
    for sub in dependant.dependencies:
        found.append(sub.call)
        if sub.call not in (auth.reader, auth.admin, auth.admin_reader):
            found.extend(_calls(sub))
    return found
