"""``POST /api/v1/apply``: the same code as ``berth apply``, all or nothing; with
``?dryRun=All`` (Kubernetes' spelling) the same apply in a transaction that is rolled back,
answering what it would change (each object as stored and as it would be)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy.orm import Session

from api.deps import ContextDep, RawBody, actor, written
from api.params import DryRun
from api.schemas.errors import error_responses
from api.schemas.manifests import ApplyResultOut, manifest_body
from quota.ledger.apply import ApplyResult, apply_objects
from quota.ledger.repository import Ledger
from quota.manifests.documents import ManifestObject, parse_texts, to_manifest

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
def apply(
    body: RawBody, request: Request, ctx: ContextDep, dry_run: DryRun = None
) -> JSONResponse:
    """Create or replace the objects of a multi-document YAML or JSON body, all or none.

    Every problem of every object is answered at once (422, each naming its document,
    object and field), including what the schema cannot say: checks across fields (a
    resource group's flavors and resources, borrowing and lending limits, quantities) and
    across objects (one name defined twice), and annotations over 256 KiB in total."""
    objects = parse_texts([("request", body.decode("utf-8", errors="replace"))])
    by = actor(request)

    def work(session: Session) -> dict[str, Any]:
        ledger = Ledger(session)
        if dry_run is None:
            return _answer(apply_objects(ledger, objects, actor=by))
        before = [_stored(ledger, item) for item in objects]
        return _answer(apply_objects(ledger, objects, actor=by), before, objects)

    return JSONResponse(written(ctx, work, dry_run=dry_run is not None))


def _stored(ledger: Ledger, item: ManifestObject) -> dict[str, Any] | None:
    namespace = getattr(item.obj, "namespace", None) or None
    found = ledger.get(item.kind, str(getattr(item.obj, "name", "")), namespace)
    return None if found is None else to_manifest(found)


def _answer(
    result: ApplyResult,
    before: list[dict[str, Any] | None] | None = None,
    objects: list[ManifestObject] | None = None,
) -> dict[str, Any]:
    changes: list[dict[str, Any]] = [
        {"kind": c.kind, "name": c.name, "action": c.action} for c in result.changes
    ]
    if before is not None and objects is not None:
        for change, stored, item in zip(changes, before, objects, strict=True):
            change["before"], change["after"] = stored, to_manifest(item.obj)
    return {
        "dryRun": before is not None,
        "changes": changes,
        "warnings": [w.to_dict() for w in result.warnings],
    }
