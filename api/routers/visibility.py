"""Kueue's visibility API, served by Berth: ``GET /apis/visibility.kueue.x-k8s.io/<version>/
clusterqueues/{name}/pendingworkloads`` and ``…/namespaces/{namespace}/localqueues/{name}/
pendingworkloads``, for v1beta2 and v1beta1 (the same shape), so that ``kubectl get --raw``
and Kueue's clients read Berth's queues as they read Kueue's.

The answer is Kueue's ``PendingWorkloadsSummary``; ``limit`` and ``offset`` are taken as
Kueue's server takes them (``pkg/visibility/storage``): a limit of 0 means the default 1000,
more than 100 000 means 100 000, a negative limit lists nothing and a negative offset is 0.
The places are the engine's (``quota.ledger.reads.pending``). Each item also carries
Berth's primary wait reason, as the annotations ``berth.dev/wait-reason`` and
``berth.dev/wait-message`` of its metadata: the names Berth writes on the Job itself, and a
place every Kubernetes client keeps (ObjectMeta has annotations), where a field of Berth's
own beside Kueue's would be dropped by typed clients or refused by strict ones.

A tenant token lists only its namespaces' workloads; their places stay the real ones (a
ClusterQueue's list may so have gaps), and ``offset``/``limit`` count what it sees. Errors
of these routes are Kubernetes ``Status`` objects, as Kueue's clients expect.
"""

from __future__ import annotations

from datetime import UTC
from typing import Annotated, NamedTuple

from fastapi import APIRouter, Query
from fastapi.responses import Response
from pydantic import BaseModel

from admission.kube.kinds.registry import by_kind
from admission.kube.templates import JOB_UID, WAIT_MESSAGE, WAIT_REASON
from api import tenancy
from api.auth import Caller, Grant
from api.deps import LedgerDep
from api.params import NamespaceName, ObjectName
from api.schemas.visibility import (
    GROUP,
    VERSIONS,
    KubeStatus,
    OwnerReferenceOut,
    PendingWorkloadMeta,
    PendingWorkloadOut,
    PendingWorkloadsSummary,
    StatusDetails,
)
from quota.core.model import LocalQueue
from quota.ledger.reads.pending import PendingEntry, pending_workloads

DEFAULT_LIMIT = 1000  # Kueue's constants.DefaultPendingWorkloadsLimit
MAX_LIMIT = 100_000  # Kueue's constants.MaxPendingWorkloadsLimit
_INT64 = 2**63 - 1
_INT32 = 2**31 - 1

router = APIRouter(tags=["visibility"])

Limit = Annotated[
    int,
    Query(ge=-_INT64 - 1, le=_INT64,
          description=f"at most this many (0: {DEFAULT_LIMIT}; over {MAX_LIMIT}: {MAX_LIMIT})"),
]  # fmt: skip
Offset = Annotated[
    int,
    Query(ge=-_INT64 - 1, le=_INT64, description="skip this many first (negative: 0)"),
]
_NOT_FOUND: dict[int | str, dict[str, object]] = {
    404: {"model": KubeStatus, "description": "NotFound: no such ClusterQueue or LocalQueue"},
}
_ERRORS: dict[int | str, dict[str, object]] = {
    403: {"model": KubeStatus, "description": "Forbidden: a tenant token, another namespace"},
    **_NOT_FOUND,
}


