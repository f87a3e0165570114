"""The built-in ``kueue.x-k8s.io/provisioning-request`` admission check (Kubernetes mode).

For each workload reserving quota whose ClusterQueue has such a check, Berth asks the
cluster autoscaler for the capacity, as Kueue does: one ``autoscaling.x-k8s.io/v1``
ProvisioningRequest per attempt (``{workload}-{check}-{attempt}``), with a PodTemplate per
pod set (``ppt-{request}-{podSet}``), both owned by the workload's own object (found by
its recorded kind in ``kinds.registry``: a Job, JobSet, Kubeflow or Ray job). Each
PodTemplate is that pod set's template in the object, with only the check's
``managedResources`` requested when it names any; the config's ``podSetMergePolicy``
(``IdenticalPodTemplates``, ``IdenticalWorkloadSchedulingRequirements``) merges pod sets
into one PodTemplate of their summed count (``merge_pod_sets``). Then it reads the
request's conditions:

- ``Provisioned``: every pod template of the object gets ``autoscaling.x-k8s.io/consume-
  provisioning-request`` and ``…/provisioning-class-name`` (so its pods land on the booked
  capacity) and the check is ``Ready``: the loop admits the workload;
- ``Failed``, ``CapacityRevoked``, ``BookingExpired``: the check is ``Retry``; the loop
  releases the quota and requeues it after the ProvisioningRequestConfig's backoff, and past
  ``backoffLimitCount`` retries rejects it.

Pod groups and workloads submitted over REST have no such object: their check stays
``Pending``, saying so. Requests of workloads no longer reserving quota or admitted
(finished, evicted, deleted) are deleted with their PodTemplates. The translation of a
request into a check state (``verdict_of``) and the objects to create (``request_body``,
``template_bodies``) are pure; ``sync`` does the I/O, one pass at a time, on the leader
only (``tick``: the replica holding the Lease the admission loop runs under), so replicas
never race on the requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from admission.kube.client import (
    POD_TEMPLATES,
    PROVISIONING_REQUESTS,
    Kube,
    Obj,
    ResourceRef,
)
from admission.kube.jobs import SessionScope
from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.pod import POD
from admission.kube.kinds.registry import adapter_of, by_kind
from admission.kube.templates import template_annotations_patch
from quota.core.checks import (
    PROVISIONING_CONTROLLER,
    AdmissionCheck,
    CheckState,
    CheckStatus,
    ProvisioningRequestConfig,
)
from quota.core.errors import BerthError, Conflict, NotFound
from quota.core.quantity import parse_quantity
from quota.core.workload import Workload, WorkloadState
from quota.ledger.check_states import set_check_state
from quota.ledger.repository import Ledger

log = logging.getLogger(__name__)

ACTOR = "kubernetes:provisioning"
CONSUME = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS = "autoscaling.x-k8s.io/provisioning-class-name"
WORKLOAD_LABEL = "berth.dev/workload"  # on every request: "{namespace}.{name}"
_RETRY_CONDITIONS = ("Failed", "CapacityRevoked", "BookingExpired")
_KEEP = (WorkloadState.QUOTA_RESERVED, WorkloadState.ADMITTED, WorkloadState.EVICTING)


def object_name(text: str) -> str:
    """A DNS-1123 name of at most 253 characters (a long one keeps a hash of the rest)."""
    if len(text) <= 253:
        return text
    return f"{text[:240]}-{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def request_name(workload: str, check: str, attempt: int) -> str:
    return object_name(f"{workload}-{check}-{attempt}")


def template_name(request: str, pod_set: str) -> str:
    return object_name(f"ppt-{request}-{pod_set}")


@dataclass(frozen=True, slots=True)
class Verdict:
    state: CheckState
    message: str


def verdict_of(request: Obj) -> Verdict:
    """What a ProvisioningRequest's conditions say of the check (PURE)."""
    conditions = {c.get("type"): c for c in (request.get("status") or {}).get("conditions") or ()}
    for kind in _RETRY_CONDITIONS:
        found = conditions.get(kind)
        if found is not None and found.get("status") == "True":
            return Verdict(CheckState.RETRY, f"{kind}: {found.get('message') or ''}".rstrip(": "))
    provisioned = conditions.get("Provisioned")
    if provisioned is not None and provisioned.get("status") == "True":
        return Verdict(CheckState.READY, provisioned.get("message") or "capacity is provisioned")
    said = (provisioned or conditions.get("Accepted") or {}).get("message")
    return Verdict(CheckState.PENDING, said or "waiting for the ProvisioningRequest")


