"""Response models of Kueue's visibility API as Berth serves it: Kueue's
``PendingWorkloadsSummary`` (apis/visibility/v1beta2/types.go, the same fields in v1beta1)
and the Kubernetes ``Status`` its errors are.

Field names are Kueue's JSON names exactly (not generated from the Python names), and
optional fields are left out when empty, as Go's ``omitempty`` does.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

GROUP = "visibility.kueue.x-k8s.io"
VERSIONS = ("v1beta2", "v1beta1")


class _Kube(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class OwnerReferenceOut(_Kube):
    api_version: str = Field(alias="apiVersion")
    kind: str
    name: str
    uid: str


class PendingWorkloadMeta(_Kube):
    """The workload's ObjectMeta as Kueue fills it; ``annotations`` carry Berth's verdict."""

    name: str
    namespace: str
    creation_timestamp: str = Field(alias="creationTimestamp", description="RFC 3339, seconds")
    owner_references: list[OwnerReferenceOut] | None = Field(
        None, alias="ownerReferences", description="the Job (or other object) it queues for"
    )
    annotations: dict[str, str] | None = Field(
        None,
        description="berth.dev/wait-reason and berth.dev/wait-message: Berth's primary wait "
        "reason (docs/wait-reasons.md) and its sentence",
    )


class PendingWorkloadOut(_Kube):
    metadata: PendingWorkloadMeta
    priority: int
    local_queue_name: str = Field(alias="localQueueName")
    position_in_cluster_queue: int = Field(alias="positionInClusterQueue", description="from 0")
    position_in_local_queue: int = Field(alias="positionInLocalQueue", description="from 0")


class PendingWorkloadsSummary(_Kube):
    kind: Literal["PendingWorkloadsSummary"] = "PendingWorkloadsSummary"
    api_version: str = Field(alias="apiVersion", description=f"{GROUP}/<version asked>")
    metadata: dict[str, str] = Field(default_factory=dict)
    items: list[PendingWorkloadOut]


class StatusDetails(_Kube):
    name: str
    group: str
    kind: str


class KubeStatus(_Kube):
    """A Kubernetes ``Status`` (kind Status, apiVersion v1): what the API server answers
    for a failed request, and so what Kueue's clients read from this API."""

    kind: Literal["Status"] = "Status"
    api_version: Literal["v1"] = Field("v1", alias="apiVersion")
    metadata: dict[str, str] = Field(default_factory=dict)
    status: Literal["Failure"] = "Failure"
    message: str
    reason: str = Field(description="NotFound, Forbidden (or, on the aggregated listener, "
                        "Unauthorized, InternalError)")
    details: StatusDetails | None = None
    code: int
