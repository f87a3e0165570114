"""The error answer every status >= 400 carries, and ``error_responses``: the one helper
the routes declare their error statuses with, so the OpenAPI document lists every status
an operation can answer.

Where each status is declared: the token checks (401, 403), the parameter guards (422) and
the ledger's 503 where ``api.app`` attaches the guards to a router; 404, 409 and 413 (and
403 for a tenant's namespace) by the routes that raise them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field


class ProblemOut(BaseModel):
    """One problem of an input (``quota.errors.Problem``): where it is and what is wrong."""

    message: str
    source: str = Field(description='"request" for the request body')
    document: int | None = Field(description="0-based YAML document, when there are several")
    object: str = Field(description="Kind/name or Kind/namespace/name, when known")
    field: str = Field(description="path of the field, e.g. spec.resourceGroups[0]")


class ErrorBody(BaseModel):
    code: str = Field(description="e.g. NotFound, Conflict, InvalidInput, DatabaseUnavailable")
    message: str = Field(description="what failed, naming the object and field")
    field: str | None = Field(None, description="the field or parameter at fault")
    problems: list[ProblemOut] | None = Field(
        None, description="InvalidInput: every problem found, not only the first"
    )


class ErrorResponse(BaseModel):
    error: ErrorBody


# What each status means wherever it is declared; a route may say more (``notes``).
MEANING: Mapping[int, str] = {
    401: "Unauthorized: no token (Authorization: Bearer or X-Berth-Token), or not one the "
    "server has (servers with tokens)",
    403: "Forbidden: a read token asked for a change, or a tenant token for a namespace "
    "it is not given",
    404: "NotFound: nothing by that name",
    409: "Conflict: it exists already, or changed concurrently (retry)",
    413: "PayloadTooLarge: the body is over 1 MiB",
    422: "InvalidInput or InvalidRequest: the field or parameter at fault is named",
    503: "DatabaseUnavailable: the ledger did not answer in time; nothing was written",
}
_HEADERS: Mapping[int, Mapping[str, str]] = {
    401: {"WWW-Authenticate": "Bearer"},
}


def error_responses(
    *statuses: int,
    notes: Mapping[int, str] | None = None,
    headers: Mapping[int, Mapping[str, str]] | None = None,
) -> dict[int | str, dict[str, Any]]:
    """The ``responses=`` map declaring ``statuses`` with the error schema; ``notes`` replace
    a status's description, ``headers`` (name → description) are headers it always has."""
    declared: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        response: dict[str, Any] = {
            "model": ErrorResponse,
            "description": (notes or {}).get(status) or MEANING[status],
        }
        always = {**_HEADERS.get(status, {}), **(headers or {}).get(status, {})}
        if always:
            response["headers"] = {
                name: {"description": text, "required": True, "schema": {"type": "string"}}
                for name, text in always.items()
            }
        declared[status] = response
    return declared
