"""The mutating admission webhook's decision (PURE): an AdmissionReview for a Job in, the
review's response with a JSON patch setting ``spec.suspend: true`` out.

A Job that names a queue must not start a pod before Berth admits it; Jobs without the
queue label are none of Berth's business and pass unchanged.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from quota.core.errors import InvalidInput, Problem
from quota.core.workload import QUEUE_NAME_LABEL

REVIEW_API_VERSION = "admission.k8s.io/v1"


def review_job(review: object, *, queue_label: str = QUEUE_NAME_LABEL) -> dict[str, Any]:
    """The AdmissionReview answering ``review``; ``InvalidInput`` if it is not one."""
    if not isinstance(review, Mapping) or not isinstance(review.get("request"), Mapping):
        problem = Problem("an AdmissionReview with a request is expected", field="request")
        raise InvalidInput([problem])
    request: Mapping[str, Any] = review["request"]
    response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": True}
    operations = suspend_operations(request, queue_label)
    if operations:
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(operations).encode()).decode()
        response["warnings"] = ["Berth suspended this Job until its queue admits it"]
    return {
        "apiVersion": str(review.get("apiVersion") or REVIEW_API_VERSION),
        "kind": "AdmissionReview",
        "response": response,
    }


def suspend_operations(request: Mapping[str, Any], queue_label: str) -> list[dict[str, Any]]:
    """The JSON patch operations for one request (empty: leave the Job alone)."""
    job = request.get("object")
    if request.get("operation") != "CREATE" or not isinstance(job, Mapping):
        return []
    labels = (job.get("metadata") or {}).get("labels") or {}
    if queue_label not in labels:
        return []
    spec = job.get("spec")
    if not isinstance(spec, Mapping):
        return [{"op": "add", "path": "/spec", "value": {"suspend": True}}]
    if spec.get("suspend") is True:
        return []
    # "add" replaces a member that exists (RFC 6902), so it covers suspend: false too.
    return [{"op": "add", "path": "/spec/suspend", "value": True}]