def _owner(obj: Obj) -> list[Obj]:
    meta = obj["metadata"]
    return [{"apiVersion": obj.get("apiVersion") or "batch/v1", "kind": obj.get("kind") or "Job",
             "name": meta["name"], "uid": meta["uid"],
             "controller": True, "blockOwnerDeletion": True}]


@dataclass(frozen=True, slots=True)
class MergedPodSet:
    """One pod set of the request: the first of those merged, their summed count."""

    name: str
    template: Obj
    count: int


def merge_pod_sets(pod_sets: Sequence[tuple[str, Obj, int]],
                   policy: str | None) -> list[MergedPodSet]:
    """Kueue's ``podSetMergePolicy`` over ``(name, pod template, count)`` in order (PURE):
    a pod set joins the first earlier one it can merge with, which adds its count; with no
    policy none merge. Pod sets of no pods are left out."""
    out: list[MergedPodSet] = []
    for name, template, count in pod_sets:
        if count <= 0:
            continue
        for i, merged in enumerate(out):
            if policy is not None and _mergeable(merged.template, template, policy):
                out[i] = replace(merged, count=merged.count + count)
                break
        else:
            out.append(MergedPodSet(name, template, count))
    return out


def _mergeable(a: Obj, b: Obj, policy: str) -> bool:
    if policy == "IdenticalPodTemplates":
        return _same(a, b)
    if policy == "IdenticalWorkloadSchedulingRequirements":
        return _same(_requirements(a), _requirements(b))
    return False


def _requirements(template: Obj) -> Obj:
    """What Kueue compares for ``IdenticalWorkloadSchedulingRequirements``: each (init)
    container's resource requests in order, the pod's resources, nodeSelector, tolerations,
    affinity and resourceClaims."""
    spec = template.get("spec") or {}
    return {
        **{kind: [_amounts((c.get("resources") or {}).get("requests"))
                  for c in spec.get(kind) or ()]
           for kind in ("containers", "initContainers")},
        **{key: spec.get(key) for key in ("resources", "nodeSelector", "tolerations",
                                           "affinity", "resourceClaims")},
    }


def _amounts(requests: object) -> object:
    """Requests as milli-units, so that ``1`` and ``1000m`` are the same request."""
    if not isinstance(requests, Mapping):
        return requests
    out: dict[str, object] = {}
    for resource, quantity in requests.items():
        try:
            out[resource] = parse_quantity(quantity)
        except ValueError:
            out[resource] = quantity  # not a quantity: compared as written
    return out


def _same(a: object, b: object) -> bool:
    """Semantic equality as Kubernetes means it: an empty list or map equals an absent one."""
    return _normal(a) == _normal(b)


def _normal(value: object) -> object:
    if isinstance(value, Mapping):
        kept = {k: _normal(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None} or None
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value] or None
    return value


def pod_sets_of(workload: Workload, job: Obj,
                config: ProvisioningRequestConfig) -> list[MergedPodSet]:
    """The request's pod sets: each admitted pod set with its own template in the object
    (``job``, of any kind in ``kinds.registry``), merged by the config's policy (PURE)."""
    counts = {p.name: p.count for p in workload.admission.pod_sets} if workload.admission else {}
    kind = adapter_of(job)
    shapes = {s.name: s.template.value for s in kind.pod_sets(job)} if kind else {}
    out = []
    for pod_set in workload.pod_sets:
        template = shapes.get(pod_set.name)
        if not isinstance(template, dict):
            raise NotFound(f"{job.get('kind') or 'Job'} {workload.namespace}/{workload.name} "
                           f"has no pod template for pod set {pod_set.name}",
                           field=f"podSets[{pod_set.name}]")
        out.append((pod_set.name, template, counts.get(pod_set.name, pod_set.count)))
    return merge_pod_sets(out, config.pod_set_merge_policy)


