"""Berth's custom resources and the cluster's Nodes, mirrored into the ledger.

A custom resource is parsed exactly as ``berth apply`` parses a manifest; an invalid one
leaves the ledger untouched and says which field is wrong, in an Event and in its
``Accepted`` status condition. Nodes feed the inventory (capacity, allocatable, taints,
unschedulable, conditions); their health state is Berth's (``admission.health``): a Node's
devices and Ready condition move it automatically, its ``berth.dev/health`` annotation is
ignored.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from admission.intake.nodes import observe_node
from admission.kube import events
from admission.kube.client import Kube, Obj, ResourceRef, berth_resource
from admission.kube.informer import Handler
from admission.kube.jobs import SessionScope
from quota.core.errors import InvalidInput
from quota.core.model import Node
from quota.core.node_health import HealthThresholds
from quota.ledger.apply import apply_objects
from quota.ledger.repository import Ledger
from quota.manifests.documents import BERTH_API_VERSION, parse_objects

log = logging.getLogger(__name__)

ACTOR = "kubernetes:mirror"
SOURCE = "kubernetes"
ACCEPTED = "Accepted"

BERTH_KINDS: dict[str, ResourceRef] = {
    "ResourceFlavor": berth_resource("ResourceFlavor", "resourceflavors"),
    "ClusterQueue": berth_resource("ClusterQueue", "clusterqueues"),
    "LocalQueue": berth_resource("LocalQueue", "localqueues", namespaced=True),
    "Cohort": berth_resource("Cohort", "cohorts"),
    "WorkloadPriorityClass": berth_resource("WorkloadPriorityClass", "workloadpriorityclasses"),
    "Topology": berth_resource("Topology", "topologies"),
    "AdmissionCheck": berth_resource("AdmissionCheck", "admissionchecks"),
    "ProvisioningRequestConfig": berth_resource("ProvisioningRequestConfig",
                                                "provisioningrequestconfigs"),
}
# Top-level fields besides metadata that a kind's manifest carries.
_BODY_FIELDS = {"WorkloadPriorityClass": ("value", "description")}


def manifest_document(obj: Obj) -> Obj:
    """The object as a manifest: what the user wrote, without what the server added (PURE)."""
    meta: dict[str, Any] = obj.get("metadata") or {}
    kept_meta = {
        key: meta[key] for key in ("name", "namespace", "labels", "annotations") if meta.get(key)
    }
    annotations = {
        key: value
        for key, value in (meta.get("annotations") or {}).items()
        if not key.startswith("kubectl.kubernetes.io/")
    }
    if annotations:
        kept_meta["annotations"] = annotations
    kind = str(obj.get("kind") or "")
    doc: Obj = {"apiVersion": obj.get("apiVersion") or BERTH_API_VERSION, "kind": kind}
    doc["metadata"] = kept_meta
    for key in _BODY_FIELDS.get(kind, ("spec",)):
        if key in obj:
            doc[key] = obj[key]
    return doc


def node_document(node: Obj) -> Obj:
    """A v1 Node reduced to what the inventory reads (PURE)."""
    meta: dict[str, Any] = node.get("metadata") or {}
    spec: dict[str, Any] = node.get("spec") or {}
    status: dict[str, Any] = node.get("status") or {}
    taints = [
        {key: taint[key] for key in ("key", "value", "effect") if taint.get(key)}
        for taint in spec.get("taints") or []
    ]
    conditions = [
        {key: str(c[key]) for key in ("type", "status", "reason", "message") if c.get(key)}
        for c in status.get("conditions") or []
    ]
    doc_status: Obj = {"capacity": status.get("capacity") or {}, "conditions": conditions}
    if status.get("allocatable"):
        doc_status["allocatable"] = status["allocatable"]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": meta.get("name"),
            "labels": meta.get("labels") or {},
            "annotations": meta.get("annotations") or {},
        },
        "spec": {"taints": taints, "unschedulable": bool(spec.get("unschedulable"))},
        "status": doc_status,
    }


class Mirror:
    """Informer handlers writing custom resources and Nodes into the ledger."""

    def __init__(
        self,
        kube: Kube,
        sessions: SessionScope,
        notify: Callable[[], None],
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        health: HealthThresholds | None = None,
    ) -> None:
        self.kube = kube
        self.sessions = sessions
        self.notify = notify
        self.clock = clock
        self.health = health if health is not None else HealthThresholds()
        # What exists in the cluster, by kind: the status writer patches only these.
        self.present: dict[str, set[tuple[str, str]]] = {kind: set() for kind in BERTH_KINDS}

    def handler(self, ref: ResourceRef) -> Handler:
        async def handle(kind: str, obj: Obj) -> None:
            await self.handle(ref, kind, obj)

        return handle

    async def handle(self, ref: ResourceRef, kind: str, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace") or "", meta.get("name") or "")
        if kind == "DELETED":
            self.present.setdefault(ref.kind, set()).discard(key)
            if await asyncio.to_thread(self._delete, ref.kind, key):
                self.notify()
            return
        self.present.setdefault(ref.kind, set()).add(key)
        try:
            changed = await asyncio.to_thread(self._apply, manifest_document(obj))
        except InvalidInput as exc:
            first = exc.problems[0] if exc.problems else None
            where = f"{first.field}: " if first is not None and first.field else ""
            why = first.message if first is not None else exc.message
            message = f"not mirrored into the ledger: {where}{why}"
            log.warning("%s %s: %s", ref.kind, "/".join(p for p in key if p), message)
            await events.record(
                self.kube, obj, "InvalidSpec", message, now=self.clock(), warning=True
            )
            await self._accepted(ref, obj, "False", "InvalidSpec", message)
            return
        if changed:
            self.notify()
        await self._accepted(ref, obj, "True", "Mirrored", "the spec is in Berth's ledger")

    def _apply(self, doc: Obj) -> bool:
        objects = parse_objects([(SOURCE, 0, doc)])
        with self.sessions() as session:
            result = apply_objects(Ledger(session), objects, actor=ACTOR)
        return any(change.action != "unchanged" for change in result.changes)

    def _delete(self, kind: str, key: tuple[str, str]) -> bool:
        namespace, name = key
        with self.sessions() as session:
            return Ledger(session).delete(kind, name, namespace or None, actor=ACTOR)

    async def _accepted(
        self, ref: ResourceRef, obj: Obj, status: str, reason: str, message: str
    ) -> None:
        meta = obj.get("metadata") or {}
        conditions = [c for c in (obj.get("status") or {}).get("conditions") or []]
        current = next((c for c in conditions if c.get("type") == ACCEPTED), None)
        generation = meta.get("generation")
        if current is not None and (
            current.get("status"), current.get("reason"), current.get("message"),
            current.get("observedGeneration"),
        ) == (status, reason, message, generation):  # fmt: skip
            return
        condition = {
            "type": ACCEPTED,
            "status": status,
            "reason": reason,
            "message": message,
            "observedGeneration": generation,
            "lastTransitionTime": self.clock().strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        others = [c for c in conditions if c.get("type") != ACCEPTED]
        patch = {"status": {"conditions": [*others, condition]}}
        await self.kube.patch(ref, meta.get("namespace"), meta["name"], patch, status=True)

    # -- Nodes -----------------------------------------------------------------------------

    async def handle_node(self, kind: str, node: Obj) -> None:
        name = (node.get("metadata") or {}).get("name") or ""
        if kind == "DELETED":
            changed = await asyncio.to_thread(self._delete, "Node", ("", name))
        else:
            try:
                changed = await asyncio.to_thread(self._apply_node, node_document(node))
            except InvalidInput as exc:
                log.warning("Node %s not mirrored into the inventory: %s", name, exc.message)
                return
        if changed:
            self.notify()

    def _apply_node(self, doc: Obj) -> bool:
        [parsed] = parse_objects([(SOURCE, 0, doc)])
        assert isinstance(parsed.obj, Node)
        with self.sessions() as session:
            changed, move = observe_node(session, parsed.obj, self.health, actor=ACTOR)
        if move is not None:
            log.warning("Node %s is now %s: %s", parsed.obj.name, move.state, move.why)
        return changed
