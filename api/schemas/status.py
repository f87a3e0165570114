"""Response models of ClusterQueue and cohort status and of usage metering."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from api.schemas.base import Schema


class ResourceStatus(Schema):
    """One resource in one flavor; quantity strings; a null limit means unlimited."""

    name: str
    nominal: str
    borrowing_limit: str | None
    lending_limit: str | None
    used: str
    borrowed: str = Field(description="used above nominal: taken from the cohort")
    lent: str = Field(description="of its idle nominal quota, what other queues use now")


class FlavorStatus(Schema):
    name: str
    resources: list[ResourceStatus]


class QueueStatusOut(Schema):
    flavors: list[FlavorStatus]
    pending_workloads: int
    reserving_workloads: int = Field(
        description="holding quota: QuotaReserved (admission checks running), Admitted or Evicting")
    admitted_workloads: int = Field(description="fully admitted: Admitted or Evicting")
    pending_by_reason: dict[str, int] = Field(description="primary reason code → count")


class LocalQueueStatusOut(Schema):
    """Kueue's LocalQueue status counts."""

    pending_workloads: int
    reserving_workloads: int = Field(
        description="holding quota: QuotaReserved (admission checks running), Admitted or Evicting")
    admitted_workloads: int = Field(description="fully admitted: Admitted or Evicting")


class LocalQueueStatusItem(Schema):
    namespace: str
    name: str
    cluster_queue: str
    status: LocalQueueStatusOut


class LocalQueueStatusList(Schema):
    items: list[LocalQueueStatusItem]


class ClusterQueueOut(Schema):
    """The stored manifest plus live status."""

    api_version: str
    kind: str
    metadata: dict[str, Any]
    spec: dict[str, Any]
    status: QueueStatusOut


class CohortOut(Schema):
    name: str
    parent: str | None
    cohorts: list[str] = Field(description="every cohort in the subtree below it")
    cluster_queues: list[str] = Field(description="every ClusterQueue in its subtree")
    spec: dict[str, Any] | None = Field(description="its manifest spec, null if undeclared")
    status: QueueStatusOut


class UsageItem(Schema):
    group: dict[str, str]
    resource: str
    resource_seconds: float = Field(description="units held × seconds (GPU-seconds for GPUs)")
    resource_hours: float
    workloads: int
    cost: float | None = Field(
        description="cost of the charged resource-seconds at the flavors' "
        "berth.dev/price-per-hour; null: no flavor here has a price for the resource"
    )
    charged_resource_seconds: float = Field(
        0.0, description="resourceSeconds minus faultResourceSeconds: what the tenant pays for"
    )
    waste_resource_seconds: float = Field(
        0.0, description="work lost to preemption: held since the victim's last checkpoint"
    )
    fault_resource_seconds: float = Field(
        0.0, description="work lost when a NodeUnhealthy eviction ended it (not charged)"
    )
    ended: dict[str, int] = Field(
        default_factory=dict,
        description="usage intervals that ended in the window, by why (Finished, Failed, "
        "Deleted, Reclaimed, Preempted, NodeUnhealthy, ...)",
    )


class DebtItem(Schema):
    cohort: str = Field(description="the root cohort of the tree both queues belong to")
    borrower: str
    lender: str = Field(description='a ClusterQueue, or "cohort:<name>" for its own quota')
    flavor: str
    resource: str
    resource_seconds: float
    resource_hours: float
    cost: float | None = Field(description="at the flavor's price; null without one")


class LentNowItem(Schema):
    cohort: str = Field(description="the root cohort of the tree both queues belong to")
    borrower: str
    lender: str = Field(description='a ClusterQueue, or "cohort:<name>" for its own quota')
    flavor: str
    resource: str
    amount: str = Field(description='quantity string borrowed from this lender now, e.g. "4"')


class BorrowingReport(Schema):
    from_: datetime = Field(alias="from")
    to: datetime
    items: list[DebtItem]
    now: list[LentNowItem] = Field(
        description="what each borrower holds of each lender's quota at the moment of the "
        "request (whatever the window), attributed as the window's items are"
    )


class UsageReport(Schema):
    from_: datetime = Field(alias="from")
    to: datetime
    group_by: list[str]
    items: list[UsageItem]
