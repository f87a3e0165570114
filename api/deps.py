"""What the routers get from the application: a transaction per request, a readiness check.

Two rules keep what the API acknowledges durable and the event loop free (the admission
loop shares it):

- Every route that touches the ledger is a plain ``def``: FastAPI runs it in its threadpool,
  so a statement that waits (on a lock, on a slow or partitioned server) blocks one worker
  thread, never the loop. Only dependencies that do no I/O are ``async def`` (``raw_body``
  reads the request on the loop, then the route parses and writes it in its thread).
- A write opens its transaction inside the route (``with ctx.session_scope() as session``)
  and builds its answer after the block, so the commit has happened, or failed as a 503,
  before any 2xx exists. The generator dependency ``ledger`` would commit only after the
  response was sent: it is for reads, and ``create_app`` refuses a write route that uses it.

Dependencies that do no I/O are ``async def`` also because FastAPI runs a sync one in the
threadpool, a hop per dependency per request; the hot read routes open their transaction
inside their own endpoint through ``AppContext.session_scope`` for the same reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, TypeVar, cast

from fastapi import Depends, Request
from sqlalchemy.orm import Session

from quota.ledger.reads.queue_cache import QuotaObjectCache
from quota.ledger.repository import Ledger

if TYPE_CHECKING:
    from admission.loop.leader import Leadership
    from api.auth import Grant

SessionScope = Callable[[], AbstractContextManager[Session]]
T = TypeVar("T")


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
    metrics_open: bool = False  # GET /metrics without a token even when tokens are set
    readiness_seconds: float = 3.0  # /readyz answers 503 when the check takes longer
    # This replica's leadership once its admission loop runs (None: not yet, or --no-loop).
    leadership: Callable[[], Leadership | None] = lambda: None


async def context(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.berth
    return ctx


async def quota_objects(request: Request) -> QuotaObjectCache:
    """The app's in-memory quota objects (revalidated by every read that uses them)."""
    cache: QuotaObjectCache = request.app.state.berth_quota_objects
    return cache


async def raw_body(request: Request) -> bytes:
    """The request body, read on the event loop (the route then works on it in a thread)."""
    return await request.body()


def ledger(ctx: Annotated[AppContext, Depends(context)]) -> Iterator[Ledger]:
    """Reads only: one session (one transaction) per request, handed to the router as a
    Ledger. Its block ends after the response is sent, so no write may use it."""
    with ctx.session_scope() as session:
        yield Ledger(session)


LedgerDep = Annotated[Ledger, Depends(ledger)]
RawBody = Annotated[bytes, Depends(raw_body)]
ContextDep = Annotated[AppContext, Depends(context)]
QuotaObjectsDep = Annotated[QuotaObjectCache, Depends(quota_objects)]


def written(ctx: AppContext, work: Callable[[Session], T], *, dry_run: bool = False) -> T:
    """``work`` in one transaction, committed; with ``dry_run`` the same work, rolled back
    (Kubernetes' ``dryRun=All``: every check and comparison runs, nothing stays)."""
    try:
        with ctx.session_scope() as session:
            result = work(session)
            if dry_run:
                raise _RolledBack(result)
            return result
    except _RolledBack as undone:
        return cast(T, undone.result)


class _RolledBack(Exception):
    """Leaves a dry run's transaction by the error path, so that nothing is committed."""

    def __init__(self, result: object) -> None:
        super().__init__("dry run")
        self.result = result


def actor(request: Request) -> str:
    """Who a write is audited as: ``api:<client address>``."""
    client = request.client.host if request.client else "unknown"
    return f"api:{client}"
