"""The mutating admission webhook's decision (PURE): an AdmissionReview for a workload
object in, the review's response with a JSON patch setting its kind's suspend field
(``spec.suspend``, ``spec.runPolicy.suspend``: ``kinds``), or for a Pod adding Berth's
scheduling gate, out.

An object that names a queue must not start a pod before Berth admits it; objects without
the queue label are none of Berth's business and pass unchanged, and so does a kind Berth
does not queue (with a warning saying so: it runs without waiting for quota).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.pod import gate_operations
from admission.kube.kinds.registry import adapter_of, managed_owner
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
    adapter = _adapter(request)
    if adapter is None:
        if _queued(request, queue_label):
            kind = unsupported_kind(request)
            response["warnings"] = [
                f"Berth does not queue {kind}; it was created without waiting for quota"
            ]
    elif operations := suspend_operations(request, queue_label, adapter):
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(operations).encode()).decode()
        response["warnings"] = [f"Berth suspended this {adapter.kind} until its queue admits it"]
    return {
        "apiVersion": str(review.get("apiVersion") or REVIEW_API_VERSION),
        "kind": "AdmissionReview",
        "response": response,
    }


def unsupported_kind(request: Mapping[str, Any]) -> str:
    """``group/version Kind`` of the request's object, for messages."""
    kind = request.get("kind") or {}
    if isinstance(kind, Mapping) and kind.get("kind"):
        group = f"{kind.get('group')}/" if kind.get("group") else ""
        return f"{group}{kind.get('version')} {kind.get('kind')}"
    obj = request.get("object") or {}
    return f"{obj.get('apiVersion')} {obj.get('kind')}" if isinstance(obj, Mapping) else "?"


def _adapter(request: Mapping[str, Any]) -> Adapter | None:
    kind = request.get("kind")
    if isinstance(kind, Mapping) and kind.get("kind"):
        group, version = kind.get("group") or "", kind.get("version") or ""
        api_version = f"{group}/{version}" if group else version
        return adapter_of({"apiVersion": api_version, "kind": kind["kind"]})
    obj = request.get("object")
    return adapter_of(obj) if isinstance(obj, Mapping) else None


def _queued(request: Mapping[str, Any], queue_label: str) -> bool:
    obj = request.get("object")
    if request.get("operation") != "CREATE" or not isinstance(obj, Mapping):
        return False
    return queue_label in ((obj.get("metadata") or {}).get("labels") or {})


def suspend_operations(
    request: Mapping[str, Any], queue_label: str, adapter: Adapter | None = None
) -> list[dict[str, Any]]:
    """The JSON patch operations for one request (empty: leave the object alone)."""
    kind = adapter if adapter is not None else _adapter(request)
    if kind is None or not _queued(request, queue_label):
        return []
    if kind.gate is not None:
        if managed_owner(request["object"]) is not None:
            return []  # a Job's or framework's pod: admitted with its owner, never gated
        return gate_operations(request["object"])
    node: Any = request["object"]
    path = ""
    for depth, key in enumerate(kind.suspend_path):
        last = depth == len(kind.suspend_path) - 1
        child = node.get(key) if isinstance(node, Mapping) else None
        if last:
            if child is True:
                return []
            # "add" replaces a member that exists (RFC 6902), so it covers false too.
            return [{"op": "add", "path": f"{path}/{key}", "value": True}]
        if not isinstance(child, Mapping):
            value: Any = True
            for inner in reversed(kind.suspend_path[depth + 1 :]):
                value = {inner: value}
            return [{"op": "add", "path": f"{path}/{key}", "value": value}]
        node, path = child, f"{path}/{key}"
    return []
