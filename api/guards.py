"""Refuse path and query values PostgreSQL cannot store or compare (NUL characters), and
JSON bodies FastAPI decodes that are over the input bounds (``quota.input_limits``)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from email.message import Message
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from quota.core.errors import InvalidInput, Problem
from quota.manifests.limits import load_json


async def no_nul(request: Request) -> None:
    """Dependency: 422 naming the parameter when a path or query value holds a NUL byte."""
    values = [(f"path.{k}", v) for k, v in request.path_params.items()]
    values += [(f"query.{k}", v) for k, v in request.query_params.multi_items()]
    for field, value in values:
        if isinstance(value, str) and "\x00" in value:
            raise InvalidInput(
                [Problem("must not contain NUL characters", source="request", field=field)]
            )


class BoundedJsonRoute(APIRoute):
    """A route whose JSON body is read by ``load_json`` before FastAPI decodes it: too deep
    a body would otherwise raise ``RecursionError`` inside FastAPI (a bare 400), and a NUL
    would reach PostgreSQL; a body that is not JSON at all is a 422 as well. Routes that
    read their body themselves do not need it."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def bounded(request: Request) -> Response:
            body = await request.body()  # cached: FastAPI reads the same bytes again
            if body and _json_or_unspecified(request.headers.get("content-type")):
                # A 422 naming the field; a body that is not JSON is a 422 too, as the
                # routes reading their own body answer (FastAPI would answer a 400).
                try:
                    load_json(body, "request")
                except ValueError as exc:  # not JSON (InvalidInput is no ValueError)
                    raise InvalidInput(
                        [Problem(f"not valid JSON: {exc}", source="request")]
                    ) from exc
            return await handler(request)

        return bounded


def _json_or_unspecified(content_type: str | None) -> bool:
    if not content_type:
        return True
    message = Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (
        subtype == "json" or subtype.endswith("+json")
    )
