"""``DELETE /api/v1/<kind>/{name}`` and ``DELETE /api/v1/localqueues/{namespace}/{name}``:
remove one object (audited), answering it as it was; what referred to it waits with
``Misconfigured`` until it is back, as in Kueue."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request
from fastapi.responses import JSONResponse

from api.deps import ContextDep, actor
from api.params import NamespaceName, ObjectName
from api.routers.objects import cluster_scoped_kind
from api.schemas.errors import error_responses
from api.schemas.manifests import ManifestOut
from quota.core.errors import NotFound
from quota.core.kinds import KINDS, Kind, resolve_kind
from quota.ledger.repository import Ledger
from quota.manifests.documents import to_manifest

router = APIRouter(prefix="/api/v1", tags=["objects"])
_CLUSTER_SCOPED = [k.plural for k in KINDS if not k.namespaced]


@router.delete(
    "/localqueues/{namespace}/{name}",
    response_model=ManifestOut,
    responses=error_responses(404),
)
def delete_local_queue(
    namespace: NamespaceName, name: ObjectName, request: Request, ctx: ContextDep
) -> JSONResponse:
    """Delete one LocalQueue."""
    return JSONResponse(_delete(ctx, resolve_kind("LocalQueue"), name, namespace, request))


# ClusterQueues and Cohorts have GET routes of their own (with status); their DELETE is
# declared beside them too, so each path lists exactly the methods it answers.
@router.delete(
    "/clusterqueues/{name}", response_model=ManifestOut, responses=error_responses(404)
)
def delete_cluster_queue(name: ObjectName, request: Request, ctx: ContextDep) -> JSONResponse:
    """Delete one ClusterQueue."""
    return JSONResponse(_delete(ctx, resolve_kind("ClusterQueue"), name, None, request))


@router.delete("/cohorts/{name}", response_model=ManifestOut, responses=error_responses(404))
def delete_cohort(name: ObjectName, request: Request, ctx: ContextDep) -> JSONResponse:
    """Delete one Cohort."""
    return JSONResponse(_delete(ctx, resolve_kind("Cohort"), name, None, request))


@router.delete(
    "/{plural:kind}/{name}", response_model=ManifestOut, responses=error_responses(404)
)
def delete_object(
    plural: Annotated[str, Path(description="a cluster-scoped kind's plural",
                                json_schema_extra={"enum": _CLUSTER_SCOPED})],
    name: ObjectName, request: Request, ctx: ContextDep,
) -> JSONResponse:  # fmt: skip
    """Delete one object of a cluster-scoped kind."""
    return JSONResponse(_delete(ctx, cluster_scoped_kind(plural), name, None, request))


def _delete(
    ctx: ContextDep, kind: Kind, name: str, namespace: str | None, request: Request
) -> dict[str, object]:
    with ctx.session_scope() as session:
        ledger = Ledger(session)
        found = ledger.get(kind.name, name, namespace)
        if found is None or not ledger.delete(kind.name, name, namespace, actor=actor(request)):
            shown = f"{namespace}/{name}" if namespace else name
            raise NotFound(f"{kind.name} {shown!r} not found", field="name")
        return to_manifest(found)
