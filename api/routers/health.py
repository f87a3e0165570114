"""Liveness and readiness.

Both are ``async def`` and never wait on a worker thread or a lock: ``/healthz`` must answer
while every worker thread waits on the database. ``/readyz`` runs the shell's check in a
thread of its own, one at a time (callers during a check share its outcome, so a silent
database cannot pile up threads), and answers 503 when it takes longer than
``AppContext.readiness_seconds``.
"""

from __future__ import annotations

import asyncio
from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from api.deps import AppContext, Readiness

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: Literal["ok"]


class ReadinessOut(BaseModel):
    status: Literal["ok", "unavailable"]
    detail: str = Field(description="what was checked, or what failed")


@router.get("/healthz", response_model=Health)
async def healthz() -> dict[str, str]:
    """The process is up (and its event loop answers)."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    response_model=ReadinessOut,
    responses={503: {"model": ReadinessOut, "description": "not ready: detail says why"}},
)
async def readyz(request: Request) -> JSONResponse:
    """The database answers, its schema is at the newest migration, and (for a replica that
    runs the admission loop) a live leader exists."""
    ctx: AppContext = request.app.state.berth  # not ContextDep: no ledger I/O on this loop
    try:
        readiness = await asyncio.wait_for(
            asyncio.shield(_check(request, ctx)), ctx.readiness_seconds
        )
    except TimeoutError:
        readiness = Readiness(
            False, f"the readiness check did not finish within {ctx.readiness_seconds:g}s"
        )
    status = 200 if readiness.ok else 503
    body = {"status": "ok" if readiness.ok else "unavailable", "detail": readiness.detail}
    return JSONResponse(body, status_code=status)


def _check(request: Request, ctx: AppContext) -> asyncio.Future[Readiness]:
    """The check in flight, or a new one."""
    running: asyncio.Future[Readiness] | None = getattr(request.app.state, "berth_ready", None)
    if running is None or running.done():
        running = asyncio.ensure_future(asyncio.to_thread(_guarded, ctx))
        request.app.state.berth_ready = running
    return running


def _guarded(ctx: AppContext) -> Readiness:
    try:
        return ctx.readiness()
    except Exception as exc:  # a readiness probe answers; it never fails with a 500
        return Readiness(False, f"readiness check failed: {exc}")
