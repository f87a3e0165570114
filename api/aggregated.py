"""Kueue's visibility API for the Kubernetes aggregation layer, on Berth's HTTPS listener,
so that ``kubectl get --raw /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/CQ/
pendingworkloads`` reaches Berth as it reaches Kueue's visibility server.

The routes are the HTTP port's (``api.routers.visibility``), with another caller: instead
of a bearer token (``api.auth.reader``), the front proxy's identity and a SubjectAccessReview.

- Authentication: a client certificate TLS verified against the front-proxy CA, with an
  allowed CN, and the user it names in ``X-Remote-User``/``X-Remote-Group``
  (``admission.kube.front_proxy``). The certificate reaches the app as the ASGI TLS
  extension (``scope["extensions"]["tls"]``, put there by ``berth.https``). Anything less is
  a 401 ``Status``; identity headers without the certificate are never read.
- Authorization: delegated, as Kueue's server does: ``get`` on ``clusterqueues/
  pendingworkloads`` (or ``localqueues/pendingworkloads`` in the namespace) asked of the
  API server (``admission.kube.access_review``); a refusal is Kubernetes' 403 ``Status``.
  Allowed users see the whole list, as with Kueue: a Kubernetes user is not a Berth tenant.
- Discovery (``/apis/<group>`` and ``/apis/<group>/<version>``, Kueue's resource lists)
  needs the front-proxy identity but no review, as Kubernetes grants discovery to every
  authenticated user (``system:discovery``). The aggregator's availability check reads it.
  ``/apis`` itself is not served: the aggregator then falls back to these per-version
  documents. Neither is OpenAPI (``/openapi/v2``, ``/openapi/v3``).

The listener keeps serving the webhook, which the API server calls without a certificate,
so a certificate is optional in TLS and required here, per route.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import JSONResponse

from admission.kube.access_review import Authorizer, ResourceAttributes
from admission.kube.front_proxy import FrontProxy, Identity
from api import auth
from api.guards import no_nul
from api.routers import visibility
from api.schemas.visibility import GROUP, VERSIONS, KubeStatus, StatusDetails
from quota.core.errors import BerthError

KIND = "PendingWorkloadsSummary"


@dataclass(frozen=True, slots=True)
class Aggregation:
    """What the aggregated routes check callers with."""

    front_proxy: FrontProxy
    authorizer: Authorizer


class Refused(Exception):
    """A request the aggregated API answers with a Kubernetes ``Status``."""

    def __init__(self, status: KubeStatus) -> None:
        super().__init__(status.message)
        self.status = status


def install(app: FastAPI, aggregation: Aggregation) -> None:
    """The visibility routes and discovery, checked against ``aggregation``."""
    app.state.berth_aggregation = aggregation

    @app.exception_handler(Refused)
    async def refused(_: Request, exc: Refused) -> JSONResponse:
        body = exc.status.model_dump(by_alias=True, exclude_none=True)
        return JSONResponse(body, status_code=exc.status.code)

    # Every visibility route takes its caller from api.auth.reader: here it is this check.
    app.dependency_overrides[auth.reader] = authorized
    # A NUL is refused before the review, as on the HTTP port (PostgreSQL cannot take it).
    app.include_router(visibility.router, dependencies=[Depends(no_nul)])
    app.include_router(_discovery, dependencies=[Depends(identified)])


def identify(request: Request) -> Identity:
    """The front proxy's user, or ``Refused`` (401)."""
    aggregation: Aggregation = request.app.state.berth_aggregation
    tls = (request.scope.get("extensions") or {}).get("tls") or {}
    subject = tls.get("client_cert_name") if tls.get("client_cert_chain") else None
    raw = request.scope["headers"]
    headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw]
    found = aggregation.front_proxy.identity(
        common_name(subject) if subject else None, headers
    )
    if isinstance(found, str):
        raise Refused(KubeStatus(message=f"Unauthorized: {found}", reason="Unauthorized", code=401))
    return found


async def identified(request: Request) -> None:
    """Dependency of discovery: any front-proxy user."""
    identify(request)


async def authorized(request: Request) -> auth.Grant | None:
    """The visibility routes' caller: the front proxy's user, if the API server says they
    may ``get`` this queue's pending workloads; ``None``, the untrimmed view, for them."""
    identity = identify(request)
    attributes = _attributes(request)
    aggregation: Aggregation = request.app.state.berth_aggregation
    try:
        decision = await aggregation.authorizer(identity, attributes)
    except BerthError as exc:  # the API server did not answer the review
        message = f"Internal error occurred: authorization of {identity.user!r} failed: {exc}"
        raise Refused(KubeStatus(message=message, reason="InternalError", code=500)) from exc
    if not decision.allowed:
        raise Refused(forbidden(identity, attributes, decision.reason))
    return None


