"""What Berth changes on a workload object, as JSON merge patches computed from the object
alone (PURE). The object's kind is found in ``kinds.registry`` (a dict without apiVersion
and kind is a batch/v1 Job); every pod template its adapter lists is steered.

Admission steers each pod template to its pod set's admitted flavors (their nodeLabels as
nodeSelector, their tolerations) after saving the templates' own scheduling fields in an
annotation; eviction puts them back, in ``EVICT_STEPS`` (suspend, clear startTime where
the kind guards it, restore). Every function returns ``None`` when the object already
looks as wanted, which is what makes re-actuation after a restart a no-op.

The annotation holds ``{pod set: fields}``; a Job's, with its one pod set, holds the fields
themselves (the form Jobs admitted before there were other kinds still carry). Lists on
the way to a template (a JobSet's replicatedJobs, a RayCluster's workerGroupSpecs) are
sent whole, as merge patches replace lists.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from admission.kube.kinds.adapter import Adapter, toleration_json
from admission.kube.kinds.job import JOB
from admission.kube.kinds.registry import adapter_of
from quota.core.checkpoints import (
    CHECKPOINT_DEADLINE,
    CHECKPOINT_LOCATION,
    CHECKPOINT_REQUESTED,
    CHECKPOINTED_AT,
    USER_ANNOTATIONS,
    format_time,
)
from quota.core.model import ResourceFlavor
from quota.core.workload import Admission
from quota.manifests.frameworks import Path

Obj = dict[str, Any]
Domain = tuple[str, str]

ORIGINAL_TEMPLATE = "berth.dev/original-template"
WAIT_REASON = "berth.dev/wait-reason"
WAIT_MESSAGE = "berth.dev/wait-message"
JOB_UID = "berth.dev/job-uid"
# The scheduling fields of the pod template that admission may change.
_STEERED = ("nodeSelector", "tolerations")
# Steered too when the admission confines the pods to a topology domain; saved (even when
# absent, as null) only then, so that Jobs admitted without one keep their own affinity.
_AFFINITY = "affinity"


def adapter(obj: Mapping[str, Any]) -> Adapter:
    """The object's kind adapter; ``ValueError`` for a kind Berth does not queue."""
    found = adapter_of(obj)
    if found is None:
        raise ValueError(f"{obj.get('apiVersion')} {obj.get('kind')} is not a workload kind")
    return found


def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    found: dict[str, str] = (obj.get("metadata") or {}).get("annotations") or {}
    return found


def is_suspended(obj: Mapping[str, Any]) -> bool:
    return adapter(obj).is_suspended(obj)


def finished(obj: Mapping[str, Any]) -> str | None:
    """``"Complete"`` or ``"Failed"`` once the kind's controller says so, else ``None``."""
    return adapter(obj).finished(obj)


def admitted_flavors(
    admission: Admission | None, flavors: Mapping[str, ResourceFlavor]
) -> list[ResourceFlavor]:
    """The flavors an admission uses, in first-use order; unknown names left out."""
    names: list[str] = []
    for pod_set in admission.pod_sets if admission else ():
        names.extend(n for n in pod_set.flavors.values() if n not in names)
    return [flavors[name] for name in names if name in flavors]


class Steer(NamedTuple):
    """What admission gives one pod set: its flavors, its topology domain, its pod count."""

    flavors: Sequence[ResourceFlavor]
    domain: Domain | None = None
    pods: int | None = None


def pod_set_steering(
    admission: Admission | None, flavors: Mapping[str, ResourceFlavor]
) -> dict[str, Steer]:
    """Per admitted pod set: its flavors (first-use order), topology domain and count."""
    if admission is None:
        return {}
    domains: dict[str, Domain] = {}
    for placement in admission.placement or ():
        if placement.level is not None and placement.domain is not None:
            domains[placement.name] = (placement.level, placement.domain)
    out: dict[str, Steer] = {}
    for pod_set in admission.pod_sets:
        names = list(dict.fromkeys(pod_set.flavors.values()))
        chosen = [flavors[n] for n in names if n in flavors]
        out[pod_set.name] = Steer(chosen, domains.get(pod_set.name), pod_set.count)
    return out


def original_templates(obj: Mapping[str, Any]) -> dict[str, Obj]:
    """Each template's own scheduling fields: saved in the annotation, else as they are."""
    saved = annotations_of(obj).get(ORIGINAL_TEMPLATE)
    parsed: Any = None
    if saved:
        try:
            parsed = json.loads(saved)
        except ValueError:
            parsed = None
    if isinstance(parsed, dict):
        if adapter(obj) is JOB:
            return {"main": parsed}
        return {str(k): v for k, v in parsed.items() if isinstance(v, dict)}
    out: dict[str, Obj] = {}
    for shape in adapter(obj).pod_sets(obj):
        pod = _pod_spec(obj, shape.path)
        out[shape.name] = {key: pod[key] for key in _STEERED if pod.get(key)}
    return out


