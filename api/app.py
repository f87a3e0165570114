"""The FastAPI application: routers, error shape, the context the shell provides."""

from __future__ import annotations

from fastapi import FastAPI

from api import errors
from api.deps import AppContext
from api.routers import apply, health, objects


def create_app(context: AppContext) -> FastAPI:
    """Build the app around a session scope and readiness check given by the shell."""
    app = FastAPI(
        title="Berth",
        version="0.1.0",
        summary="Job queueing and quota admission for shared GPU clusters",
    )
    app.state.berth = context
    errors.install(app)
    app.include_router(health.router)
    app.include_router(apply.router)
    app.include_router(objects.router)  # last: its /{plural} paths would shadow fixed ones
    return app
