"""The fake apiserver's HTTP surface (Starlette): authentication, authorization, aggregation,
discovery, TokenReview and SubjectAccessReview, CRUD, list/watch, patch, status."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from builders.fakeapi import aggregator, authn, authz, rbac
from builders.fakeapi.aggregator import FrontProxy
from builders.fakeapi.authn import Tokens, User, authenticate
from builders.fakeapi.discovery import group_entry, group_list, resource_list
from builders.fakeapi.errors import ApiError
from builders.fakeapi.patches import (
    JSON_PATCH,
    MERGE,
    STRATEGIC,
    PatchError,
    json_patch,
    merge_patch,
)
from builders.fakeapi.proxy import proxy
from builders.fakeapi.selectors import Matcher, SelectorError, parse_selector
from builders.fakeapi.store import BUILTIN, Change, Obj, Read, Resource, Store

CRD_KEY = ("apiextensions.k8s.io", "customresourcedefinitions")
SAR_PATH = ["apis", "authorization.k8s.io", "v1", "subjectaccessreviews"]
TOKEN_REVIEW_PATH = "apis/authentication.k8s.io/v1/tokenreviews"
DEFAULT_WATCH_SECONDS = 1800


class Options:
    """Knobs the tests turn: how often idle watches get a bookmark."""

    bookmark_seconds: float = 0.5


def create_app(
    store: Store, front: FrontProxy, options: Options | None = None, tokens: Tokens | None = None
) -> Starlette:
    opts = options or Options()
    known: Tokens = tokens or {}

    async def dispatch(request: Request) -> Response:
        try:
            user = authenticate(known, request)
            authz.authorize(store, user, request)
            if request.url.path.strip("/") == TOKEN_REVIEW_PATH and request.method == "POST":
                body = authn.review(known, await _json_body(request))
                return JSONResponse(body, status_code=201)
            return await _dispatch(store, front, opts, user, request)
        except ApiError as exc:
            return status_response(exc.code, exc.reason, exc.message)

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    return Starlette(routes=[Route("/{path:path}", dispatch, methods=methods)])


def status_response(code: int, reason: str, message: str) -> JSONResponse:
    return JSONResponse(status_body(code, reason, message), status_code=code)


def status_body(code: int, reason: str, message: str) -> Obj:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


async def _dispatch(
    store: Store, front: FrontProxy, opts: Options, user: User, request: Request
) -> Response:
    parts = [p for p in request.url.path.split("/") if p]
    method = request.method
    aggregated = parts[:1] == ["apis"] and len(parts) >= 3
    apiservice = aggregator.aggregated(store, parts[1], parts[2]) if aggregated else None
    if apiservice is not None:
        return await aggregator.forward(store, front, user, request, apiservice)
    if parts == SAR_PATH and method == "POST":
        return JSONResponse(rbac.review(store, await _json_body(request)), status_code=201)
    if parts[:1] == ["fake"]:
        return _control(store, parts[1:], request)
    if parts == ["version"]:
        return JSONResponse({"major": "1", "minor": "30", "gitVersion": "v1.30.0-berth-fake"})
    if parts == ["api"]:
        return JSONResponse({"kind": "APIVersions", "versions": ["v1"]})
    if parts == ["apis"]:
        return JSONResponse(group_list(store))
    if parts[:1] == ["api"] and len(parts) == 2:
        return JSONResponse(resource_list(store, "", parts[1]))
    if parts[:1] == ["apis"] and len(parts) == 2:
        return JSONResponse(group_entry(store, parts[1]))
    if parts[:1] == ["apis"] and len(parts) == 3:
        return JSONResponse(resource_list(store, parts[1], parts[2]))
    if parts[:1] == ["api"]:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"]:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        raise ApiError(404, "NotFound", f"the server could not find the path {request.url.path}")
    namespace: str | None = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if group == "" and namespace and rest[:1] == ["services"] and rest[2:3] == ["proxy"]:
        return await proxy(store, request, namespace, rest[1], rest[3:])
    if not 1 <= len(rest) <= 3:
        raise ApiError(404, "NotFound", f"the server could not find the path {request.url.path}")
    resource = store.find(group, version, rest[0])
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else ""
    if resource.key in store.forbidden and (info := authz.request_info(request)) is not None:
        raise authz.forbidden(info, USER)
    if sub and not (sub == "status" and resource.status):
        raise ApiError(404, "NotFound", f"{resource.plural} has no subresource {sub!r}")
    if resource.namespaced and namespace is None and method != "GET":
        raise ApiError(405, "MethodNotAllowed", f"{resource.plural} are namespaced")
    ns = namespace or ""
    if name is None:
        if method == "GET":
            return await _list_or_watch(store, opts, request, resource, namespace)
        if method == "POST":
            body = await _json_body(request)
            _check_namespace(body, namespace)
            if resource.key == aggregator.APISERVICES:
                aggregator.check_spec(body)
                created = store.create(resource, ns, body)
                await aggregator.check(store, front, created)
                return JSONResponse(store.get(resource, ns, created["metadata"]["name"]), 201)
            return JSONResponse(_create(store, resource, ns, body), status_code=201)
        raise ApiError(405, "MethodNotAllowed", f"{method} is not allowed on a collection")
    if method == "GET":
        return JSONResponse(store.get(resource, ns, name))
    if method == "PUT":
        body = await _json_body(request)
        if body.get("metadata", {}).get("name") not in (None, name):
            raise ApiError(400, "BadRequest", "the name in the body does not match the URL")
        return JSONResponse(store.replace(resource, ns, name, body, sub=sub))
    if method == "PATCH":
        return JSONResponse(await _patch(store, request, resource, ns, name, sub))
    if method == "DELETE":
        gone = store.delete(resource, ns, name)
        if resource.key == CRD_KEY:
            spec = gone.get("spec", {})
            store.unregister(spec.get("group", ""), spec.get("names", {}).get("plural", ""))
        return JSONResponse(gone)
    raise ApiError(405, "MethodNotAllowed", f"{method} is not allowed")


def _control(store: Store, parts: list[str], request: Request) -> Response:
    if parts == ["compact"]:
        return JSONResponse({"compactedTo": store.compact()})
    if parts == ["reads"]:
        return JSONResponse([dataclasses.asdict(read) for read in store.reads])
    if parts == ["reviews"]:
        return JSONResponse(store.reviews)
    if parts[:1] == ["forbid"] and len(parts) == 3:
        # As an RBAC Role without the verbs would: every request on group/plural refused.
        store.forbidden.add(("" if parts[1] == "core" else parts[1], parts[2]))
        return JSONResponse({"forbidden": parts[1:]})
    if parts[:1] == ["endpoints"] and len(parts) == 4:
        # What the Service's ready pods would be: the one URL its proxy forwards to.
        namespace, service, port = parts[1:]
        store.proxy_targets[(namespace, service, int(port))] = request.query_params["url"]
        return JSONResponse({"endpoints": parts[1:]})
    if parts == ["end-watches"]:
        store.end_watches()
        return JSONResponse({"ended": True})
    raise ApiError(404, "NotFound", "unknown control path")


# Who ``FakeKubectl.forbid`` refuses: Berth's ServiceAccount, as its missing Role would.
USER = "system:serviceaccount:berth-system:berth"


async def _json_body(request: Request) -> Obj:
    try:
        body = json.loads(await request.body())
    except ValueError as exc:
        raise ApiError(400, "BadRequest", f"the body is not JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise ApiError(400, "BadRequest", "the body must be a JSON object")
    return body


def _check_namespace(body: Obj, namespace: str | None) -> None:
    given = body.get("metadata", {}).get("namespace")
    if given and namespace and given != namespace:
        raise ApiError(
            400, "BadRequest", "the namespace of the provided object does not match the request"
        )


def _create(store: Store, resource: Resource, namespace: str, body: Obj) -> Obj:
    if resource.key != CRD_KEY:
        return store.create(resource, namespace, body)
    custom = _crd_resource(body)
    created = store.create(resource, namespace, body)
    store.register(custom, _storage_schema(body))
    established = {
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
        ],
        "acceptedNames": body["spec"]["names"],
    }
    return store.update(resource, created, {**created, "status": established}, sub="status")


def _crd_resource(body: Obj) -> Resource:
    """Check a v1 CRD the way the apiserver's validation would, for the fields used."""
    spec = body.get("spec") or {}
    group, names = spec.get("group"), spec.get("names") or {}
    plural, kind, scope = names.get("plural"), names.get("kind"), spec.get("scope")
    problems = []
    if not group or not plural or not kind:
        problems.append("spec.group, spec.names.plural and spec.names.kind are required")
    if body.get("metadata", {}).get("name") != f"{plural}.{group}":
        problems.append("metadata.name: must be spec.names.plural+'.'+spec.group")
    if scope not in ("Namespaced", "Cluster"):
        problems.append("spec.scope: must be Namespaced or Cluster")
    versions = spec.get("versions") or []
    storage = [v for v in versions if v.get("storage")]
    if len(storage) != 1:
        problems.append("spec.versions: exactly one version must be the storage version")
    for i, version in enumerate(versions):
        schema = (version.get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            problems.append(f"spec.versions[{i}].schema.openAPIV3Schema: must be an object schema")
    if problems:
        raise ApiError(422, "Invalid", "; ".join(problems))
    served = storage[0]
    has_status = "status" in (served.get("subresources") or {})
    return Resource(group, served["name"], plural, kind, scope == "Namespaced", has_status)


def _storage_schema(body: Obj) -> Obj:
    """The storage version's openAPIV3Schema (``_crd_resource`` checked there is one)."""
    served = next(v for v in body["spec"]["versions"] if v.get("storage"))
    schema: Obj = served["schema"]["openAPIV3Schema"]
    return schema


async def _patch(
    store: Store, request: Request, resource: Resource, namespace: str, name: str, sub: str
) -> Obj:
    content_type = request.headers.get("content-type", "").split(";")[0].strip()
    if content_type not in (MERGE, JSON_PATCH, STRATEGIC):
        raise ApiError(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format - accepted media types include: "
            f"{JSON_PATCH}, {MERGE}, {STRATEGIC}",
        )
    try:
        patch: Any = json.loads(await request.body())
    except ValueError as exc:
        raise ApiError(400, "BadRequest", f"the patch is not JSON: {exc}") from exc
    old = store.get(resource, namespace, name)
    try:
        if content_type == JSON_PATCH:
            new = json_patch(old, patch)
        else:
            # Strategic merge treated as a plain merge: enough for the maps and the wholesale
            # list replacements Berth sends.
            if not isinstance(patch, dict):
                raise PatchError("a merge patch must be a JSON object")
            new = merge_patch(old, patch)
    except PatchError as exc:
        raise ApiError(422, "Invalid", str(exc)) from exc
    wanted = (
        (patch.get("metadata") or {}).get("resourceVersion") if isinstance(patch, dict) else None
    )
    if wanted and wanted != old["metadata"]["resourceVersion"]:
        raise ApiError(409, "Conflict", f"the object {name!r} has been modified; reload and retry")
    return store.update(resource, old, new, sub=sub)


async def _list_or_watch(
    store: Store, opts: Options, request: Request, resource: Resource, namespace: str | None
) -> Response:
    params = request.query_params
    try:
        matches = parse_selector(params.get("labelSelector"))
    except SelectorError as exc:
        raise ApiError(400, "BadRequest", str(exc)) from exc
    watch = _flag(params.get("watch"))
    store.reads.append(
        Read(resource.plural, "watch" if watch else "list", params.get("resourceVersion"))
    )
    if watch:
        return StreamingResponse(
            _watch(store, opts, resource, namespace, matches, params),
            media_type="application/json",
        )
    items = [o for o in store.list(resource, namespace) if matches(_labels(o))]
    if resource in BUILTIN:
        # Built-in lists carry kind/apiVersion once, on the list, not on each item.
        for item in items:
            item.pop("kind", None)
            item.pop("apiVersion", None)
    return JSONResponse(
        {
            "kind": f"{resource.kind}List",
            "apiVersion": resource.api_version,
            "metadata": {"resourceVersion": str(store.rv)},
            "items": items,
        }
    )


async def _watch(
    store: Store,
    opts: Options,
    resource: Resource,
    namespace: str | None,
    matches: Matcher,
    params: Any,
) -> AsyncIterator[bytes]:
    timeout = float(params.get("timeoutSeconds") or DEFAULT_WATCH_SECONDS)
    bookmarks = _flag(params.get("allowWatchBookmarks"))
    start = params.get("resourceVersion") or "0"
    watcher = store.open_watch(resource, namespace)
    try:
        try:
            if start == "0":
                # No resourceVersion: the current state as synthetic ADDED events first.
                backlog = [
                    Change(store.rv, resource.key, "ADDED", None, obj)
                    for obj in store.list(resource, namespace)
                ]
            else:
                backlog = list(store.since(resource, int(start)))
        except ApiError as exc:
            yield _line("ERROR", status_body(exc.code, exc.reason, exc.message))
            return
        for change in backlog:
            if (line := _event_line(change, namespace, matches)) is not None:
                yield line
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while (remaining := deadline - loop.time()) > 0:
            wait = min(remaining, opts.bookmark_seconds) if bookmarks else remaining
            try:
                change = await asyncio.wait_for(watcher.queue.get(), wait)
            except TimeoutError:
                if bookmarks:
                    yield _bookmark(resource, store.rv)
                continue
            if change is None:
                return
            if (line := _event_line(change, namespace, matches)) is not None:
                yield line
    finally:
        store.close_watch(watcher)


def _event_line(change: Change, namespace: str | None, matches: Matcher) -> bytes | None:
    obj = change.new
    if namespace is not None and obj["metadata"].get("namespace") != namespace:
        return None
    now = matches(_labels(obj))
    before = change.old is not None and matches(_labels(change.old))
    kind = change.type
    if kind == "MODIFIED" and now != before:
        # Entering or leaving the selector looks like creation or deletion to this watch.
        kind = "ADDED" if now else "DELETED"
    elif not now and not (kind == "DELETED" and before):
        return None
    return _line(kind, obj)


def _bookmark(resource: Resource, rv: int) -> bytes:
    obj = {
        "kind": resource.kind,
        "apiVersion": resource.api_version,
        "metadata": {"resourceVersion": str(rv)},
    }
    return _line("BOOKMARK", obj)


def _line(kind: str, obj: Obj) -> bytes:
    return (json.dumps({"type": kind, "object": obj}) + "\n").encode()


def _flag(value: str | None) -> bool:
    """Go's strconv.ParseBool spellings of true."""
    return value in ("1", "t", "T", "true", "True", "TRUE")


def _labels(obj: Obj) -> dict[str, str]:
    labels: dict[str, str] = obj.get("metadata", {}).get("labels") or {}
    return labels
