"""Workload writes: ``POST /api/v1/workloads`` (submit, standalone mode),
``…/{namespace}/{name}/finish``, ``DELETE …/{namespace}/{name}`` and
``…/{namespace}/{name}/checkpointed``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field

from admission.intake.workloads import finish_workload, submit_workload
from api.deps import ContextDep, RawBody, actor, written
from api.params import DryRun, NamespaceName, ObjectName, Rfc3339
from api.schemas.base import Schema
from api.schemas.errors import error_responses
from api.schemas.manifests import WorkloadOut, manifest_body
from quota.core.errors import InvalidInput, Problem
from quota.core.metering import IntervalEnd
from quota.core.quantity import format_resources
from quota.core.times import parse_rfc3339
from quota.core.workload import Workload
from quota.ledger.checkpoints import record_checkpoint
from quota.ledger.codec import admission_json
from quota.ledger.repository import Ledger
from quota.manifests.limits import load_json, read_documents

router = APIRouter(prefix="/api/v1", tags=["workloads"])
CLOCK_SKEW = timedelta(minutes=1)  # a reporter's clock may run a little ahead of ours


# The body of POST …/checkpointed as the OpenAPI document declares it; _checkpoint_body
# reads it with messages of its own, and the schemathesis run keeps the two in step.
class CheckpointBody(Schema):
    """A checkpoint report: when it was taken and where it was saved; no other fields."""

    model_config = ConfigDict(extra="forbid")
    at: Rfc3339 | None = Field(None, description="when it was taken; default: now")
    location: str | None = Field(
        None, min_length=1, max_length=1024, pattern=r"^[^\x00]*[^\s\x00][^\x00]*$",
        description="where it was saved (not blank)",
    )


@router.post(
    "/workloads",
    status_code=201,
    response_model=WorkloadOut,
    openapi_extra={
        "requestBody": manifest_body(
            "WorkloadManifest",
            "one batch/v1 Job, JobSet, Kubeflow job, RayJob, RayCluster or Kueue Workload "
            "manifest, YAML or JSON",
        )
    },
    responses=error_responses(
        409, 413, notes={409: "Conflict: an unfinished workload has that namespace/name"}
    ),
)
def submit(
    body: RawBody, request: Request, ctx: ContextDep, dry_run: DryRun = None
) -> JSONResponse:
    """Submit a batch/v1 Job or Kueue Workload manifest (YAML or JSON) as a pending workload
    (``?dryRun=All``: every check, the answer it would give, nothing written).

    Beyond the schema, a 422 names what only the whole manifest shows: a pod set name
    given twice, minCount over count, the job-min-parallelism and checkpoint annotations,
    a quantity out of range, annotations over 256 KiB in total."""
    doc = _document(body.decode("utf-8", errors="replace"))
    by, now = actor(request), datetime.now(UTC)
    workload = written(
        ctx, lambda session: submit_workload(Ledger(session), doc, now=now, actor=by),
        dry_run=dry_run is not None,
    )  # fmt: skip
    return JSONResponse(workload_json(workload), status_code=201)


@router.post(
    "/workloads/{namespace}/{name}/finish",
    response_model=WorkloadOut,
    responses=error_responses(404, 409),
)
def finish(namespace: NamespaceName, name: ObjectName, request: Request,
           ctx: ContextDep) -> JSONResponse:  # fmt: skip
    """Mark a workload finished: the quota it held is released."""
    with ctx.session_scope() as session:
        workload = finish_workload(
            Ledger(session), namespace, name, now=datetime.now(UTC), actor=actor(request)
        )
    return JSONResponse(workload_json(workload))


@router.delete(
    "/workloads/{namespace}/{name}",
    response_model=WorkloadOut,
    responses=error_responses(404),
)
def delete(namespace: NamespaceName, name: ObjectName, request: Request,
           ctx: ContextDep) -> JSONResponse:  # fmt: skip
    """Delete a workload as deleting its Job does: it is finished (its usage ends as
    ``Deleted``) and the quota it held is released; its history stays readable."""
    with ctx.session_scope() as session:
        workload = finish_workload(
            Ledger(session), namespace, name, now=datetime.now(UTC), actor=actor(request),
            end=IntervalEnd.DELETED,
        )  # fmt: skip
    return JSONResponse(workload_json(workload))


@router.post(
    "/workloads/{namespace}/{name}/checkpointed",
    response_model=WorkloadOut,
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {"application/json": {"schema": CheckpointBody.model_json_schema()}},
        }
    },
    responses=error_responses(
        404, 409, 413,
        notes={409: "Conflict: the workload has finished; a checkpoint no longer matters"},
    ),
)  # fmt: skip
def checkpointed(
    namespace: NamespaceName, name: ObjectName, body: RawBody, request: Request,
    ctx: ContextDep,
) -> JSONResponse:  # fmt: skip
    """The workload saved a checkpoint (``at``, default now; ``location`` optional). An
    evicting victim is then suspended and requeued at once instead of at its deadline.

    ``at`` may not be in the future (a minute of clock skew allowed): a 422 names it, as
    JSON Schema cannot compare with the server's clock."""
    now = datetime.now(UTC)
    at, location = _checkpoint_body(body, now)
    with ctx.session_scope() as session:
        workload, _ = record_checkpoint(
            session, namespace, name, at=at, location=location, now=now,
            actor=actor(request),
        )
    return JSONResponse(workload_json(workload))


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
            at = parse_rfc3339(doc["at"]).astimezone(UTC)
        except (ValueError, OverflowError) as exc:  # overflow: before year 1 in UTC
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
        "admissionChecks": [{"name": c.name, "state": str(c.state), "message": c.message}
                            for c in workload.checks],
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
