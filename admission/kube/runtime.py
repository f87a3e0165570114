"""Kubernetes mode of ``berth serve``: the API client, the watchers (one per workload kind
the cluster serves), the actuator and the status writer, started together and stopped
together."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import config as k8s_config

from admission.intake.workloads import finish_workload, submit_workload
from admission.kube.actuator import JobActuator
from admission.kube.client import NODES, PODS, Kube, Obj
from admission.kube.errors import Forbidden, KubernetesError
from admission.kube.informer import Informer
from admission.kube.jobs import Finish, JobWatcher, SessionScope, Submit
from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.job import JOB
from admission.kube.kinds.pod import POD
from admission.kube.kinds.registry import ADAPTERS
from admission.kube.lease import KubeLease
from admission.kube.mirror import BERTH_KINDS, Mirror
from admission.kube.mode import IN_CLUSTER_ENV
from admission.kube.pod_groups import PodGroupWatcher
from admission.kube.pods import PodWatcher
from admission.kube.provisioning import ProvisioningController
from admission.kube.reclaim import JobReclaimer
from admission.kube.status import StatusWriter
from admission.kube.taints import NodeTainter
from quota.core.errors import NotFound
from quota.core.node_health import HealthThresholds
from quota.core.workload import QUEUE_NAME_LABEL

log = logging.getLogger(__name__)

DEFAULT_NAMESPACE = "default"
Handler = Callable[[str, Obj], Awaitable[None]]
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


@dataclass(frozen=True, slots=True, kw_only=True)
class KubeSettings:
    """Where the API server is and how Berth behaves in the cluster.

    The fields without a default come from the settings tree (``berth.serve.kube_settings``
    builds them; ``berth.settings`` holds their defaults and says what each does). The ones
    with a default are not settings: fixed behaviour the tests turn down or off."""

    kubeconfig: str | None  # None: the in-cluster config (when KUBERNETES_SERVICE_HOST)
    context: str | None
    identity: str  # the Lease holder
    lease_namespace: str | None  # None: found by ``lease_namespace``
    lease_name: str
    lease_seconds: int  # the Lease's leaseDurationSeconds
    taint_nodes: bool  # berth.dev/unhealthy on Nodes out of the pool (admission.kube.taints)
    health: HealthThresholds
    device_error_exit_codes: frozenset[int]
    pods_ready: bool  # waitForPodsReady: record when a workload's pods are all Ready
    host: str | None = None  # a plain API URL (kubectl proxy, tests); wins over the others
    queue_label: str = QUEUE_NAME_LABEL
    watch_timeout_seconds: int = 300
    status_seconds: float = 5.0
    nodes: bool = True  # watch Nodes into the inventory
    pods: bool = True  # watch workloads' pods: where they run, device errors, readiness
    kinds: tuple[Adapter, ...] = ADAPTERS  # the workload kinds to queue, where served


async def api_client(settings: KubeSettings) -> k8s.ApiClient:
    config = k8s.Configuration()
    if settings.host:
        config.host = settings.host
    elif settings.kubeconfig:
        await k8s_config.load_kube_config(
            config_file=settings.kubeconfig, context=settings.context, client_configuration=config
        )
    elif IN_CLUSTER_ENV in os.environ:
        k8s_config.load_incluster_config(client_configuration=config)  # type: ignore[no-untyped-call]
    else:
        raise KubernetesError("no cluster: give --kubeconfig, or run Berth inside a pod")
    return k8s.ApiClient(configuration=config)


def lease_namespace(settings: KubeSettings) -> str:
    """Where the leader Lease goes: the setting, else the pod's own namespace in a pod, else
    the kubeconfig context's namespace, else ``default`` (a namespace every cluster has; a
    fixed ``berth-system`` would leave a cluster without it leaderless)."""
    if settings.lease_namespace:
        return settings.lease_namespace
    if settings.host:
        return DEFAULT_NAMESPACE
    if settings.kubeconfig:
        contexts, current = k8s_config.list_kube_config_contexts(settings.kubeconfig)
        wanted = settings.context or (current or {}).get("name")
        for context in contexts:
            if context.get("name") == wanted:
                return str((context.get("context") or {}).get("namespace") or DEFAULT_NAMESPACE)
        return DEFAULT_NAMESPACE
    try:
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip() or DEFAULT_NAMESPACE
    except OSError:
        return DEFAULT_NAMESPACE


class KubeRuntime:
    """The running Kubernetes side: ``actuator`` for the loop, ``leadership()`` for serve."""

    def __init__(self, kube: Kube, settings: KubeSettings, mirror: Mirror) -> None:
        self.kube = kube
        self.settings = settings
        self.mirror = mirror
        self.actuator = JobActuator(kube)
        self.status = StatusWriter(kube, mirror.sessions, mirror)
        self.informers: dict[str, Informer] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._status_due = asyncio.Event()
        self.lease: KubeLease | None = None  # made by ``leadership``
        self.provisioning: ProvisioningController | None = None

    def leadership(self) -> KubeLease:
        """Lease-based leadership among Berth's replicas (the loop's ``Leadership``); the
        provisioning controller runs while it leads."""
        if self.lease is not None:
            return self.lease
        s = self.settings
        self.lease = KubeLease(
            self.kube,
            namespace=lease_namespace(s),
            name=s.lease_name,
            identity=s.identity,
            duration_seconds=s.lease_seconds,
        )
        return self.lease

    def changed(self) -> None:
        """The ledger changed: write queue status soon."""
        self._status_due.set()

    async def wait_synced(self) -> None:
        """Until every watch has listed once (bound it with ``asyncio.timeout``)."""
        for informer in self.informers.values():
            await informer.synced.wait()

    def watch(self, name: str, informer: Informer) -> None:
        """Run ``informer`` until ``stop``."""
        self.informers[name] = informer
        self._tasks.append(asyncio.create_task(informer.run(), name=f"berth-watch-{name}"))

    def start_status_writer(self) -> None:
        self._tasks.append(asyncio.create_task(self._write_status(), name="berth-status"))

    def start_provisioning(self, sessions: SessionScope) -> None:
        """The built-in provisioning-request admission check (``admission.kube.provisioning``),
        working while this replica leads (never when it runs no loop: no ``leadership``)."""
        controller = ProvisioningController(self.kube, sessions, self._leads)
        self.provisioning = controller
        self._tasks.append(
            asyncio.create_task(
                controller.run(self.settings.status_seconds), name="berth-provisioning"
            )
        )

    def _leads(self) -> bool:
        return self.lease is not None and self.lease.leads()

    async def _write_status(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.settings.status_seconds):
                    await self._status_due.wait()
            self._status_due.clear()
            try:
                await self.status.write()
            except Exception:
                log.exception("queue status not written")

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        await self.kube.close()


async def served_kinds(kube: Kube, kinds: tuple[Adapter, ...], selector: str) -> list[Adapter]:
    """The workload kinds the cluster serves (and Berth may read): batch/v1 Jobs always;
    and Pods always; a framework whose CRD is not installed is skipped with one log line,
    not retried."""
    found: list[Adapter] = []
    for adapter in kinds:
        if adapter in (JOB, POD):
            found.append(adapter)
            continue
        try:
            await kube.list(adapter.ref, label_selector=selector)
        except NotFound:
            log.info("%s (%s) is not served by this cluster; %ss are not queued",
                     adapter.kind, adapter.ref.api_version, adapter.kind)  # fmt: skip
            continue
        except Forbidden as exc:
            log.warning("%ss are not queued: %s", adapter.kind, exc.message)
            continue
        found.append(adapter)
    return found


async def start_kubernetes(
    settings: KubeSettings,
    session_scope: SessionScope,
    notify: Callable[[], None],
    *,
    submit: Submit = submit_workload,
    finish: Finish = finish_workload,
) -> KubeRuntime:
    """Connect, start every watch and the status writer; ``notify`` wakes the loop."""
    kube = Kube(await api_client(settings))
    runtime: KubeRuntime

    def changed() -> None:
        notify()
        runtime.changed()

    mirror = Mirror(kube, session_scope, changed, health=settings.health)
    runtime = KubeRuntime(kube, settings, mirror)
    timeout = settings.watch_timeout_seconds
    for kind, ref in BERTH_KINDS.items():
        informer = Informer(kube, ref, mirror.handler(ref), timeout_seconds=timeout)
        runtime.watch(kind, informer)
    if settings.nodes:
        runtime.watch("Node", Informer(kube, NODES, mirror.handle_node, timeout_seconds=timeout))
    pods: PodWatcher | None = None
    if settings.pods:
        pods = PodWatcher(
            session_scope,
            changed,
            exit_codes=settings.device_error_exit_codes,
            pods_ready=settings.pods_ready,
        )
        informer = Informer(kube, PODS, pods.handle, timeout_seconds=timeout)
        runtime.watch("Pod", informer)
    selector = settings.queue_label
    kinds = await served_kinds(kube, settings.kinds, selector)
    # When a leader starts, workloads whose object vanished meanwhile give their quota back.
    # (A pod group has no uid to tell a new one from the old: its pods' deletions end it.)
    objects = [adapter for adapter in kinds if adapter is not POD]
    runtime.actuator.reclaimer = JobReclaimer(
        kube, session_scope, finish, label_selector=selector, notify=changed, adapters=objects
    )
    if settings.taint_nodes and settings.nodes:
        runtime.actuator.tainter = NodeTainter(kube, session_scope)
    for adapter in kinds:
        watcher: JobWatcher | PodGroupWatcher
        if adapter is POD:
            watcher = PodGroupWatcher(kube, session_scope, changed, submit=submit, finish=finish)
        else:
            watcher = JobWatcher(
                kube, session_scope, changed, submit=submit, finish=finish, adapter=adapter
            )
        handle = watcher.handle if pods is None else _noting(pods, adapter, watcher.handle)
        informer = Informer(kube, adapter.ref, handle, label_selector=selector,
                            timeout_seconds=timeout)  # fmt: skip
        runtime.watch("PodGroup" if adapter is POD else adapter.kind, informer)
    runtime.start_status_writer()
    runtime.start_provisioning(session_scope)
    names = ", ".join(f"{adapter.kind}s" for adapter in kinds)
    log.info("Kubernetes mode: watching %s labelled %s, Berth's CRDs and Nodes", names, selector)
    return runtime


def _noting(pods: PodWatcher, adapter: Adapter, handle: Handler) -> Handler:
    """``handle``, telling the Pod watcher first which objects the workload's pods name."""

    async def noted(kind: str, obj: Obj) -> None:
        pods.note_children(adapter, kind, obj)
        await handle(kind, obj)

    return noted
