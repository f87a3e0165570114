"""Node health in the ledger: change a node's state, its transition history, what it displaced.

Every change of ``nodes.health`` goes through ``set_health`` (or, for a manifest that sets
the ``berth.dev/health`` annotation, through ``Ledger.upsert``, which calls
``record_transition``): the node row, a ``node_health_transitions`` row and an audit row
change in the caller's transaction. Repositories never commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, func, insert, select, text, update
from sqlalchemy.orm import Session

from quota.core.errors import Conflict, NotFound
from quota.core.model import NodeHealth
from quota.ledger.audit import AuditEntry, write_audit
from quota.ledger.errors import translated
from quota.ledger.objects import table_of
from quota.ledger.schema import NodeHealthTransitionRow, NodeRow

_NODES = table_of(NodeRow)
_TRANSITIONS = table_of(NodeHealthTransitionRow)


@dataclass(frozen=True, slots=True)
class NodeState:
    name: str
    health: NodeHealth
    since: datetime


@dataclass(frozen=True, slots=True)
class HealthTransition:
    node: str
    before: NodeHealth | None  # None: the node entered the inventory in ``after``
    after: NodeHealth
    why: str
    actor: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Displaced:
    """A workload a node fault evicted."""

    namespace: str
    name: str
    at: datetime
    details: dict[str, Any]


@translated
def node_state(session: Session, name: str, *, for_update: bool = False) -> NodeState | None:
    """The node's health and since when, or None when the inventory has no such node."""
    query = select(_NODES.c.health, _NODES.c.health_since).where(_NODES.c.name == name)
    if for_update:
        query = query.with_for_update()
    row = session.execute(query).one_or_none()
    return None if row is None else NodeState(name, NodeHealth(row.health), row.health_since)


@translated
def set_health(
    session: Session,
    name: str,
    before: NodeHealth,
    after: NodeHealth,
    *,
    why: str,
    actor: str,
) -> HealthTransition:
    """Move node ``name`` from ``before`` to ``after``; ``Conflict`` if it is no longer
    ``before`` (someone moved it first), ``NotFound`` if it does not exist."""
    result = session.execute(
        update(_NODES)
        .where(_NODES.c.name == name, _NODES.c.health == str(before))
        .values(
            health=str(after),
            health_since=func.now(),
            version=_NODES.c.version + 1,
            updated_at=func.now(),
        )
    )
    if cast("CursorResult[Any]", result).rowcount != 1:
        current = node_state(session, name)
        if current is None:
            raise NotFound(f"node {name} does not exist", field="name")
        raise Conflict(
            f"node {name} is {current.health}, not {before}: reload and retry", field="state"
        )
    write_audit(session, actor, [AuditEntry(
        "update", "Node", None, name, {"health": str(before)}, {"health": str(after), "why": why},
    )])  # fmt: skip
    return record_transition(session, name, before, after, why=why, actor=actor)


def record_transition(
    session: Session,
    name: str,
    before: NodeHealth | None,
    after: NodeHealth,
    *,
    why: str,
    actor: str,
) -> HealthTransition:
    """Append one row to the node's health history (at the transaction's time)."""
    at: datetime = session.execute(
        insert(_TRANSITIONS)
        .values(
            node=name,
            from_state=None if before is None else str(before),
            to_state=str(after),
            why=why,
            actor=actor,
            at=func.now(),
        )
        .returning(_TRANSITIONS.c.at)
    ).scalar_one()
    return HealthTransition(name, before, after, why, actor, at)


@translated
def history(session: Session, name: str, *, limit: int = 200) -> list[HealthTransition]:
    """The node's last ``limit`` health transitions, oldest first."""
    rows = session.execute(
        select(_TRANSITIONS)
        .where(_TRANSITIONS.c.node == name)
        .order_by(_TRANSITIONS.c.at.desc(), _TRANSITIONS.c.id.desc())
        .limit(limit)
    ).mappings()
    found = [
        HealthTransition(
            row["node"],
            None if row["from_state"] is None else NodeHealth(row["from_state"]),
            NodeHealth(row["to_state"]),
            row["why"],
            row["actor"],
            row["at"],
        )
        for row in rows
    ]
    return found[::-1]


@translated
def displaced(session: Session, name: str, *, limit: int = 100) -> list[Displaced]:
    """Workloads evicted because node ``name`` failed, newest first."""
    rows = session.execute(
        text(
            "SELECT w.namespace, w.name, e.at, e.details FROM workload_events e "
            "JOIN workloads w ON w.id = e.workload_id "
            "WHERE e.reason = 'NodeUnhealthy' AND e.type = 'Evicted' "
            "AND e.details -> 'nodes' ? :node "
            "ORDER BY e.at DESC, e.id DESC LIMIT :limit"
        ),
        {"node": name, "limit": limit},
    ).mappings()
    return [Displaced(r["namespace"], r["name"], r["at"], dict(r["details"])) for r in rows]


@dataclass(frozen=True, slots=True)
class NodeSummary:
    name: str
    health: NodeHealth
    since: datetime
    displaced: int  # workloads its faults evicted, ever


@translated
def summaries(session: Session) -> list[NodeSummary]:
    """Every node's health, since when, and how much work its faults displaced; by name."""
    rows = session.execute(
        text(
            "WITH displaced AS (SELECT node, count(*) AS n FROM workload_events e, "
            "jsonb_array_elements_text(e.details -> 'nodes') AS node "
            "WHERE e.reason = 'NodeUnhealthy' AND e.type = 'Evicted' GROUP BY node) "
            "SELECT n.name, n.health, n.health_since, coalesce(d.n, 0) AS displaced "
            "FROM nodes n LEFT JOIN displaced d ON d.node = n.name ORDER BY n.name"
        )
    ).mappings()
    return [
        NodeSummary(r["name"], NodeHealth(r["health"]), r["health_since"], int(r["displaced"]))
        for r in rows
    ]


@translated
def annotate_workload(
    session: Session, namespace: str, name: str, key: str, value: str
) -> bool:
    """Set one of Berth's annotations on the unfinished workload ``namespace/name`` (a
    version bump, so a cycle decided on the old row retries); False when there is no such
    workload or the annotation already has that value."""
    result = session.execute(
        text(
            "UPDATE workloads SET annotations = annotations || jsonb_build_object("
            "CAST(:key AS text), CAST(:value AS text)), "
            "version = version + 1, updated_at = now() "
            "WHERE namespace = :namespace AND name = :name AND state <> 'Finished' "
            "AND annotations ->> CAST(:key AS text) IS DISTINCT FROM CAST(:value AS text)"
        ),
        {"namespace": namespace, "name": name, "key": key, "value": value},
    )
    return cast("CursorResult[Any]", result).rowcount == 1
