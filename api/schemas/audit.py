"""Response models of ``GET /api/v1/audit``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from api.schemas.base import Schema


class AuditEntryOut(Schema):
    """One change: who made it, when, to what, and the object before and after it."""

    id: int = Field(description="the entry's place in the log (higher: written later)")
    at: datetime = Field(description="when the writing transaction began")
    actor: str = Field(description="who: `api:<address>`, a watcher, the admission loop, ...")
    action: Literal["create", "update", "delete"]
    kind: str
    namespace: str | None = Field(description="LocalQueues and workloads; null otherwise")
    name: str
    version: int | None = Field(
        description="the object's version after the change (for a delete, the version "
        "deleted); null where the entry records none (node health moves)"
    )
    changed: list[str] = Field(
        description="the recorded fields whose values differ between before and after, "
        "version aside"
    )
    before: dict[str, Any] | None = Field(
        description="the object (or the fields that changed) as recorded before; null for a create"
    )
    after: dict[str, Any] | None = Field(description="as recorded after; null for a delete")


class AuditPage(Schema):
    items: list[AuditEntryOut] = Field(description="newest first")
    next_cursor: str | None = Field(description="pass as `cursor` for the next (older) page")
