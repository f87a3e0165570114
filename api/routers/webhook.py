"""``POST /mutate/workloads``: the mutating admission webhook for every workload kind Berth
queues (served over HTTPS by ``berth serve`` in a cluster; the decision itself is
``admission.kube.webhook``). ``POST /mutate/batch/v1/jobs`` answers the same, for webhook
configurations written when Berth queued Jobs only."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, Body, Request

from admission.kube.webhook import review_job
from api.guards import BoundedJsonRoute
from quota.core.workload import QUEUE_NAME_LABEL

log = logging.getLogger(__name__)
router = APIRouter(tags=["kubernetes"], route_class=BoundedJsonRoute)


@router.post("/mutate/workloads")
def mutate_workload(request: Request, review: Annotated[Any, Body()]) -> dict[str, Any]:
    """Suspend a workload object that names a queue, so no pod starts before Berth admits
    it (its kind's suspend field: ``spec.suspend`` or ``spec.runPolicy.suspend``)."""
    label = getattr(request.app.state, "berth_queue_label", QUEUE_NAME_LABEL)
    answer = review_job(review, queue_label=label)
    response = answer["response"]
    if "patch" not in response and response.get("warnings"):
        log.warning("webhook: %s", response["warnings"][0])
    return answer


@router.post("/mutate/batch/v1/jobs")
def mutate_job(request: Request, review: Annotated[Any, Body()]) -> dict[str, Any]:
    """The same answer as ``/mutate/workloads`` (the Jobs-only route of older configurations)."""
    return mutate_workload(request, review)
