"""The fake apiserver's storage: registered resources, objects, one resourceVersion counter,
an event history (compactable, to provoke 410 Gone), the open watches and a log of every
list and watch request (so a test can see a client resume a watch rather than infer it).

Where Berth depends on it, the store refuses what a real API server refuses: a namespaced
object in a namespace that does not exist (404, the namespaces a new cluster has exist from
the start), the Job rules of ``jobs.py`` (with its minimal Job controller) and the JobSet
webhook's of ``jobsets.py``, the Pod rules of ``pods.py``, and a custom resource's CRD schema (``schemas.py``: unknown
fields pruned, wrong types refused).

Everything runs on the server's event loop; nothing here awaits, so a watch registered
right after a history replay misses no event.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from builders.fakeapi import jobs, jobsets, pods, schemas
from builders.fakeapi.errors import ApiError

Obj = dict[str, Any]


@dataclass(frozen=True)
class Resource:
    group: str  # "" for the core group
    version: str
    plural: str
    kind: str
    namespaced: bool
    status: bool = False  # has the status subresource

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        return (self.group, self.plural)


BUILTIN = (
    Resource("", "v1", "namespaces", "Namespace", namespaced=False, status=True),
    Resource("", "v1", "nodes", "Node", namespaced=False, status=True),
    Resource("", "v1", "events", "Event", namespaced=True),
    Resource("", "v1", "pods", "Pod", namespaced=True, status=True),
    Resource("", "v1", "podtemplates", "PodTemplate", namespaced=True),
    Resource("", "v1", "services", "Service", namespaced=True, status=True),
    Resource("", "v1", "configmaps", "ConfigMap", namespaced=True),
    Resource("batch", "v1", "jobs", "Job", namespaced=True, status=True),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True),
    Resource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    Resource(
        "rbac.authorization.k8s.io",
        "v1",
        "clusterrolebindings",
        "ClusterRoleBinding",
        namespaced=False,
    ),
    Resource("rbac.authorization.k8s.io", "v1", "roles", "Role", namespaced=True),
    Resource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", namespaced=True),
    Resource(
        "apiregistration.k8s.io", "v1", "apiservices", "APIService", namespaced=False, status=True
    ),
    Resource(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        namespaced=False,
        status=True,
    ),
)


# What ``kubeadm init`` leaves: the namespaces every cluster has.
INITIAL_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")
NAMESPACES = ("", "namespaces")
JOBS = ("batch", "jobs")
JOBSETS = ("jobset.x-k8s.io", "jobsets")  # once its CRD is installed
PODS = ("", "pods")


@dataclass
class Change:
    rv: int
    resource: tuple[str, str]
    type: str  # ADDED | MODIFIED | DELETED
    old: Obj | None
    new: Obj


@dataclass(frozen=True)
class Read:
    """One list or watch request, as the client sent it."""

    plural: str
    verb: str  # list | watch
    resource_version: str | None  # the resourceVersion parameter, None when absent


@dataclass
class Watcher:
    resource: tuple[str, str]
    namespace: str | None
    queue: asyncio.Queue[Change | None] = field(default_factory=asyncio.Queue)


class Store:
    def __init__(self) -> None:
        self.resources: dict[tuple[str, str], Resource] = {r.key: r for r in BUILTIN}
        self.objects: dict[tuple[str, str], dict[tuple[str, str], Obj]] = {
            r.key: {} for r in BUILTIN
        }
        self.rv = 1
        self.history: list[Change] = []
        self.compacted = 0  # a watch from a resourceVersion below this gets 410 Gone
        self.watchers: list[Watcher] = []
        self.reads: list[Read] = []
        self.reviews: list[Obj] = []  # every SubjectAccessReview asked, as sent
        self.forbidden: set[tuple[str, str]] = set()  # resources every request is refused on
        self.schemas: dict[tuple[str, str], schemas.Schema] = {}  # a custom resource's CRD
        # (namespace, Service, port) -> the URL standing for its endpoints (services/proxy)
        self.proxy_targets: dict[tuple[str, str, int], str] = {}
        for name in INITIAL_NAMESPACES:
            self.create(self.resources[NAMESPACES], "", {"metadata": {"name": name}})

    # -- registry --------------------------------------------------------------------------

    def find(self, group: str, version: str, plural: str) -> Resource:
        resource = self.resources.get((group, plural))
        if resource is None or resource.version != version:
            gv = f"{group}/{version}" if group else version
            raise ApiError(404, "NotFound", f"the server could not find the resource {gv} {plural}")
        return resource

    def register(self, resource: Resource, schema: schemas.Schema | None = None) -> None:
        self.resources[resource.key] = resource
        self.objects.setdefault(resource.key, {})
        if schema is not None:
            self.schemas[resource.key] = schema

    def unregister(self, group: str, plural: str) -> None:
        self.resources.pop((group, plural), None)
        self.objects.pop((group, plural), None)
        self.schemas.pop((group, plural), None)

    def _structural(self, resource: Resource, obj: Obj) -> Obj:
        schema = self.schemas.get(resource.key)
        if schema is None:
            return obj
        return schemas.checked(obj, schema, kind=resource.plural, group=resource.group)

    # -- reads -----------------------------------------------------------------------------

    def get(self, resource: Resource, namespace: str, name: str) -> Obj:
        found = self.objects[resource.key].get((namespace, name))
        if found is None:
            raise _not_found(resource, name)
        return copy.deepcopy(found)

    def list(self, resource: Resource, namespace: str | None) -> list[Obj]:
        items = self.objects[resource.key]
        return [
            copy.deepcopy(obj)
            for (ns, _), obj in sorted(items.items())
            if namespace is None or ns == namespace
        ]

    # -- writes ----------------------------------------------------------------------------

    def create(self, resource: Resource, namespace: str, body: Obj) -> Obj:
        meta = body.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        name = meta.get("name")
        if not name:
            raise ApiError(422, "Invalid", "metadata.name: Required value: name is required")
        if resource.namespaced and ("", namespace) not in self.objects[NAMESPACES]:
            raise ApiError(404, "NotFound", f'namespaces "{namespace}" not found')
        if (namespace, name) in self.objects[resource.key]:
            raise ApiError(
                409, "AlreadyExists", f'{resource.plural}.{resource.group} "{name}" already exists'
            )
        body["apiVersion"], body["kind"] = resource.api_version, resource.kind
        if resource.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = _now()
        meta["generation"] = 1
        if resource.status:
            body.pop("status", None)
        if resource.key == JOBS:
            body = jobs.started(body, now=_now())
        body = self._structural(resource, body)
        return self._commit(resource, "ADDED", None, body)

    def replace(self, resource: Resource, namespace: str, name: str, body: Obj, *, sub: str) -> Obj:
        """PUT: optimistic concurrency on metadata.resourceVersion when the body carries one."""
        old = self.get(resource, namespace, name)
        wanted = body.get("metadata", {}).get("resourceVersion")
        if wanted and wanted != old["metadata"]["resourceVersion"]:
            raise ApiError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {resource.plural} "{name}": the object has '
                "been modified; please apply your changes to the latest version and try again",
            )
        return self.update(resource, old, body, sub=sub)

    def update(self, resource: Resource, old: Obj, new: Obj, *, sub: str) -> Obj:
        """Store ``new`` in place of ``old``, keeping what the subresource may not change."""
        new = copy.deepcopy(new)
        meta = new.setdefault("metadata", {})
        for kept in ("name", "namespace", "uid", "creationTimestamp", "generation"):
            if kept in old["metadata"]:
                meta[kept] = old["metadata"][kept]
        new["apiVersion"], new["kind"] = old["apiVersion"], old["kind"]
        if sub == "status":
            # The status subresource changes status only.
            new = {**copy.deepcopy(old), "status": new.get("status")}
        elif resource.status:
            # The main resource ignores status changes once status is a subresource.
            new.pop("status", None)
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
        if new.get("status") is None:
            new.pop("status", None)
        new = self._structural(resource, new)
        if _spec(new) != _spec(old):
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
        if resource.key == JOBS:
            new = jobs.checked_update(old, new, sub=sub, now=_now())
        elif resource.key == JOBSETS:
            new = jobsets.checked_update(old, new, sub=sub)
        elif resource.key == PODS:
            new = pods.checked_update(old, new, sub=sub)
        if _without_version(new) == _without_version(old):
            return old  # a no-op write does not bump resourceVersion
        return self._commit(resource, "MODIFIED", old, new)

    def delete(self, resource: Resource, namespace: str, name: str) -> Obj:
        old = self.get(resource, namespace, name)
        del self.objects[resource.key][(namespace, name)]
        gone = copy.deepcopy(old)
        return self._commit(resource, "DELETED", old, gone, store=False)

    def _commit(
        self, resource: Resource, kind: str, old: Obj | None, new: Obj, *, store: bool = True
    ) -> Obj:
        self.rv += 1
        meta = new["metadata"]
        meta["resourceVersion"] = str(self.rv)
        if store:
            self.objects[resource.key][(meta.get("namespace", ""), meta["name"])] = new
        change = Change(self.rv, resource.key, kind, old, copy.deepcopy(new))
        self.history.append(change)
        for watcher in self.watchers:
            if watcher.resource == resource.key:
                watcher.queue.put_nowait(change)
        return copy.deepcopy(new)

    # -- watches ---------------------------------------------------------------------------

    def since(self, resource: Resource, rv: int) -> Iterator[Change]:
        if rv < self.compacted:
            raise ApiError(410, "Expired", f"too old resource version: {rv} ({self.compacted})")
        return (c for c in self.history if c.resource == resource.key and c.rv > rv)

    def open_watch(self, resource: Resource, namespace: str | None) -> Watcher:
        watcher = Watcher(resource.key, namespace)
        self.watchers.append(watcher)
        return watcher

    def close_watch(self, watcher: Watcher) -> None:
        if watcher in self.watchers:
            self.watchers.remove(watcher)

    def compact(self) -> int:
        """Forget the history up to now, as etcd compaction does."""
        self.compacted = self.rv
        self.history.clear()
        return self.compacted

    def end_watches(self) -> None:
        for watcher in list(self.watchers):
            watcher.queue.put_nowait(None)


def _spec(obj: Obj) -> Any:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def _without_version(obj: Obj) -> Obj:
    meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
    return {**obj, "metadata": meta}


def _not_found(resource: Resource, name: str) -> ApiError:
    what = f"{resource.plural}.{resource.group}" if resource.group else resource.plural
    return ApiError(404, "NotFound", f'{what} "{name}" not found')


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
