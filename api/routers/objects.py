"""``GET /api/v1/<kind>`` and ``GET /api/v1/<kind>/{name}`` for every ledger kind (a tenant
gets only the LocalQueues and Namespace objects of its namespaces: ``api.tenancy``)."""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse
from starlette.convertors import Convertor, register_url_convertor

from api import tenancy
from api.auth import Caller, Grant
from api.deps import LedgerDep
from api.params import NamespaceName, ObjectName
from api.schemas.errors import error_responses
from api.schemas.manifests import ManifestList, ManifestOut
from quota.core.errors import NotFound
from quota.core.kinds import KINDS, Kind, resolve_kind
from quota.manifests.documents import to_manifest

router = APIRouter(prefix="/api/v1", tags=["objects"])
SHOWN_WITH_STATUS = ("ClusterQueue", "Cohort")


class Plural(Convertor[str]):
    """A ``{plural:kind}`` path segment matches only the kinds' plurals: any other path is
    no route of this router, so ``GET /api/v1/apply`` is a 405 naming POST, not a 404 from
    here, and an unknown kind the router's own 404."""

    regex = "|".join(re.escape(kind.plural) for kind in KINDS)

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("kind", Plural())


def _list(kind: Kind, ledger: LedgerDep, caller: Grant | None) -> dict[str, object]:
    objects = ledger.list(kind.name)
    return {
        "kind": kind.name,
        "items": [to_manifest(o) for o in objects if tenancy.visible(caller, o)],
    }


def _one(
    kind: Kind, ledger: LedgerDep, caller: Grant | None, name: str, namespace: str | None = None
) -> dict[str, object]:
    tenancy.require_object(caller, kind.name, name, namespace)
    obj = ledger.get(kind.name, name, namespace)
    if obj is None:
        shown = f"{namespace}/{name}" if namespace else name
        raise NotFound(f"{kind.name} {shown!r} not found", field="name")
    return to_manifest(obj)


@router.get(
    "/localqueues/{namespace}/{name}",
    response_model=ManifestOut,
    responses=error_responses(403, 404),
)
def get_local_queue(
    namespace: NamespaceName, name: ObjectName, ledger: LedgerDep, caller: Caller
) -> JSONResponse:
    """One LocalQueue."""
    return JSONResponse(_one(resolve_kind("LocalQueue"), ledger, caller, name, namespace))


_PLURALS = [kind.plural for kind in KINDS]
# /clusterqueues/{name} and /cohorts/{name} are answered with their status (api.routers.status).
_ONE_BY_NAME = [k.plural for k in KINDS if not k.namespaced and k.name not in SHOWN_WITH_STATUS]


@router.get(
    "/{plural:kind}",
    response_model=ManifestList,
    responses=error_responses(404, notes={404: "NotFound: no kind has that plural"}),
)
def list_objects(
    plural: Annotated[str, Path(description="the kind's plural",
                                json_schema_extra={"enum": _PLURALS})],
    ledger: LedgerDep, caller: Caller,
) -> JSONResponse:  # fmt: skip
    """Every object of a kind (resourceflavors, clusterqueues, cohorts, localqueues, …)."""
    return JSONResponse(_list(kind_by_plural(plural), ledger, caller))


@router.get(
    "/{plural:kind}/{name}", response_model=ManifestOut, responses=error_responses(403, 404)
)
def get_object(
    plural: Annotated[str, Path(description="a cluster-scoped kind's plural",
                                json_schema_extra={"enum": _ONE_BY_NAME})],
    name: ObjectName, ledger: LedgerDep, caller: Caller,
) -> JSONResponse:  # fmt: skip
    """One object of a cluster-scoped kind."""
    return JSONResponse(_one(cluster_scoped_kind(plural), ledger, caller, name))


def cluster_scoped_kind(plural: str) -> Kind:
    """The kind a ``/{plural}/{name}`` path names; NotFound for a namespaced one, saying
    which path it has instead."""
    kind = kind_by_plural(plural)
    if kind.namespaced:
        raise NotFound(
            f"{kind.name} is namespaced: use /api/v1/{kind.plural}/{{namespace}}/{{name}}"
        )
    return kind


def kind_by_plural(plural: str) -> Kind:
    for kind in KINDS:
        if kind.plural == plural:
            return kind
    raise NotFound(
        f"no such resource {plural!r}; expected one of: {', '.join(k.plural for k in KINDS)}",
        field="path",
    )
