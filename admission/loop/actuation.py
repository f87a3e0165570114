"""The loop's edge to the world: what to do to a Job after the ledger has committed (PURE).

The loop calls ``Actuator.actuate`` only with decisions already committed, and again after
a restart for everything still in force, so every actuation must be idempotent: admitting
an admitted Job or stating a reason already stated changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, runtime_checkable

from admission.engine.types import Reason, Snapshot
from quota.core.model import Node, ResourceFlavor
from quota.core.workload import Admission

ADMIT = "admit"
EVICT = "evict"
REASON = "reason"
CHECKPOINT = "checkpoint"  # a victim with a grace: ask it to checkpoint, keep it running


@dataclass(frozen=True, slots=True)
class Actuation:
    key: str  # "namespace/name"
    kind: str  # "Job" | "Workload"
    action: str  # "admit" | "evict" | "reason" | "checkpoint"
    admission: Admission | None = None  # for admit
    flavors: Mapping[str, ResourceFlavor] = field(default_factory=dict)  # named by admission
    reason: Reason | None = None  # for evict/reason: eviction or new primary wait reason
    # for checkpoint: when it was asked and by when it must have checkpointed
    requested_at: datetime | None = None
    deadline: datetime | None = None


class Actuator(Protocol):
    async def actuate(self, actions: Sequence[Actuation]) -> None:
        """Carry out committed decisions; must be idempotent."""


@runtime_checkable
class Reconciler(Protocol):
    """Optional: an actuator that wants the whole ledger view once leadership starts."""

    async def reconcile(self, ledger_view: Snapshot) -> None: ...


@runtime_checkable
class NodeFollower(Protocol):
    """Optional: an actuator that carries the nodes' health states out to the world (in
    Kubernetes, a taint on each Node out of the pool), after each cycle's actuation."""

    async def follow_nodes(self, nodes: Mapping[str, Node]) -> None: ...


class StandaloneActuator:
    """Without Kubernetes there is nothing to patch: the ledger is the whole truth."""

    async def actuate(self, actions: Sequence[Actuation]) -> None:
        return None
