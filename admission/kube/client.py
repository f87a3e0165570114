"""The one door to the Kubernetes API (kubernetes-asyncio): JSON dicts in, dicts out.

Every call asks for the raw response (``_preload_content=False``) so objects stay plain
dicts (what Berth's parsers read) and custom resources need no generated models. Errors
become ``quota.errors``/``admission.kube.errors`` values here; nothing above sees
``ApiException``. Patches are JSON merge patches, always with their media type spelled out.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
from kubernetes_asyncio import client as k8s

from admission.kube.errors import KubernetesUnavailable, from_status

Obj = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"
BERTH_GROUP = "berth.dev"
BERTH_VERSION = "v1beta1"


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """Which API resource: group ("" for core), version, plural, kind, scope."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def describe(self, namespace: str | None = None, name: str | None = None) -> str:
        where = "/".join(part for part in (namespace, name) if part)
        return f"{self.kind} {where}".strip()


JOBS = ResourceRef("batch", "v1", "jobs", "Job", namespaced=True)
NODES = ResourceRef("", "v1", "nodes", "Node", namespaced=False)
PODS = ResourceRef("", "v1", "pods", "Pod", namespaced=True)
EVENTS = ResourceRef("", "v1", "events", "Event", namespaced=True)
LEASES = ResourceRef("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
POD_TEMPLATES = ResourceRef("", "v1", "podtemplates", "PodTemplate", namespaced=True)
PROVISIONING_REQUESTS = ResourceRef("autoscaling.x-k8s.io", "v1", "provisioningrequests",
                                    "ProvisioningRequest", namespaced=True)
# The aggregated visibility API: the front-proxy settings, and delegated authorization.
CONFIG_MAPS = ResourceRef("", "v1", "configmaps", "ConfigMap", namespaced=True)
SUBJECT_ACCESS_REVIEWS = ResourceRef("authorization.k8s.io", "v1", "subjectaccessreviews",
                                     "SubjectAccessReview", namespaced=False)


def berth_resource(kind: str, plural: str, *, namespaced: bool = False) -> ResourceRef:
    return ResourceRef(BERTH_GROUP, BERTH_VERSION, plural, kind, namespaced)


class Kube:
    """Typed kubernetes-asyncio API objects behind a small, dict-based surface."""

    def __init__(self, api: k8s.ApiClient) -> None:
        self.api = api
        self._batch = k8s.BatchV1Api(api)
        self._core = k8s.CoreV1Api(api)
        self._coordination = k8s.CoordinationV1Api(api)
        self._custom = k8s.CustomObjectsApi(api)
        self._authorization = k8s.AuthorizationV1Api(api)

    async def close(self) -> None:
        await self.api.close()

    # -- reads -----------------------------------------------------------------------------

    async def get(self, ref: ResourceRef, namespace: str | None, name: str) -> Obj:
        what = ref.describe(namespace, name)
        if ref == JOBS:
            return await _call(what, self._batch.read_namespaced_job, name, namespace)
        if ref == NODES:
            return await _call(what, self._core.read_node, name)
        if ref == PODS:
            return await _call(what, self._core.read_namespaced_pod, name, namespace)
        if ref == LEASES:
            return await _call(what, self._coordination.read_namespaced_lease, name, namespace)
        if ref == POD_TEMPLATES:
            return await _call(what, self._core.read_namespaced_pod_template, name, namespace)
        if ref == CONFIG_MAPS:
            return await _call(what, self._core.read_namespaced_config_map, name, namespace)
        if ref.namespaced:
            get_namespaced = self._custom.get_namespaced_custom_object
            args = (ref.group, ref.version, namespace, ref.plural, name)
            return await _call(what, get_namespaced, *args)
        get = self._custom.get_cluster_custom_object
        return await _call(what, get, ref.group, ref.version, ref.plural, name)

    async def list(self, ref: ResourceRef, *, label_selector: str | None = None) -> Obj:
        """Every object of ``ref`` in every namespace: the list with its resourceVersion."""
        return await _call(ref.describe(), self._lister(ref), **_selector(label_selector))

    async def watch(
        self,
        ref: ResourceRef,
        *,
        resource_version: str,
        timeout_seconds: int,
        label_selector: str | None = None,
    ) -> AsyncIterator[Obj]:
        """Watch events (dicts with ``type`` and ``object``) until the server ends the stream."""
        response = await _raw(
            ref.describe(),
            self._lister(ref),
            watch=True,
            resource_version=resource_version,
            allow_watch_bookmarks=True,
            timeout_seconds=timeout_seconds,
            _request_timeout=(30, timeout_seconds + 30),
            **_selector(label_selector),
        )
        try:
            while True:
                try:
                    line = await response.content.readline()
                except (aiohttp.ClientError, TimeoutError) as exc:
                    raise KubernetesUnavailable(f"watch of {ref.describe()}: {exc}") from exc
                if not line:
                    return
                if line.strip():
                    yield json.loads(line)
        finally:
            response.release()

    def _lister(self, ref: ResourceRef) -> Callable[..., Awaitable[Any]]:
        if ref == JOBS:
            return self._batch.list_job_for_all_namespaces
        if ref == NODES:
            return self._core.list_node
        if ref == PODS:
            return self._core.list_pod_for_all_namespaces
        if ref == POD_TEMPLATES:
            return self._core.list_pod_template_for_all_namespaces
        lister = self._custom.list_cluster_custom_object

        async def custom(**kwargs: Any) -> Any:
            return await lister(ref.group, ref.version, ref.plural, **kwargs)

        return custom

    # -- writes ----------------------------------------------------------------------------

    async def patch(
        self, ref: ResourceRef, namespace: str | None, name: str, body: Obj, *, status: bool = False
    ) -> Obj:
        """A JSON merge patch of the object (or of its status subresource)."""
        what = ref.describe(namespace, name) + (" status" if status else "")
        kwargs: dict[str, Any] = {"_content_type": MERGE_PATCH}
        patch: Callable[..., Awaitable[Any]]
        if ref == JOBS:
            jobs = self._batch
            patch = jobs.patch_namespaced_job_status if status else jobs.patch_namespaced_job
            return await _call(what, patch, name, namespace, body, **kwargs)
        if ref == NODES:
            patch = self._core.patch_node_status if status else self._core.patch_node
            return await _call(what, patch, name, body, **kwargs)
        if ref == PODS and not status:
            return await _call(what, self._core.patch_namespaced_pod, name, namespace, body,
                               **kwargs)  # fmt: skip
        if ref.namespaced:
            patch = (
                self._custom.patch_namespaced_custom_object_status
                if status
                else self._custom.patch_namespaced_custom_object
            )
            args: tuple[Any, ...] = (ref.group, ref.version, namespace, ref.plural, name, body)
            return await _call(what, patch, *args, **kwargs)
        patch = (
            self._custom.patch_cluster_custom_object_status
            if status
            else self._custom.patch_cluster_custom_object
        )
        return await _call(what, patch, ref.group, ref.version, ref.plural, name, body, **kwargs)

    async def create(self, ref: ResourceRef, namespace: str, body: Obj) -> Obj:
        """Create ``body`` (``namespace`` is ignored for a cluster-scoped ``ref``)."""
        what = ref.describe(namespace, body.get("metadata", {}).get("name"))
        if ref == SUBJECT_ACCESS_REVIEWS:  # answered, never stored: the status is the answer
            create_review = self._authorization.create_subject_access_review
            return await _call(ref.describe(), create_review, body)
        if ref == EVENTS:
            return await _call(what, self._core.create_namespaced_event, namespace, body)
        if ref == LEASES:
            create = self._coordination.create_namespaced_lease
            return await _call(what, create, namespace, body)
        if ref == POD_TEMPLATES:
            return await _call(what, self._core.create_namespaced_pod_template, namespace, body)
        if ref == PROVISIONING_REQUESTS:
            custom = self._custom.create_namespaced_custom_object
            return await _call(what, custom, ref.group, ref.version, namespace, ref.plural, body)
        raise TypeError(f"Berth does not create {ref.kind} objects")

    async def delete(self, ref: ResourceRef, namespace: str, name: str) -> Obj:
        """Delete what Berth created (ProvisioningRequests and their PodTemplates) or an
        evicted pod group's Pod; nothing else is ever deleted."""
        what = ref.describe(namespace, name)
        if ref == PODS:
            return await _call(what, self._core.delete_namespaced_pod, name, namespace)
        if ref == POD_TEMPLATES:
            return await _call(what, self._core.delete_namespaced_pod_template, name, namespace)
        if ref == PROVISIONING_REQUESTS:
            delete = self._custom.delete_namespaced_custom_object
            return await _call(what, delete, ref.group, ref.version, namespace, ref.plural, name)
        raise TypeError(f"Berth does not delete {ref.kind} objects")

    async def replace(self, ref: ResourceRef, namespace: str, name: str, body: Obj) -> Obj:
        """PUT with the body's resourceVersion: ``Conflict`` when someone wrote in between."""
        if ref != LEASES:
            raise TypeError(f"Berth does not replace {ref.kind} objects")
        replace = self._coordination.replace_namespaced_lease
        return await _call(ref.describe(namespace, name), replace, name, namespace, body)


def _selector(label_selector: str | None) -> dict[str, Any]:
    return {"label_selector": label_selector} if label_selector else {}


async def _raw(what: str, method: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> Any:
    """The raw aiohttp response of a 2xx answer; anything else raised as a Berth error."""
    try:
        response = await method(*args, _preload_content=False, **kwargs)
    except k8s.ApiException as exc:
        raise from_status(exc.status or 0, exc.body, what) from exc
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        raise KubernetesUnavailable(f"{what}: cannot reach the API server: {exc}") from exc
    if not 200 <= response.status <= 299:
        body = await response.read()
        response.release()
        raise from_status(response.status, body, what)
    return response


async def _call(what: str, method: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> Obj:
    response = await _raw(what, method, *args, **kwargs)
    try:
        data: Obj = json.loads(await response.read())
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise KubernetesUnavailable(f"{what}: {exc}") from exc
    finally:
        response.release()
    return data
