"""Errors as ``{"error": {code, message, field}}`` with the status the error carries (the
model is ``api.schemas.errors.ErrorResponse``); the router's own 404 and 405 too."""

from __future__ import annotations

from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from starlette.exceptions import HTTPException
from starlette.routing import Match, Route

from quota.core.errors import BerthError, InvalidInput

# FastAPI's detail when a JSON body cannot be decoded at all.
_UNPARSABLE = "There was an error parsing the body"


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
        loc = tuple(str(p) for p in first.get("loc", ()))
        # pydantic prefixes a validator's own message with "Value error, "; the parameter's
        # name says more: "since: 'yesterday' is not an RFC 3339 date-time (...)".
        message = str(first.get("msg", "invalid request")).removeprefix("Value error, ")
        body = {
            "code": "InvalidRequest",
            "message": f"{loc[-1]}: {message}" if loc else message,
            "field": ".".join(loc),
        }
        return JSONResponse({"error": body}, status_code=422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.detail == _UNPARSABLE:
            # FastAPI's answer to a JSON body that is not even text (not UTF-8): the same
            # 422 as any other body that is not the declared JSON, as every route declares.
            body = {"code": "InvalidRequest", "message": "body: not valid JSON (UTF-8)",
                    "field": "body"}
            return JSONResponse({"error": body}, status_code=422)
        # No route for the path (404), or none for the method (405).
        code = HTTPStatus(exc.status_code).phrase.replace(" ", "").replace("-", "")
        body = {"code": code, "message": str(exc.detail)}
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = allowed_methods(request)
        return JSONResponse({"error": body}, status_code=exc.status_code, headers=headers)


def allowed_methods(request: Request) -> str:
    """Every method some route serves at the request's path (Starlette's 405 lists only
    the first such route's, and GET and POST /api/v1/workloads are two routes)."""
    methods: set[str] = set()
    for route in iter_route_contexts(request.app.routes):  # included routers' routes too
        if isinstance(route.original_route, Route) and route.methods:
            match, _ = route.matches(request.scope)
            if match is not Match.NONE:
                methods |= route.methods
    return ", ".join(sorted(methods))
