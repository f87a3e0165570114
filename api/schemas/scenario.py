"""``POST /api/v1/simulate``: the scenario (docs/scenario.md) as JSON Schema, as
``admission.scenario`` reads it, and the shape of the answer.

As for manifests (``api.schemas.manifests``), every keyword states something the reader
refuses. What exists at a step (a finish or delete naming a workload created before it),
steps in time order and the size caps are checked across the scenario: a 422 names the
object (Kind/name, as apply does) and the field path from the scenario's root, which
starts with the step (``steps[2]...``); a 413 names the cap it passes.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from api.schemas.base import Schema
from api.schemas.manifests import TEXT, JsonSchema, ref
from api.schemas.workloads import Reason
from quota.core.checks import CheckState
from quota.core.workload import WorkloadState

# 0s, 90s, 5m, 1h30m: hours, minutes, seconds in that order, at least one of them.
DURATION_PATTERN = r"^(\d+h(\d+m)?(\d+s)?|\d+m(\d+s)?|\d+s)$"
_KEY = {"type": "string", "pattern": r"^[^/\x00]+/[^/\x00]+$", "description": "namespace/name"}
_KEYS = {"type": ["array", "null"], "items": _KEY}
_OBJECTS = {"type": ["array", "null"], "items": {"anyOf": [ref("QuotaObject"), ref("ObjectList")]}}

COMPONENTS: dict[str, JsonSchema] = {
    "Scenario": {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "name": {"type": ["string", "null"], "pattern": TEXT["pattern"]},
            "config": {"anyOf": [ref("ScenarioConfig"), {"type": "null"}]},
            "objects": _OBJECTS,
            "steps": {"type": ["array", "null"], "items": ref("ScenarioStep")},
        },
    },
    "ScenarioStep": {
        "type": "object",
        "additionalProperties": False,
        "required": ["at"],
        "properties": {
            "at": {"type": "string", "pattern": DURATION_PATTERN,
                   "description": "virtual time since the start, e.g. 0s, 90s, 5m, 1h30m; "
                   "not before the previous step's"},
            "apply": _OBJECTS,
            "delete": {"type": ["array", "null"], "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["kind", "name"],
                "properties": {
                    "kind": TEXT,
                    "name": {**TEXT, "minLength": 1},
                    "namespace": {"type": ["string", "null"], "pattern": TEXT["pattern"]},
                },
            }},
            "create": {"type": ["array", "null"], "items": ref("WorkloadManifest")},
            "finish": _KEYS,
            "deactivate": _KEYS,
            "checkpointed": _KEYS,
            "podsReady": _KEYS,
            "checks": {"type": ["array", "null"], "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["workload", "check", "state"],
                "properties": {
                    "workload": _KEY,
                    "check": {**TEXT, "minLength": 1},
                    "state": {"type": "string", "enum": [str(s) for s in CheckState]},
                    "message": TEXT,
                },
            }},
        },
    },
    "ScenarioConfig": {
        "type": "object",
        "additionalProperties": False,
        "description": "Kueue Configuration fields, as Kueue spells them",
        "properties": {"waitForPodsReady": {"type": ["object", "null"],
                                            "additionalProperties": False, "properties": {
            "enable": {"type": "boolean"},
            "timeout": {"type": "string", "pattern": DURATION_PATTERN},
            "blockAdmission": {"type": "boolean"},
            "recoveryTimeout": {"type": "string", "pattern": DURATION_PATTERN},
            "requeuingStrategy": {"type": ["object", "null"], "additionalProperties": False,
                                  "properties": {
                "timestamp": {"enum": ["Eviction", "Creation"]},
                "backoffLimitCount": {"type": "integer", "minimum": 0},
                "backoffBaseSeconds": {"type": "integer", "minimum": 1},
                "backoffMaxSeconds": {"type": "integer", "minimum": 1},
            }},
        }}},
    },
}  # fmt: skip


def scenario_body() -> dict[str, Any]:
    content = {"schema": ref("Scenario")}
    return {
        "required": True,
        "description": "a scenario (docs/scenario.md): objects, then timed steps",
        "content": {"application/yaml": content, "application/json": content},
    }


class WorkloadOutcome(Schema):
    """One workload at one step; the fields present depend on its state."""

    model_config = ConfigDict(extra="allow")
    state: WorkloadState
    cluster_queue: str | None = None
    reason: Reason | None = None
    reasons: list[Reason] | None = None
    position: int | None = None
    borrowing: bool | None = None


class QueueOutcome(Schema):
    usage: dict[str, dict[str, str]] = Field(description="flavor → resource → quantity")
    borrowed: dict[str, dict[str, str]]
    pending: int
    admitted: int


class StepOutcome(Schema):
    at: str
    workloads: dict[str, WorkloadOutcome] = Field(description="by namespace/name")
    preempted: list[str] = Field(description="evicted during the step, in eviction order")
    cluster_queues: dict[str, QueueOutcome]


class SimulationOut(Schema):
    name: str | None
    steps: list[StepOutcome]