def _attributes(request: Request) -> ResourceAttributes:
    """The queue a visibility route reads, as RBAC names it."""
    params = request.path_params
    version = request.url.path.split("/")[3]  # /apis/<group>/<version>/...
    namespace = str(params.get("namespace", ""))
    return ResourceAttributes(
        group=GROUP,
        version=version,
        resource="localqueues" if namespace else "clusterqueues",
        subresource="pendingworkloads",
        name=str(params.get("name", "")),
        namespace=namespace,
    )


def forbidden(identity: Identity, attributes: ResourceAttributes, reason: str) -> KubeStatus:
    """Kubernetes' 403, worded as its authorization filter words it."""
    resource = f"{attributes.resource}/{attributes.subresource}"
    scope = (f'in the namespace "{attributes.namespace}"' if attributes.namespace
             else "at the cluster scope")  # fmt: skip
    why = (f'User "{identity.user}" cannot {attributes.verb} resource "{resource}" '
           f'in API group "{attributes.group}" {scope}')  # fmt: skip
    if reason:
        why += f": {reason}"
    return KubeStatus(
        message=f'{attributes.resource}.{attributes.group} "{attributes.name}" is forbidden: {why}',
        reason="Forbidden",
        details=StatusDetails(name=attributes.name, group=attributes.group,
                              kind=attributes.resource),
        code=403,
    )  # fmt: skip


def common_name(subject: str) -> str | None:
    """The CN of an RFC 4514 subject (the most specific one, as Go's ``pkix.Name`` keeps)."""
    for rdn in _split(subject, ","):
        for attribute in _split(rdn, "+"):
            kind, _, value = attribute.partition("=")
            if kind.strip().upper() in ("CN", "2.5.4.3"):
                return _unescape(value)
    return None


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` not escaped by a backslash."""
    parts: list[str] = []
    current, escaped = "", False
    for char in text:
        if escaped:
            current, escaped = current + "\\" + char, False
        elif char == "\\":
            escaped = True
        elif char == separator:
            parts, current = [*parts, current], ""
        else:
            current += char
    return [*parts, current]


def _unescape(value: str) -> str:
    """RFC 4514's escapes undone: ``\\,`` and hex pairs (``\\2C``, UTF-8 bytes)."""
    out, index = bytearray(), 0
    while index < len(value):
        char = value[index]
        pair = value[index + 1 : index + 3]
        if char == "\\" and len(pair) == 2 and all(c in "0123456789abcdefABCDEF" for c in pair):
            out.append(int(pair, 16))
            index += 3
        elif char == "\\" and index + 1 < len(value):
            out += value[index + 1].encode()
            index += 2
        else:
            out += char.encode()
            index += 1
    return out.decode(errors="replace")


# -- discovery: Kueue's documents, as its generic API server builds them -------------------

_discovery = APIRouter(tags=["visibility"])


def _group_version(version: str) -> dict[str, str]:
    return {"groupVersion": f"{GROUP}/{version}", "version": version}


@_discovery.get(f"/apis/{GROUP}")
async def api_group() -> dict[str, Any]:
    """The APIGroup: both versions, v1beta2 preferred."""
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": GROUP,
        "versions": [_group_version(v) for v in VERSIONS],
        "preferredVersion": _group_version(VERSIONS[0]),
    }


def resource_list(version: str) -> dict[str, Any]:
    """Kueue's APIResourceList (pkg/visibility/storage: the queues, which serve nothing
    themselves, and their ``pendingworkloads``, which answer ``get``)."""
    resources = []
    for plural, singular, namespaced in (("clusterqueues", "clusterqueue", False),
                                         ("localqueues", "localqueue", True)):  # fmt: skip
        resources += [
            {"name": plural, "singularName": singular, "namespaced": namespaced,
             "kind": KIND, "verbs": []},
            {"name": f"{plural}/pendingworkloads", "singularName": "",
             "namespaced": namespaced, "kind": KIND, "verbs": ["get"]},
        ]  # fmt: skip
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{version}",
            "resources": resources}  # fmt: skip


def _version_route(version: str) -> None:
    async def api_resources() -> dict[str, Any]:
        """The APIResourceList of this version (the aggregator's availability check)."""
        return resource_list(version)

    _discovery.add_api_route(f"/apis/{GROUP}/{version}", api_resources, methods=["GET"],
                             name=f"api_resources_{version}")  # fmt: skip


for _version in VERSIONS:
    _version_route(_version)
