"""``GET /api/v1/demand``: the autoscaler's signal (what to scale on, and what not).

``capacity``: work its quota admits but the nodes cannot hold (or whose capacity check has
not passed): more nodes would start it. ``quotaBlocked``: work its quota does not admit;
more nodes would not start it. A tenant sees the demand of its own namespaces only.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import Field

from api import tenancy
from api.auth import Caller
from api.deps import ContextDep
from api.responses import json_response
from api.schemas.base import Schema
from quota.core.demand import DemandLine
from quota.core.quantity import format_quantity
from quota.ledger.reads.demand import read_demand

router = APIRouter(prefix="/api/v1", tags=["status"])


class DemandLineOut(Schema):
    flavor: str
    resource: str
    level: str | None = Field(description="the topology level it must be placed within, if any")
    amount: str = Field(description="a quantity: what the waiting workloads need in total")
    workloads: int
    reasons: dict[str, int] = Field(description="primary reason code → workloads")


class DemandOut(Schema):
    capacity: list[DemandLineOut] = Field(
        description="quota admits it, capacity does not: InsufficientCapacity, "
                    "TopologyPlacementFailed, UnhealthyCapacity, WaitingForAdmissionCheck")
    quota_blocked: list[DemandLineOut] = Field(
        description="quota does not admit it (WaitingForQuota, ExceedsMaxQuota): "
                    "more nodes would not help")


def _line(line: DemandLine) -> DemandLineOut:
    return DemandLineOut(flavor=line.flavor, resource=line.resource, level=line.level,
                         amount=format_quantity(line.amount, line.resource),
                         workloads=line.workloads, reasons=dict(sorted(line.reasons.items())))


@router.get("/demand", response_model=DemandOut)
def get_demand(ctx: ContextDep, caller: Caller) -> Response:
    """What waiting work needs, per flavor, resource and topology level: capacity demand
    (scale on it) apart from quota-blocked demand."""
    with ctx.session_scope() as session:
        found = read_demand(session, tenancy.namespaces(caller))
    return json_response(DemandOut(capacity=[_line(x) for x in found.capacity],
                                   quota_blocked=[_line(x) for x in found.quota_blocked]))
