"""What the real API server allows on a Pod update, where Berth depends on it: a pod's
spec is immutable but for its scheduling gates, which may only be removed, and (while it
still has a gate) its nodeSelector and tolerations, which may only gain entries
(Kubernetes' mutable scheduling directives for gated pods); otherwise 422."""

from __future__ import annotations

from typing import Any

from builders.fakeapi.errors import ApiError

Obj = dict[str, Any]
_GATED_MUTABLE = ("nodeSelector", "tolerations")


def checked_update(old: Obj, new: Obj, *, sub: str) -> Obj:
    if sub == "status":
        return new
    before, after = old.get("spec") or {}, new.get("spec") or {}
    name = old["metadata"]["name"]
    fixed = ("schedulingGates", *_GATED_MUTABLE, "nodeName")
    if {k: v for k, v in before.items() if k not in fixed} != {
        k: v for k, v in after.items() if k not in fixed
    } or (before.get("nodeName") and before.get("nodeName") != after.get("nodeName")):
        raise _invalid(name, "spec: Forbidden: pod updates may not change fields other than "
                       "schedulingGates, and nodeSelector and tolerations of a gated pod")  # fmt: skip
    old_gates, new_gates = before.get("schedulingGates") or [], after.get("schedulingGates") or []
    if any(gate not in old_gates for gate in new_gates):
        raise _invalid(name, "spec.schedulingGates: Forbidden: only deletion is allowed")
    selector_old, selector_new = before.get("nodeSelector") or {}, after.get("nodeSelector") or {}
    tolerations_old, tolerations_new = before.get("tolerations") or [], after.get("tolerations") or []
    if selector_old == selector_new and tolerations_old == tolerations_new:
        return new
    if not old_gates:
        raise _invalid(name, "spec: Forbidden: nodeSelector and tolerations of a pod that is "
                       "not gated are immutable")  # fmt: skip
    if any(selector_new.get(k) != v for k, v in selector_old.items()):
        raise _invalid(name, "spec.nodeSelector: Invalid value: only additions are allowed")
    if any(t not in tolerations_new for t in tolerations_old):
        raise _invalid(name, "spec.tolerations: Forbidden: existing toleration can not be "
                       "modified except tolerationSeconds")  # fmt: skip
    return new


def _invalid(name: str, why: str) -> ApiError:
    return ApiError(422, "Invalid", f'Pod "{name}" is invalid: {why}')
