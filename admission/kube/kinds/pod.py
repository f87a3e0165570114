"""v1 Pods and pod groups: held back by the scheduling gate ``kueue.x-k8s.io/admission``
(added by the webhook at creation), admitted by removing it with the flavor's nodeSelector
and tolerations added (what Kubernetes allows on a gated Pod), evicted by deleting the
group's pods. A group is named by the ``kueue.x-k8s.io/pod-group-name`` label and sized by
the ``kueue.x-k8s.io/pod-group-total-count`` annotation; a labelled Pod alone is a group
of one named after itself (PURE)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from admission.kube.client import PODS
from admission.kube.kinds.adapter import COMPLETE, FAILED, Adapter, toleration_json
from quota.core.model import ResourceFlavor
from quota.manifests.frameworks import POD_GROUP_LABEL, POD_GROUP_TOTAL_ANNOTATION

ADMISSION_GATE = "kueue.x-k8s.io/admission"
_DONE = ("Succeeded", "Failed")


def group_finished(group: Mapping[str, Any]) -> str | None:
    """A group object's end (``pod_groups.group_object`` sums its pods' phases up)."""
    phases: list[str] = list((group.get("status") or {}).get("phases") or [])
    total = int((group.get("status") or {}).get("total") or 1)
    if len(phases) < total or any(phase not in _DONE for phase in phases):
        return None
    return FAILED if "Failed" in phases else COMPLETE


POD = Adapter(PODS, suspend_path=(), finished=group_finished, gate=ADMISSION_GATE,
              pod_labels=(POD_GROUP_LABEL,))  # fmt: skip


def group_name(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return str((meta.get("labels") or {}).get(POD_GROUP_LABEL) or meta.get("name") or "")


def group_total(pod: Mapping[str, Any]) -> int:
    raw = ((pod.get("metadata") or {}).get("annotations") or {}).get(POD_GROUP_TOTAL_ANNOTATION)
    try:
        return max(int(str(raw)), 1) if raw is not None else 1
    except ValueError:
        return 1  # the workload parser names the field


def admit_pod_patch(
    pod: Mapping[str, Any], flavors: Iterable[ResourceFlavor]
) -> dict[str, Any] | None:
    """Ungate a Pod, adding its flavors' nodeLabels and tolerations; ``None`` if ungated."""
    spec = pod.get("spec") or {}
    if not POD.is_suspended(pod):
        return None
    selector = dict(spec.get("nodeSelector") or {})
    tolerations = list(spec.get("tolerations") or [])
    for flavor in flavors:
        selector.update(flavor.node_labels)
        for toleration in flavor.tolerations:
            wanted = toleration_json(toleration)
            if wanted not in tolerations:
                tolerations.append(wanted)
    gates = [g for g in spec.get("schedulingGates") or [] if g.get("name") != ADMISSION_GATE]
    return {"spec": {"nodeSelector": selector or None, "tolerations": tolerations or None,
                     "schedulingGates": gates or None}}  # fmt: skip


def gate_operations(pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The webhook's JSON patch holding a new Pod back until admission."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return []
    gates = spec.get("schedulingGates")
    gate = {"name": ADMISSION_GATE}
    if not isinstance(gates, list):
        return [{"op": "add", "path": "/spec/schedulingGates", "value": [gate]}]
    if gate in gates:
        return []
    return [{"op": "add", "path": "/spec/schedulingGates/-", "value": gate}]
