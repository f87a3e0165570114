"""Live status: ``GET /api/v1/clusterqueues/{name}`` (manifest plus status),
``/api/v1/status/clusterqueues`` (every queue's status, paged),
``/api/v1/status/localqueues`` (Kueue's LocalQueue counts), ``/api/v1/cohorts/{name}``
(the subtree summed), ``/api/v1/usage`` (metered resource-seconds, waste, fault time and
cost over a window) and ``/api/v1/borrowing`` (who owes whom)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from api import tenancy
from api.auth import Caller
from api.deps import ContextDep, LedgerDep, QuotaObjectsDep
from api.pagination import DEFAULT_LIMIT, Cursor, Limit, decode_name_cursor, encode_cursor
from api.params import ObjectName, Rfc3339
from api.responses import json_response
from api.schemas.base import Schema
from api.schemas.errors import error_responses
from api.schemas.status import (
    BorrowingReport,
    ClusterQueueOut,
    CohortOut,
    DebtItem,
    FlavorStatus,
    LentNowItem,
    LocalQueueStatusItem,
    LocalQueueStatusList,
    LocalQueueStatusOut,
    QueueStatusOut,
    ResourceStatus,
    UsageItem,
    UsageReport,
)
from quota.core.errors import InvalidInput, NotFound, Problem
from quota.core.model import LocalQueue, ResourceFlavor
from quota.core.quantity import format_quantity
from quota.ledger.reads import borrowing as borrowed
from quota.ledger.reads import queue_cache as cached
from quota.ledger.reads import queues
from quota.ledger.reads import usage as metering
from quota.ledger.reads.status import local_queue_counts
from quota.manifests.documents import to_manifest

router = APIRouter(prefix="/api/v1", tags=["status"])
DEFAULT_WINDOW = timedelta(days=1)
From = Annotated[Rfc3339 | None, Query(alias="from", description="default: a day before to")]
To = Annotated[Rfc3339 | None, Query(alias="to", description="default: now")]
_GROUP = "|".join(metering.GROUPS)
# Names separated by commas, spaces around them and empty entries allowed (as they are read).
_GROUP_LIST = rf"^\s*({_GROUP})?\s*(,\s*({_GROUP})?\s*)*$"


class QueueStatusItem(Schema):
    name: str
    cohort: str | None
    status: QueueStatusOut


class QueueStatusPage(Schema):
    items: list[QueueStatusItem]
    next_cursor: str | None


@router.get(
    "/clusterqueues/{name}", response_model=ClusterQueueOut, responses=error_responses(404)
)
def get_cluster_queue(
    name: ObjectName, ctx: ContextDep, objects: QuotaObjectsDep, _: Caller
) -> Response:
    """One ClusterQueue: its spec plus live quota, usage, borrowing, lending and counts."""
    with ctx.session_scope() as session:  # one statement while no quota object changes
        found = cached.cached_queue_statuses(session, [name], objects)
    if not found or found[0].spec is None:
        raise NotFound(f"ClusterQueue {name!r} not found", field="name")
    manifest: dict[str, Any] = to_manifest(found[0].spec)
    return json_response(
        ClusterQueueOut(
            api_version=str(manifest["apiVersion"]),
            kind=str(manifest["kind"]),
            metadata=dict(manifest["metadata"]),
            spec=dict(manifest.get("spec") or {}),
            status=status_out(found[0].resources, found[0]),
        )
    )


@router.get("/status/clusterqueues")
def list_queue_statuses(
    ledger: LedgerDep, _: Caller, limit: Limit = DEFAULT_LIMIT, cursor: Cursor = None
) -> QueueStatusPage:
    """Every ClusterQueue's live status, in name order, one page at a time.

    A ``cursor`` of the declared alphabet that is not a ``nextCursor`` this API gave out is
    a 422 naming ``cursor`` (which strings are cursors, JSON Schema cannot say)."""
    after = decode_name_cursor(cursor)
    names = queues.queue_names(ledger.session, after=after, limit=limit + 1)
    page = queues.queue_statuses(ledger.session, names[:limit])
    return QueueStatusPage(
        items=[
            QueueStatusItem(name=s.name, cohort=s.cohort, status=status_out(s.resources, s))
            for s in page
        ],
        next_cursor=encode_cursor(names[limit - 1]) if len(names) > limit else None,
    )


@router.get("/status/localqueues")
def list_local_queue_statuses(ledger: LedgerDep, caller: Caller) -> LocalQueueStatusList:
    """Every LocalQueue the caller may see, in namespace and name order, with Kueue's
    status counts: pending workloads, those reserving quota (admitted ones included), and
    the fully admitted ones."""
    counts = local_queue_counts(ledger.session)
    items = []
    for queue in ledger.list("LocalQueue"):
        if not isinstance(queue, LocalQueue) or not tenancy.may_see(caller, queue.namespace):
            continue
        found = counts.get((queue.namespace, queue.name))
        items.append(
            LocalQueueStatusItem(
                namespace=queue.namespace,
                name=queue.name,
                cluster_queue=queue.cluster_queue,
                status=LocalQueueStatusOut(
                    pending_workloads=found.pending if found else 0,
                    reserving_workloads=found.reserving if found else 0,
                    admitted_workloads=found.admitted if found else 0,
                ),
            )
        )
    return LocalQueueStatusList(items=items)


@router.get("/cohorts/{name}", responses=error_responses(404))
def get_cohort(name: ObjectName, ledger: LedgerDep, _: Caller) -> CohortOut:
    """A cohort's subtree: its queues and cohorts, their figures summed."""
    found = queues.cohort_status(ledger.session, name)
    if found is None:
        raise NotFound(f"Cohort {name!r} not found", field="name")
    declared = ledger.get("Cohort", name)
    spec = None
    if declared is not None:
        stored = to_manifest(declared).get("spec")
        spec = dict(stored) if isinstance(stored, dict) else {}
    return CohortOut(
        name=found.name,
        parent=found.parent,
        cohorts=list(found.cohorts),
        cluster_queues=list(found.cluster_queues),
        spec=spec,
        status=status_out(found.resources, found),
    )


