"""The pending workloads of a ClusterQueue (or of one of its LocalQueues) in the engine's
order, each with its place in the ClusterQueue and in its LocalQueue: what Kueue's
visibility API lists (``GET …/pendingworkloads``).

Both places come from the one stored order, ``queue_position`` (the engine's 1-based place
in the ClusterQueue, ``admission.engine.statuses``), read by ``pending_head`` as the
workload detail's "ahead" is: the place in the ClusterQueue is that position, counted from
0 as Kueue counts; the place in the LocalQueue is how many of the same LocalQueue come
before it in that order, counted while walking the head as Kueue's visibility server does.
A pending workload without a position (deactivated, or submitted since the last cycle) is
in no queue yet, and listed by neither.

Keeping only some LocalQueues (a tenant's namespaces, or the one LocalQueue asked for)
keeps whole LocalQueues, so their places are the same as when every one is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from quota.ledger.errors import translated
from quota.ledger.reads.workloads import pending_head

_UNBOUNDED = "2147483647"
_MORE = (
    "w.kind, w.queue_name, w.created_at, w.annotations ->> :uid_key AS owner_uid, "
    "w.reasons -> 0 AS primary"
)


@dataclass(frozen=True, slots=True)
class PendingEntry:
    """One pending workload as the visibility API lists it."""

    namespace: str
    name: str
    kind: str
    queue_name: str
    priority: int
    created_at: datetime
    owner_uid: str | None  # the uid annotation's value, when the workload has one
    reason_code: str | None
    primary: Mapping[str, Any] | None  # the primary reason {code, message, details}
    in_cluster_queue: int  # 0-based
    in_local_queue: int  # 0-based


@translated
def pending_workloads(
    session: Session,
    cluster_queue: str,
    *,
    offset: int,
    limit: int,
    uid_key: str,
    namespaces: Sequence[str] | None = None,
    local_queue: tuple[str, str] | None = None,
) -> list[PendingEntry]:
    """Entries ``offset`` to ``offset + limit`` of the ClusterQueue's pending order, of the
    LocalQueues in ``namespaces`` (None: all) or the one ``local_queue`` (namespace, name)
    only; ``uid_key``: the annotation that holds the owner's uid."""
    kept: list[str] = []
    params: dict[str, Any] = {"cq": cluster_queue, "limit": offset + limit, "uid_key": uid_key}
    if namespaces is not None:
        kept.append("lq.namespace = ANY(CAST(:namespaces AS text[]))")
        params["namespaces"] = list(namespaces)
    if local_queue is not None:
        kept.append("lq.namespace = :lq_namespace AND lq.name = :lq_name")
        params["lq_namespace"], params["lq_name"] = local_queue
    query = pending_head(":cq", _UNBOUNDED, more=_MORE, local_queues=" AND ".join(kept))
    rows = session.execute(text(query), params).mappings()
    entries: list[PendingEntry] = []
    seen: dict[tuple[str, str], int] = {}  # per LocalQueue: how many came before
    for row in rows:
        queue = (row["namespace"], row["queue_name"])
        place = seen.get(queue, 0)
        seen[queue] = place + 1
        entries.append(
            PendingEntry(
                namespace=row["namespace"],
                name=row["name"],
                kind=row["kind"],
                queue_name=row["queue_name"],
                priority=row["priority"],
                created_at=row["created_at"],
                owner_uid=row["owner_uid"],
                reason_code=row["reason_code"],
                primary=row["primary"],
                in_cluster_queue=row["queue_position"] - 1,
                in_local_queue=place,
            )
        )
    return entries[offset:]
