"""Bearer-token authentication: ``admin`` tokens may change things, ``read`` tokens may look,
and a read token can be limited to some namespaces' workloads (a tenant).

Tokens come from ``berth.settings``, e.g.
``BERTH_TOKENS="tok1:admin,tok2:read,tok3:read:ns-a|ns-b"``. With none configured every
request is allowed, which is only safe on a loopback address: ``check_bind`` says so for
the shell to log or refuse.

A token travels as ``Authorization: Bearer <token>`` or, where a proxy consumes the
Authorization header (the Kubernetes API server's service proxy authenticates the caller
and strips it), as ``X-Berth-Token: <token>``; both grant exactly the same. A request
carrying both with different tokens is refused (401): neither is taken over the other.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from fastapi import Depends, FastAPI, Request, Security
from fastapi.responses import JSONResponse
from fastapi.security import APIKeyHeader, HTTPBearer

from api.deps import ContextDep
from quota.core.errors import BerthError

TOKENS_ENV = "BERTH_TOKENS"
TOKEN_HEADER = "X-Berth-Token"  # the token where a proxy does not pass Authorization on
MIN_TOKEN_LENGTH = 16
MIN_TOKEN_SYMBOLS = 6  # distinct characters: refuses "aaaa…", "abab…"
MAKE_ONE = "make one with: openssl rand -hex 24"


class Role(StrEnum):
    ADMIN = "admin"
    READ = "read"


class Unauthorized(BerthError):
    status = 401
    code = "Unauthorized"


class Forbidden(BerthError):
    status = 403
    code = "Forbidden"


@dataclass(frozen=True, slots=True)
class Grant:
    """What one token allows; ``namespaces`` None: every namespace."""

    token: str
    role: Role
    namespaces: frozenset[str] | None = None

    def may_see(self, namespace: str) -> bool:
        return self.namespaces is None or namespace in self.namespaces


def parse_tokens(text: str) -> tuple[Grant, ...]:
    """Grants from ``token:role[:ns1|ns2],…``; ``ValueError`` says which entry is wrong."""
    grants: list[Grant] = []
    for index, entry in enumerate(e.strip() for e in text.split(",")):
        if not entry:
            continue
        parts = entry.split(":")
        where = f"entry {index + 1}"  # the caller says whose entry; never the token
        if len(parts) not in (2, 3) or not parts[0]:
            raise ValueError(f"{where}: expected token:role or token:read:ns-a|ns-b")
        _check_strength(parts[0], where)
        if any(hmac.compare_digest(parts[0].encode(), g.token.encode()) for g in grants):
            raise ValueError(f"{where}: the same token is given twice; each must be distinct")
        try:
            role = Role(parts[1])
        except ValueError:
            raise ValueError(f"{where}: role must be admin or read, not {parts[1]!r}") from None
        namespaces = None
        if len(parts) == 3:
            if role is not Role.READ:
                raise ValueError(f"{where}: only read tokens can be limited to namespaces")
            namespaces = frozenset(n for n in parts[2].split("|") if n)
            if not namespaces:
                raise ValueError(f"{where}: name at least one namespace after the role")
        grants.append(Grant(parts[0], role, namespaces))
    return tuple(grants)


def _check_strength(token: str, where: str) -> None:
    """Refuse a token that is easy to guess (the message never repeats the token)."""
    if len(token) < MIN_TOKEN_LENGTH:
        raise ValueError(
            f"{where}: a token must be at least {MIN_TOKEN_LENGTH} characters, this one has "
            f"{len(token)}; {MAKE_ONE}"
        )
    if len(set(token)) < MIN_TOKEN_SYMBOLS:
        raise ValueError(
            f"{where}: a token must use at least {MIN_TOKEN_SYMBOLS} different characters; "
            f"{MAKE_ONE}"
        )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, tokens: Sequence[Grant]) -> str | None:
    """``None`` when serving ``host`` is safe as configured; else what to say: a warning
    (loopback without tokens: serve, unauthenticated) or a refusal (``is_loopback`` false)."""
    if tokens:
        return None
    if is_loopback(host):
        return (
            f"no API tokens configured ({TOKENS_ENV}): the API is unauthenticated and "
            f"listens on {host} only"
        )
    return (
        f"refusing to listen on {host} without API tokens: set {TOKENS_ENV} "
        "(e.g. 'secret1:admin,secret2:read') or listen on 127.0.0.1"
    )


def authenticate(tokens: Sequence[Grant], headers: Mapping[str, str]) -> Grant | None:
    """The grant a request's Authorization header (or its ``X-Berth-Token`` header) carries;
    ``None`` when auth is off. ``headers``: the request's, names matched as HTTP matches them
    (Starlette's ``Headers``)."""
    if not tokens:
        return None
    scheme, _, bearer = headers.get("authorization", "").partition(" ")
    bearer = bearer.strip() if scheme.lower() == "bearer" else ""
    second = headers.get(TOKEN_HEADER, "").strip()
    if bearer and second and not hmac.compare_digest(bearer.encode(), second.encode()):
        raise Unauthorized(
            f"the Authorization bearer token and the {TOKEN_HEADER} header differ: send one"
        )
    if not (bearer or second):
        raise Unauthorized(
            f"an Authorization: Bearer <token> (or {TOKEN_HEADER}: <token>) header is required"
        )
    given = (bearer or second).encode()
    found = None
    # Every configured token is compared, so the time taken does not tell which one matched.
    for grant in tokens:
        if hmac.compare_digest(given, grant.token.encode()) and found is None:
            found = grant
    if found is None:
        raise Unauthorized("the bearer token is not valid")
    return found


# Declares the scheme in the OpenAPI document (``api.openapi`` drops it when no token is
# configured); the header is checked by ``authenticate``, whatever this makes of it.
BEARER = HTTPBearer(
    auto_error=False,
    scheme_name="bearer",
    description=f"a token of {TOKENS_ENV}: admin for changes, read (or a tenant's) for reads",
)
# The same token in a header proxies pass on (``authenticate`` checks it the same way).
BERTH_TOKEN = APIKeyHeader(
    name=TOKEN_HEADER,
    auto_error=False,
    scheme_name="berthToken",
    description=f"the bearer token, for proxies that consume Authorization ({TOKENS_ENV})",
)


async def reader(
    request: Request,
    ctx: ContextDep,
    _: Annotated[object, Security(BEARER)],
    __: Annotated[object, Security(BERTH_TOKEN)],
) -> Grant | None:
    """Dependency of every read route: any valid token (or none when auth is off)."""
    return authenticate(ctx.tokens, request.headers)


async def admin(caller: Annotated[Grant | None, Depends(reader)]) -> Grant | None:
    """Dependency of every mutation: an admin token."""
    return _admin_only(caller, "this token may only read: changes need an admin token")


async def admin_reader(caller: Annotated[Grant | None, Depends(reader)]) -> Grant | None:
    """Dependency of the reads that show every namespace as stored (the audit log): an
    admin token."""
    return require_admin_reader(caller)


def require_admin_reader(caller: Grant | None) -> Grant | None:
    """``Forbidden`` unless ``caller`` may read every namespace as stored (an admin token,
    or auth off): ``admin_reader``'s rule, for callers outside FastAPI's dependencies."""
    return _admin_only(
        caller, "only an admin token may read this: it shows every namespace's objects as stored"
    )


def _admin_only(caller: Grant | None, refusal: str) -> Grant | None:
    if caller is not None and caller.role is not Role.ADMIN:
        raise Forbidden(refusal)
    return caller


Caller = Annotated[Grant | None, Depends(reader)]


def require_namespace(caller: Grant | None, namespace: str) -> None:
    """``Forbidden`` when a tenant token asks about a namespace it is not given."""
    if caller is not None and not caller.may_see(namespace):
        raise Forbidden(f"this token may not see namespace {namespace!r}", field="namespace")


def install(app: FastAPI) -> None:
    """Answer 401 with the ``WWW-Authenticate`` challenge HTTP asks for."""

    @app.exception_handler(Unauthorized)
    async def unauthorized(_: Request, exc: Unauthorized) -> JSONResponse:
        return JSONResponse(
            {"error": exc.to_dict()}, status_code=401, headers={"WWW-Authenticate": "Bearer"}
        )
