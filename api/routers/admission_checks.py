"""``POST /api/v1/workloads/{namespace}/{name}/admission-checks/{check}``: an external
admission check's controller sets its state (admin token).

Any AdmissionCheck whose ``controllerName`` is not ``kueue.x-k8s.io/provisioning-request``
is external: an operator's controller (or ``berth check set``) answers it here. The state
is committed before the answer; the admission loop acts on it on its next cycle.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field

from api.deps import ContextDep, actor
from api.params import NamespaceName, ObjectName
from api.routers.workload_actions import workload_json
from api.schemas.base import Schema
from api.schemas.errors import error_responses
from api.schemas.manifests import WorkloadOut
from quota.core.checks import CheckState
from quota.ledger.check_states import set_check_state

router = APIRouter(prefix="/api/v1", tags=["workloads"])


class CheckStateBody(Schema):
    """A check's new state, what its controller says, and (with Retry) the backoff."""

    model_config = ConfigDict(extra="forbid")
    state: CheckState = Field(description="Pending, Ready, Retry or Rejected")
    message: str = Field("", max_length=4096, pattern=r"^[^\x00]*$",
                         description="shown in the workload's wait reason")
    requeue_after_seconds: int | None = Field(
        None, ge=0, le=7 * 24 * 3600,
        description="with Retry: how long the workload waits before it is queued again "
                    "(default: the check's ProvisioningRequestConfig retryStrategy, or none)")


@router.post(
    "/workloads/{namespace}/{name}/admission-checks/{check}",
    response_model=WorkloadOut,
    responses=error_responses(
        404, 409, 413,
        notes={409: "Conflict: the workload is not reserving quota, or has no such check"},
    ),
)  # fmt: skip
def set_state(namespace: NamespaceName, name: ObjectName, check: ObjectName,
              body: CheckStateBody, request: Request, ctx: ContextDep) -> JSONResponse:
    """Set an admission check's state on a workload that reserves quota: ``Ready`` (it is
    admitted once every check is), ``Retry`` (its quota is released and it is requeued
    after the backoff), ``Rejected`` (it is deactivated with ``message``) or ``Pending``."""
    after = body.requeue_after_seconds
    with ctx.session_scope() as session:
        workload = set_check_state(
            session, namespace, name, check, state=body.state, message=body.message,
            requeue_after=None if after is None else timedelta(seconds=after),
            now=datetime.now(UTC), actor=actor(request),
        )
    return JSONResponse(workload_json(workload))
