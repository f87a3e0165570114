"""``GET /api/v1/<kind>`` and ``GET /api/v1/<kind>/{name}`` for every ledger kind (a tenant
gets only the LocalQueues and Namespace objects of its namespaces: ``api.tenancy``)."""

from __future__ import annotations

from fastapi import APIRouter

from api import tenancy
from api.auth import Caller, Grant
from api.deps import LedgerDep
from quota.core.errors import NotFound
from quota.core.kinds import KINDS, Kind, resolve_kind
from quota.manifests.documents import to_manifest

router = APIRouter(prefix="/api/v1", tags=["objects"])


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


@router.get("/localqueues/{namespace}/{name}")
def get_local_queue(
    namespace: str, name: str, ledger: LedgerDep, caller: Caller
) -> dict[str, object]:
    """One LocalQueue."""
    return _one(resolve_kind("LocalQueue"), ledger, caller, name, namespace)


@router.get("/{plural}")
def list_objects(plural: str, ledger: LedgerDep, caller: Caller) -> dict[str, object]:
    """Every object of a kind (resourceflavors, clusterqueues, cohorts, localqueues, …)."""
    return _list(_kind(plural), ledger, caller)


@router.get("/{plural}/{name}")
def get_object(plural: str, name: str, ledger: LedgerDep, caller: Caller) -> dict[str, object]:
    """One object of a cluster-scoped kind."""
    kind = _kind(plural)
    if kind.namespaced:
        raise NotFound(
            f"{kind.name} is namespaced: use /api/v1/{kind.plural}/{{namespace}}/{{name}}"
        )
    return _one(kind, ledger, caller, name)


def _kind(plural: str) -> Kind:
    for kind in KINDS:
        if kind.plural == plural:
            return kind
    raise NotFound(
        f"no such resource {plural!r}; expected one of: {', '.join(k.plural for k in KINDS)}",
        field="path",
    )
