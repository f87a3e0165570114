"""``GET /api/v1/leader``: who leads the admission loop, since when, and on a follower why
this replica is not leading. Answered from what the replica last saw (no I/O)."""

from __future__ import annotations

from fastapi import APIRouter, Request

from api.deps import AppContext
from api.schemas.leader import LeaderOut

router = APIRouter(prefix="/api/v1", tags=["leader"])

NO_LOOP = "this replica does not run the admission loop (berth serve --no-loop)"


@router.get("/leader", response_model=LeaderOut)
async def leader(request: Request) -> LeaderOut:
    """Who leads, as this replica last saw its lease; ``reason`` says why it is not leading."""
    ctx: AppContext = request.app.state.berth  # not ContextDep: nothing here reaches the ledger
    leadership = ctx.leadership()
    if leadership is None:
        return LeaderOut(
            identity=None, leading=False, leader=None, since=None, lease=None, reason=NO_LOOP
        )
    view = leadership.view()
    return LeaderOut(
        identity=leadership.identity,
        leading=view.leading,
        leader=view.holder if view.leading or view.live else None,
        since=view.since,
        lease=view.lease,
        reason=view.why_not(),
    )