def _routes(version: str) -> None:
    """The two routes of one version (they differ only in the apiVersion they answer)."""
    base = f"/apis/{GROUP}/{version}"

    def cluster_queue_pending(
        name: ObjectName, ledger: LedgerDep, caller: Caller,
        limit: Limit = DEFAULT_LIMIT, offset: Offset = 0,
    ) -> Response:  # fmt: skip
        """The pending workloads of a ClusterQueue, in its order (Kueue's visibility API)."""
        if ledger.get("ClusterQueue", name) is None:
            return _status(404, "NotFound", "clusterqueue", name, "not found")
        page = _page(limit, offset)
        found = pending_workloads(
            ledger.session, name, offset=page.offset, limit=page.limit, uid_key=JOB_UID,
            namespaces=tenancy.namespaces(caller),
        )  # fmt: skip
        return _summary(version, found, caller)

    def local_queue_pending(
        namespace: NamespaceName, name: ObjectName, ledger: LedgerDep, caller: Caller,
        limit: Limit = DEFAULT_LIMIT, offset: Offset = 0,
    ) -> Response:  # fmt: skip
        """The pending workloads of a LocalQueue, in its ClusterQueue's order (Kueue's
        visibility API)."""
        if not tenancy.may_see(caller, namespace):
            why = f"this token may not see namespace {namespace!r}"
            return _status(403, "Forbidden", "localqueue", name, f"is forbidden: {why}")
        queue = ledger.get("LocalQueue", name, namespace)
        if not isinstance(queue, LocalQueue):
            return _status(404, "NotFound", "localqueue", name, "not found")
        page = _page(limit, offset)
        found = pending_workloads(
            ledger.session, queue.cluster_queue, offset=page.offset, limit=page.limit,
            uid_key=JOB_UID, local_queue=(namespace, name),
        )  # fmt: skip
        return _summary(version, found, caller)

    router.add_api_route(
        f"{base}/clusterqueues/{{name}}/pendingworkloads", cluster_queue_pending,
        methods=["GET"], response_model=PendingWorkloadsSummary, responses=_NOT_FOUND,
        name=f"cluster_queue_pending_{version}",
    )  # fmt: skip
    router.add_api_route(
        f"{base}/namespaces/{{namespace}}/localqueues/{{name}}/pendingworkloads",
        local_queue_pending, methods=["GET"], response_model=PendingWorkloadsSummary,
        responses=_ERRORS, name=f"local_queue_pending_{version}",
    )  # fmt: skip


class _Page(NamedTuple):
    offset: int
    limit: int


def _page(limit: int, offset: int) -> _Page:
    """Kueue's defaulting and bounds of ``limit`` and ``offset`` (no queue holds more than
    an int32 of places, so a larger offset lists nothing as well)."""
    limit = DEFAULT_LIMIT if limit == 0 else limit
    return _Page(offset=min(max(offset, 0), _INT32), limit=min(max(limit, 0), MAX_LIMIT))


def _summary(version: str, found: list[PendingEntry], caller: Grant | None) -> Response:
    summary = PendingWorkloadsSummary(
        api_version=f"{GROUP}/{version}", items=[_item(e, caller) for e in found]
    )
    return _json(summary, 200)


def _item(entry: PendingEntry, caller: Grant | None) -> PendingWorkloadOut:
    owner = by_kind(entry.kind)
    owners = None
    if owner is not None and entry.owner_uid:  # known only for what Berth watches itself
        ref = OwnerReferenceOut(
            api_version=owner.api_version, kind=owner.kind, name=entry.name, uid=entry.owner_uid
        )
        owners = [ref]
    annotations = None
    if entry.reason_code is not None:
        primary = tenancy.reason(caller, entry.primary) if entry.primary else {}
        annotations = {WAIT_REASON: entry.reason_code,
                       WAIT_MESSAGE: str(primary.get("message", ""))}  # fmt: skip
    created = entry.created_at.astimezone(UTC).replace(microsecond=0)
    return PendingWorkloadOut(
        metadata=PendingWorkloadMeta(
            name=entry.name,
            namespace=entry.namespace,
            creation_timestamp=created.strftime("%Y-%m-%dT%H:%M:%SZ"),
            owner_references=owners,
            annotations=annotations,
        ),
        priority=entry.priority,
        local_queue_name=entry.queue_name,
        position_in_cluster_queue=entry.in_cluster_queue,
        position_in_local_queue=entry.in_local_queue,
    )


def _status(code: int, reason: str, kind: str, name: str, what: str) -> Response:
    """A Kubernetes Status, worded as Kueue's server words it (``errors.NewNotFound``)."""
    status = KubeStatus(
        message=f'{kind}.{GROUP} "{name}" {what}',
        reason=reason,
        details=StatusDetails(name=name, group=GROUP, kind=kind),
        code=code,
    )
    return _json(status, code)


def _json(model: BaseModel, status: int) -> Response:
    # Empty optional fields left out, as Go's omitempty leaves them.
    body = model.model_dump_json(by_alias=True, exclude_none=True)
    return Response(body, status_code=status, media_type="application/json")


for _version in VERSIONS:
    _routes(_version)
