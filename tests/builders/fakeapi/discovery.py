"""Discovery: ``/apis`` (APIGroupList), ``/apis/GROUP`` (APIGroup) and the APIResourceLists,
from the registered resources and the APIServices (``aggregator``): an APIService's group and
version are listed in ``/apis`` once it is Available; a group's preferred version is its
APIService with the highest ``versionPriority``, and aggregated groups come after the
built-in ones by ``groupPriorityMinimum``, highest first, as kube-aggregator orders them."""

from __future__ import annotations

import copy

from builders.fakeapi.aggregator import APISERVICES, available
from builders.fakeapi.errors import ApiError
from builders.fakeapi.store import Obj, Store


def group_list(store: Store) -> Obj:
    local = sorted({r.group for r in store.resources.values() if r.group})
    services = sorted(
        (s for s in store.objects[APISERVICES].values() if available(s)),
        key=lambda s: (-int(s["spec"].get("groupPriorityMinimum") or 0), s["spec"]["group"]),
    )
    groups = local + [
        g for g in dict.fromkeys(s["spec"]["group"] for s in services) if g not in local
    ]
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [group_entry(store, g, only_available=True) for g in groups],
    }


def group_entry(store: Store, group: str, *, only_available: bool = False) -> Obj:
    services = sorted(
        (
            s
            for s in store.objects[APISERVICES].values()
            if s["spec"]["group"] == group and (available(s) or not only_available)
        ),
        key=lambda s: -int(s["spec"].get("versionPriority") or 0),
    )
    local = sorted({r.version for r in store.resources.values() if r.group == group})
    versions = list(dict.fromkeys([s["spec"]["version"] for s in services] + local))
    if not versions:
        raise ApiError(404, "NotFound", f"the server could not find the group {group}")
    entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": entries,
        "preferredVersion": entries[0],
    }


def resource_list(store: Store, group: str, version: str) -> Obj:
    found = [r for r in store.resources.values() if r.group == group and r.version == version]
    if not found:
        raise ApiError(404, "NotFound", f"the server could not find {group}/{version}")
    verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
    resources: list[Obj] = []
    for r in sorted(found, key=lambda r: r.plural):
        base = {"name": r.plural, "singularName": "", "namespaced": r.namespaced, "kind": r.kind}
        resources.append({**base, "verbs": verbs})
        if r.status:
            resources.append(
                {
                    **copy.deepcopy(base),
                    "name": f"{r.plural}/status",
                    "verbs": ["get", "patch", "update"],
                }
            )
    gv = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": resources,
    }