def admitted_domain(admission: Admission | None) -> Domain | None:
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


Steering = Mapping[str, Steer]


def admit_patch(
    obj: Mapping[str, Any],
    flavors: Iterable[ResourceFlavor],
    domain: Domain | None = None,
    *,
    per_pod_set: Steering | None = None,
) -> Obj | None:
    """Steer every pod template to its flavors (and topology domain, if any) and resume;
    ``None`` if already done. ``per_pod_set`` (``pod_set_steering``) wins over ``flavors``
    and ``domain`` for the pod sets it names; a pod set admitted with fewer pods than it
    asked for (partial admission) runs that many where its kind has a count to write."""
    kind = adapter(obj)
    if not kind.is_suspended(obj) and ORIGINAL_TEMPLATE in annotations_of(obj):
        return None
    everywhere = Steer(list(flavors), domain)
    originals = original_templates(obj)
    desired = copy.deepcopy(dict(obj))
    for shape in kind.pod_sets(obj):
        name, path = shape.name, shape.path
        chosen, where, count = (per_pod_set or {}).get(name, everywhere)
        original = dict(originals.get(name) or {})
        if count is not None and count < shape.pods and shape.count_path is not None:
            original.setdefault("count", _walk(obj, shape.count_path))
            _put(desired, shape.count_path, count)
        if where is not None and _AFFINITY not in original:
            original[_AFFINITY] = _pod_spec(obj, path).get(_AFFINITY)
        originals[name] = original
        selector = dict(original.get("nodeSelector") or {})
        tolerations = list(original.get("tolerations") or [])
        for flavor in chosen:
            selector.update(flavor.node_labels)
            for toleration in flavor.tolerations:
                wanted = toleration_json(toleration)
                if wanted not in tolerations:
                    tolerations.append(wanted)
        steered: Obj = {"nodeSelector": selector, "tolerations": tolerations}
        if where is not None:
            steered[_AFFINITY] = domain_affinity(original.get(_AFFINITY), *where)
        _set_fields(_pod_spec(desired, path, create=True), steered)
    _set_at(desired, kind.suspend_path, False)
    saved = originals.get("main", {}) if kind is JOB else originals
    return {
        "metadata": {
            "annotations": {
                ORIGINAL_TEMPLATE: json.dumps(saved, sort_keys=True),
                WAIT_REASON: None,
                WAIT_MESSAGE: None,
                # The request was for the previous run; the job's own checkpoint
                # annotations (time, location) stay so that it resumes from them.
                CHECKPOINT_REQUESTED: None,
                CHECKPOINT_DEADLINE: None,
            }
        },
        "spec": _diff(obj.get("spec") or {}, desired.get("spec") or {}),
    }


class Step(NamedTuple):
    """One write of a multi-step change: ``patch`` computes it from the object as it is
    now (``None``: already done), ``status`` sends it to the status subresource."""

    name: str
    patch: Callable[[Mapping[str, Any]], Obj | None]
    status: bool = False


def start_time_patch(obj: Mapping[str, Any]) -> Obj | None:
    """Forget that a suspended Job ran (the API server then lets its template change)."""
    if not adapter(obj).clears_start_time or not is_suspended(obj) or not started_at(obj):
        return None
    return {"status": {"startTime": None}}


