"""Workload writes: ``POST /api/v1/workloads`` (submit, standalone mode),
``…/{namespace}/{name}/finish`` and ``…/{namespace}/{name}/checkpointed``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from admission.intake.workloads import finish_workload, submit_workload
from api.deps import ContextDep, RawBody
from quota.core.checkpoints import parse_time
from quota.core.errors import InvalidInput, Problem
from quota.core.quantity import format_resources
from quota.core.workload import Workload
from quota.ledger.checkpoints import record_checkpoint
from quota.ledger.codec import admission_json
from quota.ledger.repository import Ledger
from quota.manifests.limits import load_json, read_documents

router = APIRouter(prefix="/api/v1", tags=["workloads"])
CLOCK_SKEW = timedelta(minutes=1)  # a reporter's clock may run a little ahead of ours


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
def submit(body: RawBody, request: Request, ctx: ContextDep) -> JSONResponse:
    """Submit a batch/v1 Job or Kueue Workload manifest (YAML or JSON) as a pending workload."""
    doc = _document(body.decode("utf-8", errors="replace"))
    with ctx.session_scope() as session:
        workload = submit_workload(
            Ledger(session), doc, now=datetime.now(UTC), actor=_actor(request)
        )
    return JSONResponse(workload_json(workload), status_code=201)


@router.post("/workloads/{namespace}/{name}/finish")
def finish(namespace: str, name: str, request: Request, ctx: ContextDep) -> dict[str, Any]:
    """Mark a workload finished: the quota it held is released."""
    with ctx.session_scope() as session:
        workload = finish_workload(
            Ledger(session), namespace, name, now=datetime.now(UTC), actor=_actor(request)
        )
    return workload_json(workload)


@router.post(
    "/workloads/{namespace}/{name}/checkpointed",
    response_model=None,
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "at": {"type": "string", "format": "date-time"},
                            "location": {"type": "string"},
                        },
                    }
                }
            },
        }
    },
)
def checkpointed(
    namespace: str, name: str, body: RawBody, request: Request, ctx: ContextDep
) -> dict[str, Any]:
    """The workload saved a checkpoint (``at``, default now; ``location`` optional). An
    evicting victim is then suspended and requeued at once instead of at its deadline."""
    now = datetime.now(UTC)
    at, location = _checkpoint_body(body, now)
    with ctx.session_scope() as session:
        workload, _ = record_checkpoint(
            session, namespace, name, at=at, location=location, now=now,
            actor=_actor(request),
        )
    return workload_json(workload)


def _checkpoint_body(body: bytes, now: datetime) -> tuple[datetime, str | None]:
    if not body.strip():
        return now, None
    try:
        doc = load_json(body, "request")
    except ValueError as exc:
        raise InvalidInput([Problem(f"not valid JSON: {exc}", source="request")]) from exc
    if not isinstance(doc, dict):
        raise InvalidInput([Problem("must be a JSON object {at?, location?}", source="request")])
    unknown = sorted(set(doc) - {"at", "location"})
    if unknown:
        raise InvalidInput(
            [Problem("unknown field; expected at, location", source="request", field=unknown[0])]
        )
    at = now
    if doc.get("at") is not None:
        if not isinstance(doc["at"], str):
            raise InvalidInput([Problem("must be an RFC 3339 time string", source="request",
                                        field="at")])
        try:
            at = parse_time(doc["at"])
        except ValueError as exc:
            raise InvalidInput([Problem(str(exc), source="request", field="at")]) from exc
        if at > now + CLOCK_SKEW:
            raise InvalidInput([Problem(f"{doc['at']} is in the future", source="request",
                                        field="at")])
    location = doc.get("location")
    if location is not None and (not isinstance(location, str) or not location.strip()
                                 or len(location) > 1024):
        raise InvalidInput([Problem("must be a non-empty string of at most 1024 characters",
                                    source="request", field="location")])
    return at, location


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
    """The one manifest of the body (YAML or JSON), read within the input bounds."""
    docs = [doc for _, doc in read_documents(body, "request")]
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
