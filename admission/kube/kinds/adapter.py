"""What Berth needs to know about one workload kind to queue it (PURE, dicts only)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from admission.kube.client import ResourceRef
from quota.core.model import Toleration
from quota.manifests.frameworks import Shape, shapes_of

# The end of a workload as its controller reports it: "Complete", "Failed" or None (running).
Finished = Callable[[Mapping[str, Any]], str | None]
COMPLETE = "Complete"
FAILED = "Failed"


@dataclass(frozen=True, slots=True)
class Adapter:
    """One kind: its API resource, where it is suspended, how its end is read.

    ``clears_start_time``: the API server lets the pod templates change only while the
    object is suspended *and* ``status.startTime`` is unset (batch/v1 Job), so eviction
    clears it through the status subresource before restoring the templates.
    ``gate``: held back by this scheduling gate instead of a suspend field (plain Pods:
    ``kinds.pod``); a gate can only be removed, never put back.
    ``pod_labels``: the labels its controller puts on every pod it makes, naming it (the
    first present wins; its controller ownerReference is asked first). ``children``: the
    objects its controller makes whose pods name them instead (a RayJob's RayCluster).
    """

    ref: ResourceRef
    suspend_path: tuple[str, ...]
    finished: Finished
    clears_start_time: bool = False
    gate: str | None = None
    pod_labels: tuple[str, ...] = ()
    children: Callable[[Mapping[str, Any]], tuple[str, ...]] = lambda obj: ()

    @property
    def kind(self) -> str:
        return self.ref.kind

    @property
    def api_version(self) -> str:
        return self.ref.api_version

    def pod_sets(self, obj: Mapping[str, Any]) -> list[Shape]:
        """The pod sets of ``obj`` with the paths of their templates."""
        return shapes_of({**obj, "apiVersion": self.api_version, "kind": self.kind})

    def owner_of_pod(self, pod: Mapping[str, Any]) -> str | None:
        """The name of the object of this kind that ``pod`` says it belongs to, or None."""
        meta = pod.get("metadata") or {}
        for owner in meta.get("ownerReferences") or []:
            if (owner.get("controller") and owner.get("kind") == self.kind
                    and owner.get("apiVersion") == self.api_version):  # fmt: skip
                return str(owner.get("name") or "") or None
        labels = meta.get("labels") or {}
        for label in self.pod_labels:
            if labels.get(label):
                return str(labels[label])
        return None

    def is_suspended(self, obj: Mapping[str, Any]) -> bool:
        if self.gate is not None:
            gates = (obj.get("spec") or {}).get("schedulingGates") or []
            return any(g.get("name") == self.gate for g in gates)
        node: Any = obj
        for key in self.suspend_path:
            node = node.get(key) if isinstance(node, Mapping) else None
        return bool(node)

    def suspend_patch(self, value: bool) -> dict[str, Any]:
        """A merge patch setting the suspend field to ``value``."""
        if self.gate is not None:
            raise TypeError(f"a {self.kind} is not suspended by a field")
        patch: dict[str, Any] = {self.suspend_path[-1]: value}
        for key in reversed(self.suspend_path[:-1]):
            patch = {key: patch}
        return patch


def conditions_finished(success: str, failure: str) -> Finished:
    """The end read from ``status.conditions``: ``success`` or ``failure`` set True."""

    def finished(obj: Mapping[str, Any]) -> str | None:
        for condition in (obj.get("status") or {}).get("conditions") or []:
            if condition.get("status") != "True":
                continue
            if condition.get("type") == success:
                return COMPLETE
            if condition.get("type") == failure:
                return FAILED
        return None

    return finished


def toleration_json(toleration: Toleration) -> dict[str, str]:
    spelled = {
        "key": toleration.key,
        "operator": toleration.operator,
        "value": toleration.value,
        "effect": toleration.effect,
    }
    return {key: value for key, value in spelled.items() if value}
