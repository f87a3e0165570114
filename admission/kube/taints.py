"""Berth's node health reaches the cluster: a Node Berth takes out of the pool (Cordoned,
Repairing, Validating) carries the taint ``berth.dev/unhealthy=<state>:NoSchedule``, so
kube-scheduler places no other pods there either; the taint goes when the node returns.

The leader follows the ledger's health states after each cycle (``NodeTainter.follow``,
called by the loop through ``JobActuator.follow_nodes``): the taint wanted for a node is
worked out from its state alone (``wanted_taint``, PURE), compared with the taints last
watched on it, and written only where they differ — one GET and one merge patch that
carries the read resourceVersion, so a concurrent change of the Node's taints is a
Conflict retried next cycle, never lost. Every write is an audit row (kind Node, by
``kubernetes:node-tainter``), as every health move is. Nodes Berth never took out keep
their taints untouched; the other taints of a tainted Node are kept.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from admission.kube.client import NODES, Kube, Obj
from admission.kube.failure_log import FailureLog
from admission.kube.jobs import SessionScope
from quota.core.errors import BerthError, NotFound
from quota.core.model import Node, NodeHealth
from quota.core.node_health import OUT_OF_POOL
from quota.ledger.audit import AuditEntry, write_audit

log = logging.getLogger(__name__)

TAINT_KEY = "berth.dev/unhealthy"
ACTOR = "kubernetes:node-tainter"


def wanted_taint(health: NodeHealth) -> str | None:
    """The value of Berth's taint for a node in ``health``; ``None``: no taint."""
    return str(health) if health in OUT_OF_POOL else None


def watched_taint(node: Node) -> str | None:
    """The value of Berth's taint among the taints last watched on ``node``."""
    for taint in node.taints:
        if taint.key == TAINT_KEY and taint.effect == "NoSchedule":
            return taint.value
    return None


def taints_patch(node: Obj, value: str | None) -> Obj | None:
    """A merge patch giving the Node object Berth's taint with ``value`` (``None``: none),
    its other taints kept; ``None`` when it already has exactly that."""
    taints: list[dict[str, Any]] = list((node.get("spec") or {}).get("taints") or [])
    others = [t for t in taints if t.get("key") != TAINT_KEY]
    wanted = others + (
        [{"key": TAINT_KEY, "value": value, "effect": "NoSchedule"}] if value is not None else []
    )
    if wanted == taints:
        return None
    version = (node.get("metadata") or {}).get("resourceVersion")
    return {"metadata": {"resourceVersion": version}, "spec": {"taints": wanted or None}}


class NodeTainter:
    """Makes Berth's taint on every watched Node follow the node's health state."""

    def __init__(
        self,
        kube: Kube,
        sessions: SessionScope,
        *,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kube = kube
        self.sessions = sessions
        self.failures = FailureLog(log, monotonic=monotonic)
        # What this leader last wrote per node, until the watch shows it: not written twice.
        self._written: dict[str, str | None] = {}

    def reset(self) -> None:
        """Forget what was written (a new leadership checks every node again)."""
        self._written.clear()

    async def follow(self, nodes: Mapping[str, Node]) -> None:
        """Write the taints that differ from what the health states want."""
        for name, node in nodes.items():
            wanted = wanted_taint(node.health)
            seen = watched_taint(node)
            if wanted == seen:
                self._written.pop(name, None)
                continue
            if name in self._written and self._written[name] == wanted:
                continue  # written; the watch has not brought it back yet
            await self._write(name, wanted)

    async def _write(self, name: str, wanted: str | None) -> None:
        try:
            current = await self.kube.get(NODES, None, name)
            patch = taints_patch(current, wanted)
            if patch is not None:
                await self.kube.patch(NODES, None, name, patch)
        except NotFound:
            return
        except BerthError as exc:
            self.failures.failed(f"taint the Node {name}", exc)
            return
        self._written[name] = wanted
        if patch is None:
            return
        before = _value(current)
        await asyncio.to_thread(self._audit, name, before, wanted)
        if wanted is not None:
            log.info("Node %s: tainted %s=%s:NoSchedule", name, TAINT_KEY, wanted)
        else:
            log.info("Node %s: taint %s removed", name, TAINT_KEY)

    def _audit(self, name: str, before: str | None, after: str | None) -> None:
        def spelled(value: str | None) -> str | None:
            return None if value is None else f"{TAINT_KEY}={value}:NoSchedule"

        entry = AuditEntry(
            "update", "Node", None, name, {"taint": spelled(before)}, {"taint": spelled(after)}
        )
        with self.sessions() as session:
            write_audit(session, ACTOR, [entry])


def _value(node: Obj) -> str | None:
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("key") == TAINT_KEY:
            return str(taint.get("value") or "")
    return None
