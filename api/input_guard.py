"""Refuse path and query values PostgreSQL cannot store or compare (NUL characters)."""

from __future__ import annotations

from fastapi import Request

from quota.errors import InvalidInput, Problem


async def no_nul(request: Request) -> None:
    """Dependency: 422 naming the parameter when a path or query value holds a NUL byte."""
    values = [(f"path.{k}", v) for k, v in request.path_params.items()]
    values += [(f"query.{k}", v) for k, v in request.query_params.multi_items()]
    for field, value in values:
        if isinstance(value, str) and "\x00" in value:
            raise InvalidInput(
                [Problem("must not contain NUL characters", source="request", field=field)]
            )
