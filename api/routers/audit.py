"""``GET /api/v1/audit``: who changed what and when, newest first (admin tokens only: the
entries hold every namespace's objects as they were)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from api.deps import LedgerDep
from api.pagination import DEFAULT_LIMIT, Cursor, Limit, decode_cursor, encode_cursor
from api.params import Rfc3339
from api.schemas.audit import AuditEntryOut, AuditPage
from quota.core.errors import InvalidInput, NotFound, Problem
from quota.core.kinds import resolve_kind
from quota.ledger.reads import audit as reads
from quota.ledger.repository import WORKLOAD_KIND

router = APIRouter(prefix="/api/v1", tags=["audit"])

_KINDS = ", ".join(reads.AUDITED_KINDS)
_WORKLOAD_NAMES = ("workload", "workloads", "wl")


@router.get("/audit")
def list_audit(
    ledger: LedgerDep,
    kind: Annotated[
        str | None,
        Query(description=f"one kind ({_KINDS}); the names `berth get` takes also work"),
    ] = None,
    name: Annotated[
        str | None,
        Query(min_length=1, max_length=253, description="one name, in every namespace"),
    ] = None,
    since: Annotated[
        Rfc3339 | None,
        Query(description="RFC 3339 date-time (with its zone): entries written at or after it"),
    ] = None,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> AuditPage:
    """The audit log, newest first, one page at a time: each create, update and delete of
    an object or workload, and each node health move, with what it was before and after."""
    where = reads.AuditFilter(
        kind=None if kind is None else _kind(kind),
        name=name,
        since=since,
    )
    entries = reads.audit_page(
        ledger.session, where, below_id=decode_cursor(cursor), limit=limit + 1
    )
    more = len(entries) > limit
    entries = entries[:limit]
    return AuditPage(
        items=[AuditEntryOut.model_validate(e, from_attributes=True) for e in entries],
        next_cursor=encode_cursor(entries[-1].id) if more else None,
    )


def _kind(text: str) -> str:
    if text.lower() in _WORKLOAD_NAMES:
        return WORKLOAD_KIND
    try:
        return resolve_kind(text).name
    except NotFound:
        raise _invalid(f"unknown kind {text!r}; expected one of: {_KINDS}", "kind") from None


def _invalid(message: str, field: str) -> InvalidInput:
    return InvalidInput([Problem(message, source="request", field=field)])
