"""Every workload adapter, and how one is found (PURE)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.job import JOB
from admission.kube.kinds.jobset import JOBSET
from admission.kube.kinds.kubeflow import KUBEFLOW
from admission.kube.kinds.pod import POD
from admission.kube.kinds.ray import RAYCLUSTER, RAYJOB
from quota.core.workload import QUEUE_NAME_LABEL

# The kinds held back by a suspend field: watched one object = one workload.
SUSPENDED: tuple[Adapter, ...] = (JOB, JOBSET, *KUBEFLOW, RAYJOB, RAYCLUSTER)
# And plain Pods, gated, watched as groups (admission.kube.pod_groups).
ADAPTERS: tuple[Adapter, ...] = (*SUSPENDED, POD)
# Whose a pod is, the most specific claim first: a JobSet's pods carry their Job's name too,
# a RayJob's submitter pod its Job's.
POD_OWNERS: tuple[Adapter, ...] = (JOBSET, *KUBEFLOW, RAYCLUSTER, JOB, POD)
_BY_KIND = {adapter.kind: adapter for adapter in ADAPTERS}
_BY_TYPE = {(adapter.api_version, adapter.kind): adapter for adapter in ADAPTERS}
_BY_RESOURCE = {
    (adapter.ref.group, adapter.ref.version, adapter.ref.plural): adapter for adapter in ADAPTERS
}


def by_kind(kind: str) -> Adapter | None:
    """The adapter of a workload's recorded kind (kinds are unique across the table)."""
    return _BY_KIND.get(kind)


def adapter_of(obj: Mapping[str, Any]) -> Adapter | None:
    """The adapter of an object by apiVersion and kind; one without them is a Job (the
    Job code's callers predate the table)."""
    key = (str(obj.get("apiVersion") or JOB.api_version), str(obj.get("kind") or JOB.kind))
    return _BY_TYPE.get(key)


def by_resource(group: str, version: str, plural: str) -> Adapter | None:
    return _BY_RESOURCE.get((group, version, plural))


def managed_owner(obj: Mapping[str, Any]) -> str | None:
    """``Kind/name`` of an owner Berth queues itself (a JobSet's Jobs, a RayJob's
    RayCluster): such an object is admitted with its owner, never on its own."""
    for owner in (obj.get("metadata") or {}).get("ownerReferences") or []:
        key = (str(owner.get("apiVersion") or ""), str(owner.get("kind") or ""))
        if key in _BY_TYPE:
            return f"{key[1]}/{owner.get('name')}"
    return None


@dataclass(frozen=True, slots=True)
class PodClaim:
    """The object a pod belongs to: its name, and the kinds that could be (a Kubeflow label
    names the job, not its kind); a workload of another kind under that name is not it."""

    name: str
    kinds: frozenset[str]


def pod_claim(pod: Mapping[str, Any]) -> PodClaim | None:
    """Which object ``pod`` belongs to, as its controller labelled or owns it; a Pod naming a
    queue and no group is a group of one under its own name; None: no kind Berth queues."""
    for adapter in POD_OWNERS:
        name = adapter.owner_of_pod(pod)
        if name:
            kinds = frozenset(a.kind for a in ADAPTERS if a.owner_of_pod(pod) == name)
            return PodClaim(name, kinds)
    meta = pod.get("metadata") or {}
    if QUEUE_NAME_LABEL in (meta.get("labels") or {}) and meta.get("name"):
        return PodClaim(str(meta["name"]), frozenset({POD.kind}))
    return None
