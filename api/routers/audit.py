"""``GET /api/v1/audit``: who changed what and when, newest first (admin tokens only: the
entries hold every namespace's objects as they were)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from api.deps import LedgerDep
from api.pagination import DEFAULT_LIMIT, Cursor, Limit, decode_cursor, encode_cursor
from api.schemas.audit import AuditEntryOut, AuditPage
from quota.core.checkpoints import parse_time
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
        str | None,
        Query(
            description="RFC 3339 time with a zone: entries written at or after it",
            examples=["2026-11-30T21:00:00Z"],
        ),
    ] = None,
    limit: Limit = DEFAULT_LIMIT,
    cursor: Cursor = None,
) -> AuditPage:
    """The audit log, newest first, one page at a time: each create, update and delete of
    an object or workload, and each node health move, with what it was before and after."""
    where = reads.AuditFilter(
        kind=None if kind is None else _kind(kind),
        name=name,
        since=None if since is None else _since(since),
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


def _since(text: str) -> datetime:
    try:
        return parse_time(text)
    except (ValueError, OverflowError) as exc:  # OverflowError: a zone past year 1 or 9999
        message = str(exc) if isinstance(exc, ValueError) else f"{text!r} is out of range"
        raise _invalid(message, "since") from None


def _invalid(message: str, field: str) -> InvalidInput:
    return InvalidInput([Problem(message, source="request", field=field)])
