"""A response model serialized the way FastAPI would, without FastAPI validating it again."""

from __future__ import annotations

from fastapi.responses import Response
from pydantic import BaseModel


def json_response(model: BaseModel) -> Response:
    """``model`` as JSON (camelCase aliases), the same bytes FastAPI writes for a route
    with ``response_model``; the route keeps ``response_model`` for its OpenAPI schema."""
    # A returned model is validated against the response model once more, in another
    # threadpool hop for a sync route: the models built here are already valid.
    return Response(model.model_dump_json(by_alias=True), media_type="application/json")
