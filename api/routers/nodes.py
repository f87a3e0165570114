"""Node repair workflow: move a node through ``Cordoned → Repairing → Validating → Healthy``
(``POST /api/v1/nodes/{name}/health``), read its health history (``…/history``) and every
node's state at once (``GET /api/v1/node-health``, the dashboard's Nodes and health panel)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from pydantic import ConfigDict, Field
from sqlalchemy.orm import Session

from api import tenancy
from api.auth import Caller, Grant
from api.deps import ContextDep, LedgerDep, actor
from api.guards import BoundedJsonRoute
from api.params import ObjectName
from api.schemas.base import Schema
from api.schemas.errors import error_responses
from api.schemas.manifests import NO_NUL
from quota.core.errors import Conflict, InvalidInput, NotFound, Problem
from quota.core.model import NodeHealth
from quota.core.node_health import operator_move
from quota.ledger import nodes as ledger_nodes
from quota.ledger.nodes import HealthTransition

actions = APIRouter(prefix="/api/v1", tags=["nodes"], route_class=BoundedJsonRoute)
reads = APIRouter(prefix="/api/v1", tags=["nodes"])

_STATES = ", ".join(str(state) for state in NodeHealth)


class HealthRequest(Schema):
    """A move of a node's health state; no other fields (a misspelt one is refused)."""

    # The states are declared, not validated by pydantic: ``_state`` refuses any other
    # with a message that lists them, naming the field as the clients know it.
    # Only the names the document declares: no other field, nor snake_case spellings.
    model_config = ConfigDict(extra="forbid", populate_by_name=False)
    state: str = Field(
        description=f"the state to move the node to: {_STATES}",
        json_schema_extra={"enum": [str(state) for state in NodeHealth]},
    )
    why: str = Field(
        "", description="why (kept in the node's history and the audit log)",
        json_schema_extra={"pattern": NO_NUL},
    )  # fmt: skip
    expected_state: str | None = Field(
        None, description="refuse (409) unless the node is in this state now",
        json_schema_extra={"enum": [*(str(state) for state in NodeHealth), None]},
    )  # fmt: skip


class Transition(Schema):
    node: str
    from_: str | None = Field(alias="from", description="None: the node appeared in this state")
    to: str
    why: str
    actor: str
    at: datetime


class DisplacedWorkload(Schema):
    namespace: str
    name: str
    at: datetime
    details: dict[str, Any]


class NodeHistory(Schema):
    node: str
    health: str
    health_since: datetime
    transitions: list[Transition] = Field(description="oldest first (the last 200)")
    displaced: list[DisplacedWorkload] = Field(
        description="workloads its faults evicted, newest first (the last 100)"
    )


class NodeHealthOut(Schema):
    node: str
    health: str
    health_since: datetime
    displaced: int = Field(description="workloads its faults evicted (NodeUnhealthy), ever")


class NodeHealthList(Schema):
    items: list[NodeHealthOut]


@reads.get("/node-health", response_model=NodeHealthList, response_model_by_alias=True)
def node_health(ledger: LedgerDep) -> NodeHealthList:
    """Every node's health state, since when, and how many workloads its faults evicted."""
    return NodeHealthList(
        items=[
            NodeHealthOut(
                node=n.name, health=str(n.health), health_since=n.since, displaced=n.displaced
            )
            for n in ledger_nodes.summaries(ledger.session)
        ]
    )


@actions.post(
    "/nodes/{name}/health",
    response_model=Transition,
    response_model_by_alias=True,
    responses=error_responses(
        404, 409, 413,
        notes={409: "Conflict: not a move an operator may make from the node's state now, "
               "or the node is not in expectedState"},
    ),
)  # fmt: skip
def set_health(
    name: ObjectName, body: HealthRequest, request: Request, ctx: ContextDep
) -> Transition:
    """Move a node to another health state, as an operator (repair workflow)."""
    target = _state(body.state, "state")
    expected = None if body.expected_state is None else _state(body.expected_state, "expectedState")
    with ctx.session_scope() as session:
        done = _move(session, name, target, expected, body.why, actor(request))
    return _transition(done)


def _move(
    session: Session, name: str, target: NodeHealth, expected: NodeHealth | None, why: str,
    actor: str,
) -> HealthTransition:
    current = ledger_nodes.node_state(session, name, for_update=True)
    if current is None:
        raise NotFound(f"node {name} does not exist", field="name")
    if expected is not None and current.health is not expected:
        raise Conflict(
            f"node {name} is {current.health}, not {expected} (expectedState)",
            field="expectedState",
        )
    refused = operator_move(name, current.health, target)
    if refused is not None:
        raise Conflict(refused, field="state")
    why = why.strip() or f"moved to {target} by an operator"
    return ledger_nodes.set_health(session, name, current.health, target, why=why, actor=actor)


@reads.get(
    "/nodes/{name}/history",
    response_model=NodeHistory,
    response_model_by_alias=True,
    responses=error_responses(404),
)
def history(name: ObjectName, ledger: LedgerDep, caller: Caller) -> NodeHistory:
    """The node's health now, every transition (who, why, when) and the work it displaced
    (another namespace's work, to a tenant, as "(another namespace)")."""
    session = ledger.session
    current = ledger_nodes.node_state(session, name)
    if current is None:
        raise NotFound(f"node {name} does not exist", field="name")
    return NodeHistory(
        node=name,
        health=str(current.health),
        health_since=current.since,
        transitions=[_transition(t, caller) for t in ledger_nodes.history(session, name)],
        displaced=[_displaced(d, caller) for d in ledger_nodes.displaced(session, name)],
    )


def _state(value: str, field: str) -> NodeHealth:
    for state in NodeHealth:
        if state.value == value:
            return state
    message = f"{value!r} is not a node health state; expected one of: {_STATES}"
    raise InvalidInput([Problem(message, source="request", field=field)])


def _displaced(d: ledger_nodes.Displaced, caller: Grant | None) -> DisplacedWorkload:
    namespace, name, details = tenancy.owned(caller, d.namespace, d.name, d.details)
    return DisplacedWorkload(namespace=namespace, name=name, at=d.at, details=dict(details))


def _transition(t: HealthTransition, caller: Grant | None = None) -> Transition:
    return Transition.model_validate(
        {
            "node": t.node,
            "from": None if t.before is None else str(t.before),
            "to": str(t.after),
            "why": tenancy.node_why(caller, t.why),
            "actor": t.actor,
            "at": t.at,
        }
    )
