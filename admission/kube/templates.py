"""What Berth changes on a Job, as JSON merge patches computed from the Job alone (PURE).

Admission steers the pod template to the admitted flavors (their nodeLabels as
nodeSelector, their tolerations) after saving the template's own scheduling fields in an
annotation; eviction puts them back, in ``EVICT_STEPS`` (suspend, clear startTime,
restore). Every function returns ``None`` when the Job already looks as wanted, which is
what makes re-actuation after a restart a no-op.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, NamedTuple

from quota.core.checkpoints import (
    CHECKPOINT_DEADLINE,
    CHECKPOINT_LOCATION,
    CHECKPOINT_REQUESTED,
    CHECKPOINTED_AT,
    USER_ANNOTATIONS,
    format_time,
)
from quota.core.model import ResourceFlavor, Toleration
from quota.core.workload import Admission

Obj = dict[str, Any]

ORIGINAL_TEMPLATE = "berth.dev/original-template"
WAIT_REASON = "berth.dev/wait-reason"
WAIT_MESSAGE = "berth.dev/wait-message"
JOB_UID = "berth.dev/job-uid"
# The scheduling fields of the pod template that admission may change.
_STEERED = ("nodeSelector", "tolerations")
# Steered too when the admission confines the pods to a topology domain; saved (even when
# absent, as null) only then, so that Jobs admitted without one keep their own affinity.
_AFFINITY = "affinity"


def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    found: dict[str, str] = (obj.get("metadata") or {}).get("annotations") or {}
    return found


def is_suspended(job: Mapping[str, Any]) -> bool:
    return bool((job.get("spec") or {}).get("suspend"))


def finished(job: Mapping[str, Any]) -> str | None:
    """``"Complete"`` or ``"Failed"`` once the Job controller says so, else ``None``."""
    for condition in (job.get("status") or {}).get("conditions") or []:
        if condition.get("type") in ("Complete", "Failed") and condition.get("status") == "True":
            return str(condition["type"])
    return None


def admitted_flavors(
    admission: Admission | None, flavors: Mapping[str, ResourceFlavor]
) -> list[ResourceFlavor]:
    """The flavors an admission uses, in first-use order; unknown names left out."""
    names: list[str] = []
    for pod_set in admission.pod_sets if admission else ():
        names.extend(n for n in pod_set.flavors.values() if n not in names)
    return [flavors[name] for name in names if name in flavors]


def original_template(job: Mapping[str, Any]) -> Obj:
    """The template's own scheduling fields: saved in the annotation, else as they are now."""
    saved = annotations_of(job).get(ORIGINAL_TEMPLATE)
    if saved:
        try:
            parsed = json.loads(saved)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
    pod = _pod_spec(job)
    return {key: pod[key] for key in _STEERED if pod.get(key)}


def admitted_domain(admission: Admission | None) -> tuple[str, str] | None:
    """``(level label, value)`` of the topology domain the admission placed the pods in."""
    for placement in (admission.placement or ()) if admission is not None else ():
        if placement.level is not None and placement.domain is not None:
            return placement.level, placement.domain
    return None


def domain_affinity(affinity: Mapping[str, Any] | None, level: str, domain: str) -> Obj:
    """``affinity`` with every required node-selector term also requiring ``level=domain``
    (terms are alternatives: each must keep the pods inside the domain)."""
    out: Obj = json.loads(json.dumps(dict(affinity or {})))
    node = out.setdefault("nodeAffinity", {})
    required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    wanted = {"key": level, "operator": "In", "values": [domain]}
    for term in terms:
        expressions = term.setdefault("matchExpressions", [])
        if wanted not in expressions:
            expressions.append(wanted)
    required["nodeSelectorTerms"] = terms
    return out


def admit_patch(
    job: Mapping[str, Any],
    flavors: Iterable[ResourceFlavor],
    domain: tuple[str, str] | None = None,
) -> Obj | None:
    """Steer the template to ``flavors`` (and the topology ``domain``, if any) and
    unsuspend; ``None`` if already done."""
    if not is_suspended(job) and ORIGINAL_TEMPLATE in annotations_of(job):
        return None
    original = original_template(job)
    if domain is not None and _AFFINITY not in original:
        original[_AFFINITY] = _pod_spec(job).get(_AFFINITY)
    selector = dict(original.get("nodeSelector") or {})
    tolerations = list(original.get("tolerations") or [])
    for flavor in flavors:
        selector.update(flavor.node_labels)
        for toleration in flavor.tolerations:
            wanted = toleration_json(toleration)
            if wanted not in tolerations:
                tolerations.append(wanted)
    steered: dict[str, Any] = {"nodeSelector": selector, "tolerations": tolerations}
    if domain is not None:
        steered[_AFFINITY] = domain_affinity(original.get(_AFFINITY), *domain)
    return {
        "metadata": {
            "annotations": {
                ORIGINAL_TEMPLATE: json.dumps(original, sort_keys=True),
                WAIT_REASON: None,
                WAIT_MESSAGE: None,
                # The request was for the previous run; the job's own checkpoint
                # annotations (time, location) stay so that it resumes from them.
                CHECKPOINT_REQUESTED: None,
                CHECKPOINT_DEADLINE: None,
            }
        },
        "spec": {"suspend": False, "template": {"spec": _set_fields(job, steered)}},
    }


class Step(NamedTuple):
    """One write of a multi-step change: ``patch`` computes it from the Job as it is now
    (``None``: already done), ``status`` sends it to the status subresource."""

    name: str
    patch: Callable[[Mapping[str, Any]], Obj | None]
    status: bool = False


def start_time_patch(job: Mapping[str, Any]) -> Obj | None:
    """Forget that a suspended Job ran (the API server then lets its template change)."""
    if not is_suspended(job) or not started_at(job):
        return None
    return {"status": {"startTime": None}}


