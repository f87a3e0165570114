"""``POST /mutate/batch/v1/jobs``: the mutating admission webhook for Jobs (served over HTTPS
by ``berth serve`` in a cluster; the decision itself is ``admission.kube.webhook``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request

from admission.kube.webhook import review_job
from api.guards import BoundedJsonRoute
from quota.core.workload import QUEUE_NAME_LABEL

router = APIRouter(tags=["kubernetes"], route_class=BoundedJsonRoute)


@router.post("/mutate/batch/v1/jobs")
def mutate_job(request: Request, review: Annotated[Any, Body()]) -> dict[str, Any]:
    """Suspend a Job that names a queue, so no pod starts before Berth admits it."""
    label = getattr(request.app.state, "berth_queue_label", QUEUE_NAME_LABEL)
    return review_job(review, queue_label=label)