def template_bodies(workload: Workload, job: Obj, request: str,
                    config: ProvisioningRequestConfig) -> list[Obj]:
    """A PodTemplate per (merged) pod set, requests limited to the config's managed
    resources when it names any (PURE)."""
    out = []
    for pod_set in pod_sets_of(workload, job, config):
        template = copy.deepcopy(pod_set.template)
        if config.managed_resources:
            for container in template.get("spec", {}).get("containers", []):
                resources = container.get("resources") or {}
                for part in ("requests", "limits"):
                    if part in resources:
                        resources[part] = {r: q for r, q in resources[part].items()
                                           if r in config.managed_resources}
        out.append({
            "apiVersion": "v1", "kind": "PodTemplate",
            "metadata": {"name": template_name(request, pod_set.name),
                         "namespace": workload.namespace, "ownerReferences": _owner(job),
                         "labels": {WORKLOAD_LABEL: f"{workload.namespace}.{workload.name}"}},
            "template": template,
        })
    return out


def request_body(workload: Workload, job: Obj, request: str,
                 config: ProvisioningRequestConfig) -> Obj:
    """The ProvisioningRequest for one attempt: a pod set per (merged) pod set (PURE)."""
    spec: Obj = {
        "provisioningClassName": config.provisioning_class_name,
        "podSets": [{"podTemplateRef": {"name": template_name(request, p.name)},
                     "count": p.count} for p in pod_sets_of(workload, job, config)],
    }
    if config.parameters:
        spec["parameters"] = dict(config.parameters)
    return {
        "apiVersion": PROVISIONING_REQUESTS.api_version, "kind": "ProvisioningRequest",
        "metadata": {"name": request, "namespace": workload.namespace,
                     "ownerReferences": _owner(job),
                     "labels": {WORKLOAD_LABEL: f"{workload.namespace}.{workload.name}"}},
        "spec": spec,
    }


@dataclass(frozen=True, slots=True)
class _Pending:
    workload: Workload
    check: CheckStatus
    config: ProvisioningRequestConfig


