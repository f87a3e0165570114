"""Errors as ``{"error": {code, message, field}}`` with the status the error carries."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from quota.core.errors import BerthError, InvalidInput


def install(app: FastAPI) -> None:
    """Register the handlers that turn Berth's errors into the REST error shape."""

    @app.exception_handler(BerthError)
    async def berth_error(_: Request, exc: BerthError) -> JSONResponse:
        body: dict[str, object] = dict(exc.to_dict())
        if isinstance(exc, InvalidInput):
            body["problems"] = [p.to_dict() for p in exc.problems]
        return JSONResponse({"error": body}, status_code=exc.status, headers=exc.headers() or None)

    @app.exception_handler(RequestValidationError)
    async def request_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        field = ".".join(str(p) for p in first.get("loc", ()))
        body = {
            "code": "InvalidRequest",
            "message": str(first.get("msg", "invalid request")),
            "field": field,
        }
        return JSONResponse({"error": body}, status_code=422)
