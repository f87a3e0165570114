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
    admitted_workloads: int
    pending_by_reason: dict[str, int] = Field(description="primary reason code → count")


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
    cost: float | None = Field(description="null: no flavor prices are configured")


class UsageReport(Schema):
    from_: datetime = Field(alias="from")
    to: datetime
    group_by: list[str]
    items: list[UsageItem]
