"""Plain Pods and pod groups as workloads (``kinds.pod``): the watcher that gathers a
group's pods into one workload, and what admission, eviction and a wait reason do to them.

A group becomes a workload once as many of its pods exist as its total count says (Kueue
waits for the whole group too); it asks for that many pods like its first one. It is over
when every pod has Succeeded or Failed (Failed if any did), or when all its pods are gone.
Admission removes the scheduling gate from every pod and adds the flavor's nodeSelector
and tolerations (a gated Pod may gain them); eviction deletes the group's pods, as Kueue
does: a Pod cannot be suspended, and whoever created them creates them again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from admission.kube import events, templates
from admission.kube.client import PODS, Kube, Obj
from admission.kube.jobs import Finish, JobWatcher, SessionScope, Submit
from admission.kube.kinds.job import JOB_LABEL
from admission.kube.kinds.pod import POD, admit_pod_patch, group_name, group_total
from admission.kube.kinds.registry import managed_owner
from admission.loop.actuation import ADMIT, CHECKPOINT, EVICT, REASON, Actuation
from quota.core.errors import NotFound
from quota.manifests.frameworks import POD_GROUP_LABEL

log = logging.getLogger(__name__)

GroupKey = tuple[str, str]  # (namespace, group name)


def group_object(namespace: str, name: str, members: dict[str, Obj]) -> Obj:
    """The group as one object (PURE): its first pod's labels, annotations and spec, the
    phases of all its pods."""
    first = members[min(members)]
    meta = first.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": dict(meta.get("labels") or {}),
            "annotations": dict(meta.get("annotations") or {}),
        },
        "spec": first.get("spec") or {},
        "status": {
            "phases": [(m.get("status") or {}).get("phase") or "Pending" for m in members.values()],
            "total": group_total(first),
        },
    }


class PodGroupWatcher:
    """The handler of the informer of Pods naming a queue."""

    def __init__(
        self,
        kube: Kube,
        sessions: SessionScope,
        notify: Callable[[], None],
        *,
        submit: Submit,
        finish: Finish,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.kube = kube
        self.notify = notify
        self.clock = clock
        self.workloads = JobWatcher(
            kube, sessions, notify, submit=submit, finish=finish, clock=clock, adapter=POD
        )
        self.groups: dict[GroupKey, dict[str, Obj]] = {}
        self._reported: set[GroupKey] = set()  # groups whose problem has its Event

    async def handle(self, kind: str, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        if managed_owner(pod) is not None or JOB_LABEL in (meta.get("labels") or {}):
            return  # a pod of a workload object: admitted with it
        namespace = str(meta.get("namespace") or "default")
        key = (namespace, group_name(pod))
        members = self.groups.setdefault(key, {})
        if kind == "DELETED":
            members.pop(str(meta.get("name")), None)
        else:
            members[str(meta.get("name"))] = pod
        now = self.clock()
        if not members:
            del self.groups[key]
            self._reported.discard(key)
            gone = {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"namespace": namespace, "name": key[1]}}  # fmt: skip
            outcome = await asyncio.to_thread(self.workloads.forget, gone, now)
        else:
            group = group_object(namespace, key[1], members)
            if len(members) < group["status"]["total"]:
                return  # the group is not all there yet
            outcome = await asyncio.to_thread(self.workloads.record, group, now)
            if outcome.problem and key not in self._reported:
                self._reported.add(key)
                first = members[min(members)]
                await events.record(self.kube, first, "InvalidPodGroup", outcome.problem,
                                    now=now, warning=True)  # fmt: skip
        if outcome.changed:
            self.notify()


async def pods_of(kube: Kube, namespace: str, name: str) -> list[Obj]:
    """The pods of group ``name``: labelled with it, or the one Pod of that name."""
    listing = await kube.list(PODS, label_selector=f"{POD_GROUP_LABEL}={name}")
    found = [
        {"apiVersion": "v1", "kind": "Pod", **item}
        for item in listing.get("items") or []
        if (item.get("metadata") or {}).get("namespace") == namespace
    ]
    if found:
        return sorted(found, key=lambda p: str(p["metadata"]["name"]))
    try:
        single = await kube.get(PODS, namespace, name)
    except NotFound:
        return []
    if POD_GROUP_LABEL in ((single.get("metadata") or {}).get("labels") or {}):
        return []  # a pod of another group that happens to have the group's name
    return [{"apiVersion": "v1", "kind": "Pod", **single}]


async def actuate_group(
    kube: Kube, action: Actuation, *, now: datetime, event: Callable[..., Any]
) -> None:
    """One committed decision carried out on a pod group's pods (idempotent)."""
    namespace, _, name = action.key.partition("/")
    pods = await pods_of(kube, namespace, name)
    if not pods:
        log.info("pod group %s has no pods; nothing to %s", action.key, action.action)
        return
    first = pods[0]
    if action.action == ADMIT:
        flavors = templates.admitted_flavors(action.admission, action.flavors)
        patched = 0
        for pod in pods:
            if (patch := admit_pod_patch(pod, flavors)) is not None:
                await kube.patch(PODS, namespace, pod["metadata"]["name"], patch)
                patched += 1
        if patched:
            queue = action.admission.cluster_queue if action.admission else "?"
            names = ", ".join(f.name for f in flavors) or "no flavor"
            await event(first, "Admitted", f"admitted by ClusterQueue {queue} in {names}")
    elif action.action == EVICT:
        why = action.reason.message if action.reason else "evicted by Berth"
        await event(first, "Evicted", f"{why}; the group's pods are deleted", warning=True)
        for pod in pods:
            await kube.delete(PODS, namespace, pod["metadata"]["name"])
    elif action.action == REASON and action.reason is not None:
        code, message = str(action.reason.code), action.reason.message
        previous = templates.annotations_of(first).get(templates.WAIT_REASON)
        for pod in pods:
            if (patch := templates.reason_patch(pod, code, message)) is not None:
                await kube.patch(PODS, namespace, pod["metadata"]["name"], patch)
        if previous != code:
            await event(first, code, message)
    elif action.action == CHECKPOINT and action.requested_at and action.deadline:
        for pod in pods:
            patch = templates.checkpoint_patch(pod, action.requested_at, action.deadline)
            if patch is not None:
                await kube.patch(PODS, namespace, pod["metadata"]["name"], patch)
