"""``POST /api/v1/apply``: the same code as ``berth apply``, all or nothing."""

from __future__ import annotations

from fastapi import APIRouter, Request

from api.deps import ContextDep, RawBody
from quota.ledger.apply import apply_objects
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts

router = APIRouter(prefix="/api/v1", tags=["apply"])


@router.post(
    "/apply",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/yaml": {"schema": {"type": "string"}},
                "application/json": {"schema": {"type": "object"}},
            },
        }
    },
)
def apply(body: RawBody, request: Request, ctx: ContextDep) -> dict[str, object]:
    """Create or replace the objects of a multi-document YAML or JSON body."""
    objects = parse_texts([("request", body.decode("utf-8", errors="replace"))])
    with ctx.session_scope() as session:
        result = apply_objects(Ledger(session), objects, actor=_actor(request))
    return {
        "changes": [{"kind": c.kind, "name": c.name, "action": c.action} for c in result.changes],
        "warnings": [w.to_dict() for w in result.warnings],
    }


def _actor(request: Request) -> str:
    client = request.client.host if request.client else "unknown"
    return f"api:{client}"
