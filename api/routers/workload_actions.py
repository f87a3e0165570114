"""Standalone mode: ``POST /api/v1/workloads`` (submit) and ``…/{namespace}/{name}/finish``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import yaml
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from admission.submit import finish_workload, submit_workload
from api.deps import LedgerDep
from quota.errors import InvalidInput, Problem
from quota.ledger_codec import admission_json
from quota.quantity import format_resources
from quota.workload import Workload

router = APIRouter(prefix="/api/v1", tags=["workloads"])


@router.post(
    "/workloads",
    status_code=201,
    response_model=None,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/yaml": {"schema": {"type": "string"}},
                "application/json": {"schema": {"type": "object"}},
            },
        }
    },
)
async def submit(request: Request, ledger: LedgerDep) -> JSONResponse:
    """Submit a batch/v1 Job or Kueue Workload manifest (YAML or JSON) as a pending workload."""
    doc = _document((await request.body()).decode("utf-8", errors="replace"))
    workload = submit_workload(ledger, doc, now=datetime.now(UTC), actor=_actor(request))
    return JSONResponse(workload_json(workload), status_code=201)


@router.post("/workloads/{namespace}/{name}/finish")
def finish(namespace: str, name: str, request: Request, ledger: LedgerDep) -> dict[str, Any]:
    """Mark a workload finished: the quota it held is released."""
    workload = finish_workload(
        ledger, namespace, name, now=datetime.now(UTC), actor=_actor(request)
    )
    return workload_json(workload)


def workload_json(workload: Workload) -> dict[str, Any]:
    """A workload as the write endpoints answer it (quantities as Kubernetes strings)."""
    admission = admission_json(workload.admission)
    if admission is not None:
        for assignment in admission["podSetAssignments"]:
            assignment["usage"] = format_resources(assignment["usage"])
    return {
        "namespace": workload.namespace,
        "name": workload.name,
        "kind": workload.kind,
        "queueName": workload.queue_name,
        "priority": workload.priority,
        "priorityClassName": workload.priority_class,
        "state": str(workload.state),
        "active": workload.active,
        "createdAt": workload.created_at.isoformat(),
        "admittedAt": workload.admitted_at.isoformat() if workload.admitted_at else None,
        "evictionCount": workload.eviction_count,
        "podSets": [
            {
                "name": p.name,
                "count": p.count,
                "minCount": p.min_count,
                "requests": format_resources(dict(p.requests)),
            }
            for p in workload.pod_sets
        ],
        "admission": admission,
    }


def _document(body: str) -> object:
    """The one manifest of the body; YAML is a superset of JSON, so one parser serves both."""
    try:
        docs = [d for d in yaml.safe_load_all(body) if d is not None]
    except yaml.YAMLError as exc:
        raise InvalidInput([Problem(f"not valid YAML or JSON: {exc}", source="request")]) from exc
    if len(docs) != 1:
        raise InvalidInput(
            [
                Problem(
                    f"expected exactly one Job or Workload manifest, got {len(docs)}",
                    source="request",
                )
            ]
        )
    return docs[0]


def _actor(request: Request) -> str:
    client = request.client.host if request.client else "unknown"
    return f"api:{client}"
