"""Authorization of the fake's own requests, as kube-apiserver's RBAC authorizer does it
before anything is served or proxied (aggregated APIs included): a request's path and
method make its attributes (``request_info``, as the RequestInfoFactory reads them), and
``rbac.decide`` says whether the user may. The admin (no credentials) is in
``system:masters`` and so may do anything, as the tests that predate RBAC expect.

Paths that name no resource (``/api``, ``/apis``, ``/apis/G/V``, ``/version``) are allowed
to everyone, as the bootstrap ``system:discovery`` role binds them to every user. The
fake's control paths (``/fake/...``) are the test's, not the cluster's: never checked.
``forbidden`` words the 403 as the real API server does.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from builders.fakeapi import rbac
from builders.fakeapi.authn import User
from builders.fakeapi.errors import ApiError
from builders.fakeapi.store import Store

_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
_TRUE = ("1", "t", "T", "true", "True", "TRUE")  # Go's strconv.ParseBool


@dataclass(frozen=True)
class RequestInfo:
    """A resource request's attributes, in SubjectAccessReview's terms."""

    verb: str
    group: str
    version: str
    resource: str
    subresource: str = ""
    name: str = ""
    namespace: str = ""

    def attributes(self) -> dict[str, str]:
        return {
            "verb": self.verb,
            "group": self.group,
            "version": self.version,
            "resource": self.resource,
            "subresource": self.subresource,
            "name": self.name,
            "namespace": self.namespace,
        }


def request_info(request: Request) -> RequestInfo | None:
    """The attributes of ``request``; None for a path that names no resource."""
    parts = [p for p in request.url.path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2:  # else the Namespace object itself, which is its own namespace
            rest = rest[2:]
    resource, name, sub = (
        rest[0],
        rest[1] if len(rest) > 1 else "",
        rest[2] if len(rest) > 2 else "",
    )
    verb = _VERBS.get(request.method, "get")
    if not name:
        watch = request.query_params.get("watch") in _TRUE
        verb = {"get": "watch" if watch else "list", "delete": "deletecollection"}.get(verb, verb)
    return RequestInfo(verb, group, version, resource, sub, name, namespace)


def authorize(store: Store, user: User, request: Request) -> None:
    """Nothing when ``user`` may make ``request``; else the 403 the real server answers."""
    info = request_info(request)
    if info is None:
        return
    spec = {"resourceAttributes": info.attributes()}
    allowed, _ = rbac.decide(store, user.name, user.groups, spec)
    if not allowed:
        raise forbidden(info, user.name)


def forbidden(info: RequestInfo, user: str) -> ApiError:
    """The 403 an RBAC-denied request gets, worded as the real API server words it."""
    what = f"{info.resource}.{info.group}" if info.group else info.resource
    subject = f'{what} "{info.name}"' if info.name else what
    where = f' in the namespace "{info.namespace}"' if info.namespace else " at the cluster scope"
    resource = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
    return ApiError(
        403,
        "Forbidden",
        f'{subject} is forbidden: User "{user}" cannot {info.verb} resource "{resource}" '
        f'in API group "{info.group}"{where}',
    )
