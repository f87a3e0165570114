"""The Pod watcher: where each Job's pods run, and which failed on a bad device.

Two facts go into the ledger, as annotations on the Job's workload (the loop reads them;
``admission.health_evictions`` decides): ``berth.dev/pod-nodes``, the nodes the pods of
the current run are on, so that a node leaving the pool evicts the right workloads; and
``berth.dev/device-error``, a pod that failed with one of the configured device-error exit
codes (``BERTH_DEVICE_ERROR_EXIT_CODES``), which requeues the workload and marks the node
Degraded. Pods of an earlier run (created before the current admission) are left out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Set
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from admission.engine.node_faults import DEVICE_ERROR, POD_NODES, DeviceError, pod_nodes_annotation
from admission.intake.nodes import degrade
from admission.kube.client import Obj
from admission.kube.jobs import SessionScope
from admission.kube.readiness import ReadinessTracker
from quota.core.node_health import device_error
from quota.core.workload import HOLDS_QUOTA, Workload
from quota.ledger import nodes as ledger_nodes
from quota.ledger.repository import Ledger

log = logging.getLogger(__name__)

ACTOR = "kubernetes:pod-watcher"
JOB_LABEL = "job-name"  # the Job controller labels every pod it creates with its Job's name
_DONE = ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True)
class PodFailure:
    """A container of a pod terminated with a device-error exit code."""

    pod: str
    node: str
    container: str
    code: int
    at: datetime  # when it terminated (else when the pod was created)
    created: datetime | None


def job_of(pod: Obj) -> str | None:
    """The name of the Job that owns ``pod`` (its controller), or None."""
    meta = pod.get("metadata") or {}
    for owner in meta.get("ownerReferences") or []:
        if owner.get("kind") == "Job" and owner.get("controller"):
            return str(owner.get("name") or "") or None
    label = (meta.get("labels") or {}).get(JOB_LABEL)
    return str(label) if label else None


def live_node(pod: Obj) -> str | None:
    """The node a running (or starting) pod is bound to; None when it is not bound, done,
    or being deleted."""
    meta = pod.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return None
    if (pod.get("status") or {}).get("phase") in _DONE:
        return None
    node = (pod.get("spec") or {}).get("nodeName")
    return str(node) if node else None


def device_failure(pod: Obj, codes: Set[int]) -> PodFailure | None:
    """The first container of ``pod`` that terminated with one of ``codes``, or None."""
    node = (pod.get("spec") or {}).get("nodeName")
    status = pod.get("status") or {}
    if not node or not codes:
        return None
    created = _time((pod.get("metadata") or {}).get("creationTimestamp"))
    for container in status.get("containerStatuses") or []:
        for state in ("state", "lastState"):
            terminated = (container.get(state) or {}).get("terminated") or {}
            code = terminated.get("exitCode")
            if isinstance(code, int) and code in codes:
                at = _time(terminated.get("finishedAt")) or created or datetime.now(UTC)
                name = str(pod["metadata"]["name"])
                return PodFailure(name, str(node), str(container.get("name")), code, at, created)
    return None


class PodWatcher:
    """The handler of the Pod informer (pods labelled ``job-name``)."""

    def __init__(
        self,
        sessions: SessionScope,
        notify: Callable[[], None],
        *,
        exit_codes: Set[int],
        pods_ready: bool = False,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.sessions = sessions
        self.notify = notify
        self.exit_codes = frozenset(exit_codes)
        self.clock = clock
        # (namespace, Job) -> pod uid -> (node, created): the Job's live, bound pods.
        self.pods: dict[tuple[str, str], dict[str, tuple[str, datetime | None]]] = {}
        self.written: dict[tuple[str, str], frozenset[str]] = {}  # pod uids last recorded
        self.failed: set[str] = set()  # pod uids whose device error was recorded
        # waitForPodsReady: the Ready pods of each Job, all-Ready recorded in the ledger.
        self.readiness = ReadinessTracker(sessions, clock) if pods_ready else None

    async def handle(self, kind: str, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        job, namespace = job_of(pod), meta.get("namespace")
        if not job or not namespace:
            return
        key = (str(namespace), job)
        uid = str(meta.get("uid") or meta.get("name"))
        pods = self.pods.setdefault(key, {})
        node = None if kind == "DELETED" else live_node(pod)
        if node is None:
            pods.pop(uid, None)
        else:
            pods[uid] = (node, _time(meta.get("creationTimestamp")))
        changed = False
        failure = None if kind == "DELETED" else device_failure(pod, self.exit_codes)
        if kind == "DELETED":
            self.failed.discard(uid)
        elif failure is not None and uid not in self.failed:
            self.failed.add(uid)
            changed = await asyncio.to_thread(self._device_error, key, failure)
        current = frozenset(pods)
        if current != self.written.get(key, frozenset()):
            self.written[key] = current
            changed = await asyncio.to_thread(self._pod_nodes, key, dict(pods)) or changed
        if not pods:
            self.pods.pop(key, None)
            self.written.pop(key, None)
        if self.readiness is not None:
            created = _time(meta.get("creationTimestamp"))
            changed = await self.readiness.observe(kind, key, uid, pod, created) or changed
        if changed:
            self.notify()

    def _pod_nodes(
        self, key: tuple[str, str], pods: dict[str, tuple[str, datetime | None]]
    ) -> bool:
        namespace, job = key
        with self.sessions() as session:
            workload = Ledger(session).get_workload(namespace, job)
            since = _run_start(workload)
            if workload is None or since is None:
                return False
            nodes = {node for node, created in pods.values() if created is None or created >= since}
            value = pod_nodes_annotation(nodes, self.clock())
            return ledger_nodes.annotate_workload(session, namespace, job, POD_NODES, value)

    def _device_error(self, key: tuple[str, str], failure: PodFailure) -> bool:
        namespace, job = key
        why = device_error(failure.node, f"{namespace}/{failure.pod}", failure.container,
                           failure.code)  # fmt: skip
        log.warning("Job %s/%s: %s", namespace, job, why)
        with self.sessions() as session:
            changed = degrade(session, failure.node, why, actor=ACTOR)
            workload = Ledger(session).get_workload(namespace, job)
            since = _run_start(workload)
            if workload is None or since is None or workload.admitted_at is None:
                return changed
            if failure.created is not None and failure.created < since:
                return changed  # a pod of an earlier run
            error = DeviceError(
                failure.node, failure.pod, failure.container, failure.code,
                max(failure.at, workload.admitted_at),
            )  # fmt: skip
            annotated = ledger_nodes.annotate_workload(
                session, namespace, job, DEVICE_ERROR, error.to_annotation()
            )
            return annotated or changed


def _run_start(workload: Workload | None) -> datetime | None:
    """From when a pod belongs to the workload's current run: creation timestamps have
    whole seconds, so a second of slack."""
    if workload is None or workload.state not in HOLDS_QUOTA or workload.admitted_at is None:
        return None
    return workload.admitted_at.replace(microsecond=0) - timedelta(seconds=1)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
