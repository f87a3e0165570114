"""Applying the node health state machine at the edge, in the caller's transaction.

A watched Node updates the inventory (capacity, allocatable, conditions) but never its
health directly: the health state is Berth's, moved by ``health.observe`` here and by an
operator over REST. Every move is a history row and an audit row (``quota.ledger_nodes``).
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy.orm import Session

from quota.core.model import Node, NodeHealth
from quota.core.node_health import HealthThresholds, Move, observe
from quota.ledger import nodes as ledger_nodes
from quota.ledger.repository import Ledger


def observe_node(
    session: Session, node: Node, thresholds: HealthThresholds, *, actor: str
) -> tuple[bool, Move | None]:
    """Store the watched ``node`` (keeping its health state) and make the automatic move it
    calls for; whether the ledger changed, and the move made."""
    stored = ledger_nodes.node_state(session, node.name, for_update=True)
    current = NodeHealth.HEALTHY if stored is None else stored.health
    changed = Ledger(session).upsert(replace(node, health=current), actor=actor) != "unchanged"
    move = observe(current, node, thresholds)
    if move is not None:
        ledger_nodes.set_health(session, node.name, current, move.state, why=move.why, actor=actor)
    return changed or move is not None, move


def degrade(session: Session, name: str, why: str, *, actor: str) -> bool:
    """Mark a Healthy node Degraded (a device error was seen on it); False when the node is
    unknown or already not Healthy."""
    stored = ledger_nodes.node_state(session, name, for_update=True)
    if stored is None or stored.health is not NodeHealth.HEALTHY:
        return False
    ledger_nodes.set_health(
        session, name, NodeHealth.HEALTHY, NodeHealth.DEGRADED, why=why, actor=actor
    )
    return True
