"""The FastAPI application: routers, error shape, the context the shell provides."""

from __future__ import annotations

from fastapi import Depends, FastAPI

from admission.simulate_limits import SimulationLimits
from api import auth, errors, metrics
from api.body_limit import BodyLimit
from api.deps import AppContext
from api.input_guard import no_nul
from api.routers import (
    apply,
    dashboard,
    health,
    nodes,
    objects,
    simulate,
    status,
    webhook,
    workload_actions,
    workloads,
)
from quota.ledger_read_queue_cache import QuotaObjectCache


def create_app(context: AppContext, *, simulation: SimulationLimits | None = None) -> FastAPI:
    """Build the app around a session scope and readiness check given by the shell;
    ``simulation``: the limits of ``POST /api/v1/simulate`` (default: the built-in ones)."""
    app = FastAPI(
        title="Berth",
        version="0.1.0",
        summary="Job queueing and quota admission for shared GPU clusters",
    )
    app.state.berth = context
    app.state.berth_quota_objects = QuotaObjectCache()
    simulate.install(app, simulation or SimulationLimits())
    errors.install(app)
    auth.install(app)
    app.add_middleware(BodyLimit)
    # Parameters are checked before the token: both run before any query or write.
    read = [Depends(no_nul), Depends(auth.reader)]
    admin = [Depends(no_nul), Depends(auth.admin)]
    app.include_router(health.router)
    metrics.install(app, context)
    app.include_router(apply.router, dependencies=admin)
    app.include_router(workload_actions.router, dependencies=admin)
    app.include_router(simulate.router, dependencies=admin)
    app.include_router(webhook.router)
    app.include_router(dashboard.router)
    app.include_router(nodes.actions, dependencies=admin)
    app.include_router(nodes.reads, dependencies=read)
    app.include_router(workloads.router, dependencies=read)
    app.include_router(status.router, dependencies=read)
    # last: its /{plural} paths would shadow fixed ones
    app.include_router(objects.router, dependencies=read)
    return app