def restore_patch(obj: Mapping[str, Any]) -> Obj | None:
    """Give a suspended object's templates their own scheduling fields back; ``None`` if
    done."""
    if not is_suspended(obj) or ORIGINAL_TEMPLATE not in annotations_of(obj):
        return None
    desired = copy.deepcopy(dict(obj))
    _restore(desired, original_templates(obj))
    return {
        "metadata": {"annotations": {ORIGINAL_TEMPLATE: None}},
        "spec": _diff(obj.get("spec") or {}, desired.get("spec") or {}),
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


def suspend_patch(obj: Mapping[str, Any]) -> Obj | None:
    kind = adapter(obj)
    return None if kind.is_suspended(obj) else kind.suspend_patch(True)


# Eviction as Kueue's integrations do it. Kubernetes lets a Job's pod-template scheduling
# directives change only while it is suspended and status.startTime is unset, so one patch
# that suspends and restores a running Job is refused (422, field is immutable); the other
# kinds skip the middle step. Each step is computed from the object the previous one left,
# so a replay after a crash between two of them carries on where it stopped.
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


def template_annotations_patch(obj: Mapping[str, Any], wanted: Mapping[str, str]) -> Obj | None:
    """Put ``wanted`` into the annotations of every pod template of ``obj`` (a
    provisioning check's booked capacity); ``None`` if all carry them already."""
    desired = copy.deepcopy(dict(obj))
    for shape in adapter(obj).pod_sets(obj):
        template = _walk(desired, shape.path)
        if isinstance(template, dict):
            meta = template.get("metadata") or {}
            template["metadata"] = meta
            meta["annotations"] = {**(meta.get("annotations") or {}), **wanted}
    patch = _diff(obj.get("spec") or {}, desired.get("spec") or {})
    return {"spec": patch} if patch else None


def workload_document(obj: Mapping[str, Any]) -> Obj:
    """The object as Berth's workload parser reads it: its own templates, its uid
    remembered.

    An object Berth admitted before a restart carries the flavors' steering; the workload
    must ask for what the user asked for, so the saved fields are put back first.
    """
    kind = adapter(obj)
    meta = obj.get("metadata") or {}
    copied: Obj = {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"annotations": annotations_of(obj)},  # a Job's minimum is one
        "spec": json.loads(json.dumps(obj.get("spec") or {})),
    }
    if kind is JOB:
        copied["spec"].setdefault("template", {}).setdefault("spec", {})
    if ORIGINAL_TEMPLATE in annotations_of(obj):
        _restore(copied, original_templates(obj))
    # Berth's own notes on the object are dropped; what the user sets for Berth is kept.
    kept = {
        k: v
        for k, v in annotations_of(obj).items()
        if not k.startswith("berth.dev/") or k in USER_ANNOTATIONS
    }
    if meta.get("uid"):
        kept[JOB_UID] = str(meta["uid"])
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {
            "name": meta.get("name"),
            "namespace": meta.get("namespace") or "default",
            "labels": dict(meta.get("labels") or {}),
            "annotations": kept,
        },
        "spec": copied["spec"],
    }


def _restore(obj: Obj, originals: Mapping[str, Obj]) -> None:
    """Put each template's saved scheduling fields (and a partial admission's count) back
    into ``obj`` (in place)."""
    for shape in adapter(obj).pod_sets(obj):
        original = originals.get(shape.name)
        if original is None:
            continue
        pod = _pod_spec(obj, shape.path, create=True)
        _set_fields(pod, {key: original.get(key) for key in _steered(original)})
        if "count" in original and shape.count_path is not None:
            _put(obj, shape.count_path, original["count"])


def _walk(obj: Any, path: Path) -> Any:
    node = obj
    for key in path:
        if isinstance(key, int):
            node = node[key] if isinstance(node, list) and key < len(node) else None
        else:
            node = node.get(key) if isinstance(node, Mapping) else None
    return node


def _pod_spec(obj: Any, path: Path, *, create: bool = False) -> dict[str, Any]:
    template = _walk(obj, path)
    if not isinstance(template, dict):
        return {}
    if create:
        spec: dict[str, Any] = template.setdefault("spec", {})
        return spec
    found: dict[str, Any] = template.get("spec") or {}
    return found


def _put(obj: Obj, path: Path, value: Any) -> None:
    """Set the value at ``path`` (which exists but for its last key); ``None`` removes it."""
    parent = _walk(obj, path[:-1])
    last = path[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        if value is None:
            parent.pop(last, None)
        else:
            parent[last] = value
    elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        parent[last] = value


def _set_at(obj: Obj, path: Sequence[str], value: Any) -> None:
    node = obj
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value


def _steered(original: Mapping[str, Any]) -> tuple[str, ...]:
    return (*_STEERED, _AFFINITY) if _AFFINITY in original else _STEERED


def _set_fields(pod: dict[str, Any], wanted: Mapping[str, Any]) -> None:
    """Give the pod spec's steered fields the ``wanted`` values (empty ones removed)."""
    for key, value in wanted.items():
        if value:
            pod[key] = copy.deepcopy(value)
        else:
            pod.pop(key, None)


def _diff(current: Mapping[str, Any], target: Mapping[str, Any]) -> Obj:
    """A merge patch turning map ``current`` into ``target``: keys it lacks nulled, maps
    merged key by key, anything else (lists included) sent whole where it differs."""
    patch: Obj = {key: None for key in current if key not in target}
    for key, value in target.items():
        now = current.get(key)
        if key in current and now == value:
            continue
        if isinstance(value, dict) and isinstance(now, dict):
            patch[key] = _diff(now, value)
        else:
            patch[key] = value
    return patch
