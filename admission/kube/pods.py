"""The Pod watcher: where each workload's pods run, which failed on a bad device, and (with
waitForPodsReady) how many are Ready.

A pod belongs to the workload its controller labelled it with, as each kind's adapter says
(``kinds.registry.pod_claim``; a RayJob's pods are those of its RayCluster). Two facts go
into the ledger, as annotations on the workload (the loop reads them;
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
from datetime import UTC, datetime

from admission.engine.node_faults import DEVICE_ERROR, POD_NODES, DeviceError, pod_nodes_annotation
from admission.intake.nodes import degrade
from admission.kube.client import Obj
from admission.kube.jobs import SessionScope
from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.registry import PodClaim, pod_claim
from admission.kube.readiness import ReadinessTracker, run_start
from quota.core.node_health import device_error
from quota.core.workload import HOLDS_QUOTA, Workload
from quota.ledger import nodes as ledger_nodes
from quota.ledger.repository import Ledger

log = logging.getLogger(__name__)

ACTOR = "kubernetes:pod-watcher"
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
    """The handler of the Pod informer (every pod; those of no workload are skipped), and of
    the workload objects whose pods name another object (``note_children``)."""

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
        # (namespace, workload) -> pod uid -> (node, created): its live, bound pods.
        self.pods: dict[tuple[str, str], dict[str, tuple[str, datetime | None]]] = {}
        # (namespace, child object) -> the workload it was made for (a RayJob's RayCluster)
        self.children: dict[tuple[str, str], PodClaim] = {}
        self.written: dict[tuple[str, str], frozenset[str]] = {}  # pod uids last recorded
        self.failed: set[str] = set()  # pod uids whose device error was recorded
        # waitForPodsReady: the Ready pods of each workload, all-Ready recorded in the ledger.
        self.readiness = ReadinessTracker(sessions, clock) if pods_ready else None

    def note_children(self, adapter: Adapter, kind: str, obj: Obj) -> None:
        """A workload object seen: remember the objects made for it that its pods name."""
        meta = obj.get("metadata") or {}
        namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
        for child in adapter.children(obj):
            if kind == "DELETED":
                self.children.pop((namespace, child), None)
            else:
                self.children[(namespace, child)] = PodClaim(name, frozenset({adapter.kind}))

    def claim(self, pod: Obj) -> PodClaim | None:
        """The workload ``pod`` belongs to, or None."""
        claim = pod_claim(pod)
        namespace = str((pod.get("metadata") or {}).get("namespace") or "")
        if claim is None:
            return None
        return self.children.get((namespace, claim.name), claim)

    async def handle(self, kind: str, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        claim, namespace = self.claim(pod), meta.get("namespace")
        if claim is None or not namespace:
            return
        key = (str(namespace), claim.name)
        kinds = claim.kinds
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
            changed = await asyncio.to_thread(self._device_error, key, kinds, failure)
        current = frozenset(pods)
        if current != self.written.get(key, frozenset()):
            self.written[key] = current
            changed = await asyncio.to_thread(self._pod_nodes, key, kinds, dict(pods)) or changed
        if not pods:
            self.pods.pop(key, None)
            self.written.pop(key, None)
        if self.readiness is not None:
            created = _time(meta.get("creationTimestamp"))
            observed = await self.readiness.observe(kind, key, kinds, uid, pod, created)
            changed = observed or changed
        if changed:
            self.notify()

    def _pod_nodes(
        self, key: tuple[str, str], kinds: frozenset[str],
        pods: dict[str, tuple[str, datetime | None]],
    ) -> bool:  # fmt: skip
        namespace, job = key
        with self.sessions() as session:
            workload = Ledger(session).get_workload(namespace, job)
            since = _run_start(workload, kinds)
            if workload is None or since is None:
                return False
            nodes = {node for node, created in pods.values() if created is None or created >= since}
            value = pod_nodes_annotation(nodes, self.clock())
            return ledger_nodes.annotate_workload(session, namespace, job, POD_NODES, value)

    def _device_error(
        self, key: tuple[str, str], kinds: frozenset[str], failure: PodFailure
    ) -> bool:
        namespace, job = key
        why = device_error(failure.node, f"{namespace}/{failure.pod}", failure.container,
                           failure.code)  # fmt: skip
        log.warning("Job %s/%s: %s", namespace, job, why)
        with self.sessions() as session:
            changed = degrade(session, failure.node, why, actor=ACTOR)
            workload = Ledger(session).get_workload(namespace, job)
            since = _run_start(workload, kinds)
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


def _run_start(workload: Workload | None, kinds: frozenset[str]) -> datetime | None:
    """From when a pod belongs to the workload's current run; None: the pods are not its
    (another kind under the name) or it holds no quota."""
    if workload is None or workload.state not in HOLDS_QUOTA or workload.admitted_at is None:
        return None
    if workload.kind not in kinds:
        return None
    return run_start(workload)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
