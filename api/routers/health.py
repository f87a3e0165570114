"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from api.deps import ContextDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", response_model=None)
def readyz(ctx: ContextDep) -> JSONResponse:
    """The database answers and its schema is at the newest migration."""
    readiness = ctx.readiness()
    status = 200 if readiness.ok else 503
    body = {"status": "ok" if readiness.ok else "unavailable", "detail": readiness.detail}
    return JSONResponse(body, status_code=status)
