"""Authentication as kube-apiserver's ``--token-auth-file`` does it: a static bearer token
names a user and its groups, and every authenticated user is also in
``system:authenticated``. A wrong token is refused with 401 before anything else.

A request with no credentials is the cluster admin (``system:admin`` in ``system:masters``),
as the old insecure port treated every request: the tests that predate authentication
speak to the fake without a token. A fake started without tokens authenticates nobody: any
credentials are the admin's, as they were before it had tokens.

Once the caller is known, its ``Authorization`` header is removed from the request, as the
real API server does, so that nothing proxied on (``services/proxy``, an aggregated API)
carries the caller's credentials. ``review`` answers a TokenReview from the same tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request

from builders.fakeapi.errors import ApiError

AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"


@dataclass(frozen=True)
class User:
    name: str
    groups: tuple[str, ...]


ADMIN = User("system:admin", (MASTERS, AUTHENTICATED))

# token -> (user name, groups), as the lines of a token auth file
Tokens = Mapping[str, tuple[str, Sequence[str]]]
Obj = dict[str, Any]


def authenticate(tokens: Tokens, request: Request) -> User:
    """The caller of ``request``; its Authorization header is gone from it afterwards."""
    # Read from the scope, not ``request.headers``: that caches what is removed here.
    header = Headers(scope=request.scope).get("authorization")
    request.scope["headers"] = [
        (k, v) for k, v in request.scope["headers"] if k.lower() != b"authorization"
    ]
    if header is None or not tokens:
        return ADMIN
    scheme, _, token = header.partition(" ")
    user = _user(tokens, token.strip()) if scheme.lower() == "bearer" else None
    if user is None:
        raise ApiError(401, "Unauthorized", "Unauthorized")
    return user


def review(tokens: Tokens, body: Obj) -> Obj:
    """The TokenReview ``body`` with its ``status``: whom ``spec.token`` authenticates, as
    an extension server delegating authentication asks."""
    user = _user(tokens, str((body.get("spec") or {}).get("token") or ""))
    status: Obj = {"authenticated": user is not None}
    if user is not None:
        status["user"] = {"username": user.name, "groups": list(user.groups)}
    else:
        status["error"] = "invalid bearer token"
    kind = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview"}
    return {"metadata": {}, **body, **kind, "status": status}


def _user(tokens: Tokens, token: str) -> User | None:
    entry = tokens.get(token)
    if entry is None:
        return None
    name, groups = entry
    return User(name, (*groups, *((AUTHENTICATED,) if AUTHENTICATED not in groups else ())))
