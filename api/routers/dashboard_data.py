"""``GET /api/v1/pool`` and ``GET /api/v1/trends``: pool-wide aggregates (the dashboard's
pool overview and trend panels use them; so may any client)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, Field

from api.auth import reader
from api.deps import LedgerDep
from api.guards import no_nul
from api.schemas.errors import error_responses
from api.schemas.manifests import NO_NUL
from quota.core.quantity import format_quantity
from quota.ledger.reads import dashboard

# Any valid token may read them, as every other /api/v1 read.
router = APIRouter(prefix="/api/v1", tags=["pool"],
                   dependencies=[Depends(no_nul), Depends(reader)],
                   responses=error_responses(401, 422, 503))


class PoolResourceOut(BaseModel):
    resource: str
    capacity: str = Field(description='quantity string, e.g. "16" GPUs or "3Ti" memory')
    unhealthy: str = Field(description="capacity on nodes or devices that are not healthy")
    admitted: str = Field(description="held by admitted workloads")
    free: str = Field(description="capacity − unhealthy − admitted, never below zero")


class PoolFlavorOut(BaseModel):
    flavor: str
    capacitySource: str = Field(
        description='"nodes": summed from matching Nodes; "quota": no Node matches the '
        "flavor, so the sum of nominal quotas stands in for capacity"
    )
    nodes: int
    unhealthyNodes: int
    resources: list[PoolResourceOut]


class PoolOut(BaseModel):
    flavors: list[PoolFlavorOut]


class TrendBucketOut(BaseModel):
    start: datetime
    admissions: int
    preemptions: int
    evictions: int
    finished: int
    waitP50Seconds: float | None = Field(description="median wait from creation to admission")
    waitP90Seconds: float | None


class TrendsOut(BaseModel):
    start: datetime
    end: datetime
    stepSeconds: int
    clusterQueue: str | None
    buckets: list[TrendBucketOut]


@router.get("/pool", response_model=PoolOut)
def pool(ledger: LedgerDep) -> PoolOut:
    """Per flavor and resource: capacity, unhealthy, admitted and free."""
    flavors = dashboard.pool(ledger.session)
    return PoolOut(
        flavors=[
            PoolFlavorOut(
                flavor=f.flavor,
                capacitySource=f.capacity_source,
                nodes=f.nodes,
                unhealthyNodes=f.unhealthy_nodes,
                resources=[
                    PoolResourceOut(
                        resource=r.resource,
                        capacity=format_quantity(r.capacity, r.resource),
                        unhealthy=format_quantity(r.unhealthy, r.resource),
                        admitted=format_quantity(r.admitted, r.resource),
                        free=format_quantity(r.free, r.resource),
                    )
                    for r in f.resources
                ],
            )
            for f in flavors
        ]
    )


@router.get("/trends", response_model=TrendsOut)
def trends(
    ledger: LedgerDep,
    hours: Annotated[int, Query(ge=1, le=24 * 31, description="how far back")] = 24,
    step: Annotated[int, Query(ge=60, le=86400, description="bucket width, seconds")] = 3600,
    cluster_queue: Annotated[
        str | None, Query(alias="clusterQueue", max_length=253, pattern=NO_NUL)
    ] = None,
) -> TrendsOut:
    """Admissions, preemptions, evictions and admission wait percentiles per time bucket."""
    end = datetime.now(UTC)
    start = end - timedelta(hours=hours)
    buckets = dashboard.trends(
        ledger.session, start=start, end=end, step_seconds=step, cluster_queue=cluster_queue
    )
    return TrendsOut(
        start=start,
        end=end,
        stepSeconds=step,
        clusterQueue=cluster_queue,
        buckets=[
            TrendBucketOut(
                start=b.start,
                admissions=b.admissions,
                preemptions=b.preemptions,
                evictions=b.evictions,
                finished=b.finished,
                waitP50Seconds=b.wait_p50,
                waitP90Seconds=b.wait_p90,
            )
            for b in buckets
        ],
    )
