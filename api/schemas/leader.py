"""Response model of ``GET /api/v1/leader``: who runs the admission loop."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from api.schemas.base import Schema


class LeaderOut(Schema):
    """Leadership as this replica last saw it (the replica that answers)."""

    identity: str | None = Field(
        description="this replica's name as a lease holder; null when it does not run the "
        "admission loop (`--no-loop`)"
    )
    leading: bool = Field(description="whether this replica runs the admission loop now")
    leader: str | None = Field(
        description="who holds a live lease, as this replica last saw it; null: nobody it knows of"
    )
    since: datetime | None = Field(
        description="when the leader took the lease (Kubernetes: the Lease's acquireTime); "
        "null where this replica does not know it"
    )
    lease: str | None = Field(
        description="where the lease is kept: `the Lease <namespace>/<name>` in Kubernetes "
        "mode, else the ledger's; null with `--no-loop`"
    )
    reason: str | None = Field(
        description="on a follower, why this replica is not leading, with the API server's "
        "reason when the Lease cannot be read or written (`forbidden`, `not found`); null "
        "on the leader"
    )
