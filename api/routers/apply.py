"""``POST /api/v1/apply``: the same code as ``berth apply``, all or nothing."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from api.deps import ContextDep, RawBody
from api.schemas.errors import error_responses
from api.schemas.manifests import ApplyResultOut, manifest_body
from quota.ledger.apply import apply_objects
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts

router = APIRouter(prefix="/api/v1", tags=["apply"])


@router.post(
    "/apply",
    response_model=ApplyResultOut,
    openapi_extra={
        "requestBody": manifest_body(
            "ApplyBody", "quota objects, Namespaces and Nodes, as berth apply reads them"
        )
    },
    responses=error_responses(409, 413),
)
def apply(body: RawBody, request: Request, ctx: ContextDep) -> JSONResponse:
    """Create or replace the objects of a multi-document YAML or JSON body, all or none.

    Every problem of every object is answered at once (422, each naming its document,
    object and field), including what the schema cannot say: checks across fields (a
    resource group's flavors and resources, borrowing and lending limits, quantities) and
    across objects (one name defined twice), and annotations over 256 KiB in total."""
    objects = parse_texts([("request", body.decode("utf-8", errors="replace"))])
    with ctx.session_scope() as session:
        result = apply_objects(Ledger(session), objects, actor=_actor(request))
    return JSONResponse(
        {
            "changes": [
                {"kind": c.kind, "name": c.name, "action": c.action} for c in result.changes
            ],
            "warnings": [w.to_dict() for w in result.warnings],
        }
    )


def _actor(request: Request) -> str:
    client = request.client.host if request.client else "unknown"
    return f"api:{client}"