def restore_patch(job: Mapping[str, Any]) -> Obj | None:
    """Give a suspended Job's template its own scheduling fields back; ``None`` if done."""
    if not is_suspended(job) or ORIGINAL_TEMPLATE not in annotations_of(job):
        return None
    original = original_template(job)
    restored = {key: original.get(key) for key in _steered(original)}
    return {
        "metadata": {"annotations": {ORIGINAL_TEMPLATE: None}},
        "spec": {"template": {"spec": _set_fields(job, restored)}},
    }


def started_at(job: Mapping[str, Any]) -> str | None:
    """``status.startTime``: set by the Job controller on every resume, never cleared by it."""
    found = (job.get("status") or {}).get("startTime")
    return str(found) if found else None


def checkpoint_patch(
    job: Mapping[str, Any], requested_at: datetime, deadline: datetime
) -> Obj | None:
    """Ask a running victim to checkpoint by ``deadline``; ``None`` if already asked."""
    wanted = {
        CHECKPOINT_REQUESTED: format_time(requested_at),
        CHECKPOINT_DEADLINE: format_time(deadline),
    }
    current = annotations_of(job)
    if all(current.get(key) == value for key, value in wanted.items()):
        return None
    return {"metadata": {"annotations": wanted}}


def reported_checkpoint(job: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The checkpoint the job reports on itself: (``checkpointed-at``, location) as set."""
    notes = annotations_of(job)
    return notes.get(CHECKPOINTED_AT), notes.get(CHECKPOINT_LOCATION)


def suspend_patch(job: Mapping[str, Any]) -> Obj | None:
    return None if is_suspended(job) else {"spec": {"suspend": True}}


# Eviction as Kueue's Job integration does it. Kubernetes lets a Job's pod-template
# scheduling directives change only while it is suspended and status.startTime is unset, so
# one patch that suspends and restores a running Job is refused (422, field is immutable).
# Each step is computed from the Job the previous one left, so a replay after a crash
# between two of them carries on where it stopped.
EVICT_STEPS = (
    Step("suspend", suspend_patch),
    Step("clear startTime", start_time_patch, status=True),
    Step("restore the template", restore_patch),
)
# Admission steers the template in the patch that unsuspends: a Job evicted before a crash
# may still carry its old startTime, which must go first.
ADMIT_STEPS = (Step("clear startTime", start_time_patch, status=True),)


def reason_patch(job: Mapping[str, Any], code: str, message: str) -> Obj | None:
    """Show the wait reason where kubectl users look; ``None`` if already shown."""
    current = annotations_of(job)
    if current.get(WAIT_REASON) == code and current.get(WAIT_MESSAGE) == message:
        return None
    return {"metadata": {"annotations": {WAIT_REASON: code, WAIT_MESSAGE: message}}}


def toleration_json(toleration: Toleration) -> dict[str, str]:
    spelled = {
        "key": toleration.key,
        "operator": toleration.operator,
        "value": toleration.value,
        "effect": toleration.effect,
    }
    return {key: value for key, value in spelled.items() if value}


def workload_document(job: Mapping[str, Any]) -> Obj:
    """The Job as Berth's workload parser reads it: its own template, its uid remembered.

    A Job Berth admitted before a restart carries the flavor's steering; the workload must
    ask for what the user asked for, so the saved fields are put back first.
    """
    meta = job.get("metadata") or {}
    spec = json.loads(json.dumps(job.get("spec") or {}))
    pod = spec.setdefault("template", {}).setdefault("spec", {})
    if ORIGINAL_TEMPLATE in annotations_of(job):
        original = original_template(job)
        for key in _steered(original):
            pod.pop(key, None)
            if original.get(key):
                pod[key] = original[key]
    # Berth's own notes on the Job are dropped; what the user sets for Berth is kept.
    kept = {
        k: v
        for k, v in annotations_of(job).items()
        if not k.startswith("berth.dev/") or k in USER_ANNOTATIONS
    }
    if meta.get("uid"):
        kept[JOB_UID] = str(meta["uid"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace") or "default",
            "labels": dict(meta.get("labels") or {}),
            "annotations": kept,
        },
        "spec": spec,
    }


def _pod_spec(job: Mapping[str, Any]) -> dict[str, Any]:
    pod: dict[str, Any] = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
    return pod


def _steered(original: Mapping[str, Any]) -> tuple[str, ...]:
    return (*_STEERED, _AFFINITY) if _AFFINITY in original else _STEERED


def _map_patch(current: Mapping[str, Any], target: Mapping[str, Any]) -> Obj:
    """A merge patch turning map ``current`` into ``target`` (keys it lacks nulled)."""
    patch: Obj = {key: None for key in current if key not in target}
    for key, value in target.items():
        now = current.get(key)
        if isinstance(value, dict) and isinstance(now, dict):
            patch[key] = _map_patch(now, value)
        else:
            patch[key] = value
    return patch


def _set_fields(job: Mapping[str, Any], wanted: Mapping[str, Any]) -> Obj:
    """A merge patch turning the pod spec's steered fields into ``wanted``."""
    pod = _pod_spec(job)
    patch: Obj = {}
    for key, value in wanted.items():
        if key == "nodeSelector":
            current = pod.get(key) or {}
            target = dict(value or {})
            # Merge patches merge maps: label keys admission added must be nulled explicitly.
            removed = {label: None for label in current if label not in target}
            patch[key] = {**removed, **target} if target else None
        elif key == _AFFINITY:
            current = pod.get(key) or {}
            patch[key] = _map_patch(current, value) if value else None
        else:
            patch[key] = list(value) if value else None
    return patch