@router.get("/usage")
def get_usage(
    ledger: LedgerDep,
    caller: Caller,
    start: From = None,
    end: To = None,
    group_by: Annotated[
        str,
        Query(
            alias="groupBy",
            description="comma-separated, each at most once: "
            + ", ".join(metering.GROUPS),
            json_schema_extra={"pattern": _GROUP_LIST},  # refused in words below
        ),
    ] = "clusterQueue,flavor",
) -> UsageReport:
    """Metered resource-seconds per group and resource over [from, to); a tenant's report
    counts only the workloads of its namespaces.

    ``from`` must be before ``to``, and a ``groupBy`` name may be given once: a 422 names
    the parameter otherwise (JSON Schema cannot compare two parameters, nor say "once")."""
    groups = [g.strip() for g in group_by.split(",") if g.strip()]
    unknown = [g for g in groups if g not in metering.GROUPS]
    if unknown or len(set(groups)) != len(groups):
        raise _invalid(
            f"groupBy takes distinct names from: {', '.join(metering.GROUPS)}", "groupBy"
        )
    start, end = _window(start, end)
    lines = metering.usage(ledger.session, start, end, groups, tenancy.namespaces(caller))
    return UsageReport.model_validate(
        {
            "from": start,
            "to": end,
            "groupBy": groups,
            "items": [
                UsageItem(
                    group=dict(line.group),
                    resource=line.resource,
                    resource_seconds=line.milli_seconds / 1000,
                    resource_hours=round(line.milli_seconds / 3_600_000, 6),
                    workloads=line.workloads,
                    cost=None if line.cost is None else round(float(line.cost), 6),
                    charged_resource_seconds=line.charged_milli_seconds / 1000,
                    waste_resource_seconds=line.waste_milli_seconds / 1000,
                    fault_resource_seconds=line.fault_milli_seconds / 1000,
                    ended=dict(line.ended),
                )
                for line in lines
            ],
        }
    )


@router.get("/borrowing")
def get_borrowing(
    ledger: LedgerDep,
    _: Caller,
    start: From = None,
    end: To = None,
) -> BorrowingReport:
    """Who owes whom: resource-seconds each ClusterQueue borrowed from each lender in its
    cohort over [from, to), attributed in proportion to the lenders' unused quota.

    ``from`` must be before ``to``: a 422 names ``from`` otherwise (JSON Schema cannot
    compare two parameters)."""
    start, end = _window(start, end)
    debts = borrowed.borrowing(ledger.session, start, end)
    prices = {
        f.name: f.prices for f in ledger.list("ResourceFlavor") if isinstance(f, ResourceFlavor)
    }
    items = []
    for debt in debts:
        price = prices.get(debt.flavor, {}).get(debt.resource)
        items.append(
            DebtItem(
                cohort=debt.cohort,
                borrower=debt.borrower,
                lender=debt.lender,
                flavor=debt.flavor,
                resource=debt.resource,
                resource_seconds=debt.milli_seconds / 1000,
                resource_hours=round(debt.milli_seconds / 3_600_000, 6),
                cost=None if price is None else round(float(price.cost(debt.milli_seconds)), 6),
            )
        )
    now = [
        LentNowItem(cohort=x.cohort, borrower=x.borrower, lender=x.lender, flavor=x.flavor,
                    resource=x.resource, amount=format_quantity(x.amount, x.resource))
        for x in borrowed.borrowing_now(ledger.session)
    ]
    return BorrowingReport.model_validate(
        {"from": start, "to": end, "items": items, "now": now}
    )


def _window(start: datetime | None, end: datetime | None) -> tuple[datetime, datetime]:
    end = end or datetime.now(UTC)
    if start is None:
        try:
            start = end - DEFAULT_WINDOW
        except OverflowError:  # 'to' within a day of year 1
            raise _invalid("'to' leaves no day before it for the default window; give "
                           "'from' too", "to") from None
    if start >= end:
        raise _invalid("'from' must be before 'to'", "from")
    return start, end


def status_out(
    resources: Sequence[queues.ResourceFigures], counts: queues.QueueStatus | queues.CohortStatus
) -> QueueStatusOut:
    """Figures grouped per flavor, as quantity strings."""
    flavors: dict[str, list[ResourceStatus]] = {}
    for f in resources:
        flavors.setdefault(f.flavor, []).append(
            ResourceStatus(
                name=f.resource,
                nominal=format_quantity(f.nominal, f.resource),
                borrowing_limit=_limit(f.borrowing_limit, f.resource),
                lending_limit=_limit(f.lending_limit, f.resource),
                used=format_quantity(f.used, f.resource),
                borrowed=format_quantity(f.borrowed, f.resource),
                lent=format_quantity(f.lent, f.resource),
            )
        )
    return QueueStatusOut(
        flavors=[FlavorStatus(name=n, resources=r) for n, r in flavors.items()],
        pending_workloads=counts.pending,
        reserving_workloads=counts.reserving,
        admitted_workloads=counts.admitted,
        pending_by_reason=dict(counts.pending_by_reason),
    )


def _limit(value: int | None, resource: str) -> str | None:
    return None if value is None else format_quantity(value, resource)


def _invalid(message: str, field: str) -> InvalidInput:
    return InvalidInput([Problem(message, source="request", field=field)])
