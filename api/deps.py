"""What the routers get from the application: a transaction per request, a readiness check.

Dependencies that do no I/O are ``async def``: FastAPI runs a sync one in the threadpool,
a hop per dependency per request. The hot read routes open their transaction inside their
own (sync) endpoint through ``AppContext.session_scope`` for the same reason: the
generator dependency ``ledger`` costs two more hops (enter, exit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from quota.ledger import Ledger
from quota.ledger_read_queue_cache import QuotaObjectCache

if TYPE_CHECKING:
    from api.auth import Grant

SessionScope = Callable[[], AbstractContextManager[Session]]


@dataclass(frozen=True, slots=True)
class Readiness:
    ok: bool
    detail: str


@dataclass(frozen=True, slots=True)
class AppContext:
    """Set by the shell (``berth serve``) when it builds the app."""

    session_scope: SessionScope  # one transaction: commits on success, rolls back on error
    readiness: Callable[[], Readiness]
    tokens: Sequence[Grant] = ()  # none: every request allowed (loopback only, see api.auth)


async def context(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.berth
    return ctx


async def quota_objects(request: Request) -> QuotaObjectCache:
    """The app's in-memory quota objects (revalidated by every read that uses them)."""
    cache: QuotaObjectCache = request.app.state.berth_quota_objects
    return cache


def ledger(ctx: Annotated[AppContext, Depends(context)]) -> Iterator[Ledger]:
    """One session (one transaction) per request, handed to the router as a Ledger."""
    with ctx.session_scope() as session:
        yield Ledger(session)


LedgerDep = Annotated[Ledger, Depends(ledger)]
ContextDep = Annotated[AppContext, Depends(context)]
QuotaObjectsDep = Annotated[QuotaObjectCache, Depends(quota_objects)]