class ProvisioningController:
    """One ``sync`` pass: ensure, read and clean up ProvisioningRequests."""

    def __init__(self, kube: Kube, sessions: SessionScope, leading: Callable[[], bool]) -> None:
        self.kube = kube
        self.sessions = sessions
        self.leading = leading  # only the leader asks for capacity and cleans up

    async def run(self, period: float) -> None:
        while True:
            await self.tick()
            await asyncio.sleep(period)

    async def tick(self) -> bool:
        """One ``sync`` if this replica leads (whether it did); errors are logged."""
        if not self.leading():
            return False
        try:
            await self.sync()
        except BerthError as exc:  # the API server or the ledger: try again later
            log.warning("provisioning-request checks: %s", exc)
        return True

    async def sync(self) -> None:
        found = await asyncio.to_thread(self._read)
        if found is None:
            return  # no provisioning-request check exists: nothing to ask or clean up
        pending, kept = found
        for item in pending:
            await self._advance(item)
        await self._clean(kept)

    def _read(self) -> tuple[list[_Pending], set[str]] | None:
        with self.sessions() as session:
            ledger = Ledger(session)
            checks = {o.name: o for o in ledger.list("AdmissionCheck")
                      if isinstance(o, AdmissionCheck)}
            if not any(c.controller_name == PROVISIONING_CONTROLLER for c in checks.values()):
                return None
            configs = {o.name: o for o in ledger.list("ProvisioningRequestConfig")
                       if isinstance(o, ProvisioningRequestConfig)}
            workloads = ledger.list_workloads(_KEEP)
        pending = []
        for workload in workloads:
            if workload.state is not WorkloadState.QUOTA_RESERVED:
                continue
            for status in workload.checks:
                config = _config_of(checks.get(status.name), configs)
                if config is not None and status.state is CheckState.PENDING:
                    pending.append(_Pending(workload, status, config))
        return pending, {f"{w.namespace}.{w.name}" for w in workloads}

    async def _advance(self, item: _Pending) -> None:
        workload, check, config = item.workload, item.check, item.config
        name = request_name(workload.name, check.name, check.retries + 1)
        try:
            request = await self.kube.get(PROVISIONING_REQUESTS, workload.namespace, name)
        except NotFound:
            found = await self._object(workload)
            if found is None:
                await self._no_object(workload, check)
                return
            _, job = found
            for body in template_bodies(workload, job, name, config):
                await _create(self.kube, POD_TEMPLATES, workload.namespace, body)
            body = request_body(workload, job, name, config)
            await _create(self.kube, PROVISIONING_REQUESTS, workload.namespace, body)
            return
        verdict = verdict_of(request)
        if verdict.state is CheckState.PENDING and verdict.message == check.message:
            return
        if verdict.state is CheckState.READY:
            found = await self._object(workload)
            if found is None:
                await self._no_object(workload, check)
                return
            kind, job = found
            annotations = {CONSUME: name, CLASS: config.provisioning_class_name}
            patch = template_annotations_patch(job, annotations)
            if patch is not None:
                await self.kube.patch(kind.ref, workload.namespace, workload.name, patch)
        await asyncio.to_thread(self._answer, workload, check.name, verdict)

    async def _object(self, workload: Workload) -> tuple[Adapter, Obj] | None:
        """The workload's own object, found by its recorded kind; None for a kind without
        pod templates to book capacity for (pod groups, workloads submitted over REST)."""
        kind = by_kind(workload.kind)
        if kind is None or kind is POD:
            return None
        obj = await self.kube.get(kind.ref, workload.namespace, workload.name)
        obj.setdefault("apiVersion", kind.api_version)
        obj.setdefault("kind", kind.kind)
        return kind, obj

    async def _no_object(self, workload: Workload, check: CheckStatus) -> None:
        message = (f"Berth books capacity only for a workload object with pod templates; "
                   f"this one is a {workload.kind}")
        if check.message != message:
            await asyncio.to_thread(self._answer, workload, check.name,
                                    Verdict(CheckState.PENDING, message))

    def _answer(self, workload: Workload, check: str, verdict: Verdict) -> None:
        with self.sessions() as session:
            set_check_state(session, workload.namespace, workload.name, check,
                            state=verdict.state, message=verdict.message, requeue_after=None,
                            now=datetime.now(UTC), actor=ACTOR)

    async def _clean(self, kept: set[str]) -> None:
        for ref in (PROVISIONING_REQUESTS, POD_TEMPLATES):
            try:
                found = await self.kube.list(ref, label_selector=WORKLOAD_LABEL)
            except NotFound:
                return  # no ProvisioningRequest CRD in this cluster: nothing was created
            for obj in found.get("items") or ():
                meta = obj["metadata"]
                if meta.get("labels", {}).get(WORKLOAD_LABEL) not in kept:
                    await _delete(self.kube, ref, meta["namespace"], meta["name"])


def _config_of(
    check: AdmissionCheck | None, configs: Mapping[str, ProvisioningRequestConfig]
) -> ProvisioningRequestConfig | None:
    if check is None or check.controller_name != PROVISIONING_CONTROLLER:
        return None
    ref = check.parameters
    if ref is None or ref.kind != "ProvisioningRequestConfig":
        return ProvisioningRequestConfig(check.name, "")  # no config: Kueue's defaults
    return configs.get(ref.name)


async def _create(kube: Kube, ref: ResourceRef, namespace: str, body: Obj) -> None:
    with contextlib.suppress(Conflict):  # already there from an earlier pass
        await kube.create(ref, namespace, body)


async def _delete(kube: Kube, ref: ResourceRef, namespace: str, name: str) -> None:
    with contextlib.suppress(NotFound):  # gone already
        await kube.delete(ref, namespace, name)
