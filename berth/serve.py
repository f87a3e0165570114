"""``berth serve``: open the ledger, migrate, serve the API and (on the leader) run the loop.

uvicorn and the admission loop share one asyncio event loop. Every replica serves the API;
only the one holding the leader lock runs admission cycles (``--no-loop``: API only).
Everything it runs is built from one settings tree (``berth.settings``): the listeners,
the leases, the runner, the Kubernetes side and the loop, fair sharing included.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import uvicorn

from admission.loop.actuation import Actuator, StandaloneActuator
from admission.loop.leader import Leadership, LedgerLease
from admission.loop.loop import AdmissionLoop, SessionScope
from admission.loop.runner import RunnerConfig, run_while_leading
from api.aggregated import Aggregation
from api.app import create_app, create_webhook_app
from api.auth import check_bind, is_loopback
from api.deps import AppContext
from api.metrics import observe_cycle
from berth import settings
from berth.database import Database
from berth.demo.live import run_demo
from berth.https import HttpsConfig, check_certificates
from berth.readiness import ReadinessCheck
from berth.settings import SettingsError
from quota.ledger.notify import ChangeListener

if TYPE_CHECKING:
    from admission.kube.runtime import KubeRuntime, KubeSettings

log = logging.getLogger("berth")
STOP_TIMEOUT = 10.0  # seconds the loop gets to finish its cycle on shutdown
# How long the admission cycle's thread may keep the interpreter while a request waits for
# it (Python's default is 5 ms). A request crosses between threads several times (event
# loop, worker thread, back), and a cycle is seconds of pure Python at 50,000 waiting: at
# 5 ms a read's p99 with the loop running was 134-146 ms, at 0.5 ms 35-41 ms
# (``python -m berth.bench.api_load --modes loop``, README "Benchmarks").
SWITCH_INTERVAL = 0.0005


def run(args: argparse.Namespace) -> int:
    config = settings.load(vars(args))
    if args.demo and (args.no_loop or config.kube.kubeconfig):
        raise SettingsError(
            "--demo feeds its own jobs to the admission loop: drop --no-loop and the "
            "kubeconfig (--kubeconfig, BERTH_KUBECONFIG)",
            field="--demo",
        )
    http = config.http
    check_aggregated_api(config)
    check_certificates(config.webhook)
    warning = check_bind(http.host, http.tokens)
    if warning and not is_loopback(http.host):
        raise SettingsError(warning, field="BERTH_HOST")
    if warning:
        log.warning("%s", warning)
    fairness = config.fair_sharing.fairness()
    if fairness.enable:
        memory = fairness.memory_half_life
        log.info("fair sharing on: admission and preemption by weighted share in cohorts "
                 "(strategies %s%s)", ", ".join(fairness.strategies),
                 f"; with memory, half-life {memory}" if memory else "")
    if fairness.admission is not None:
        log.info("admission fair sharing on: LocalQueue usage, half-life %s",
                 fairness.admission.half_life)
    # Bound before the ledger opens: a port in use stops here, with the fix, having
    # started nothing and announced no dashboard that is someone else's.
    listener = listen(http.host, http.port)
    database = Database(config.database)
    try:
        database.open()
    except BaseException:
        listener.close()
        raise
    try:
        log.info("ledger: %s (migrations at head)", database.description)
        readiness = ReadinessCheck(database)
        context = AppContext(
            session_scope=database.session,
            readiness=readiness,
            leadership=lambda: readiness.leadership,
            tokens=http.tokens,
            metrics_open=http.metrics_open,
        )
        app = create_app(context, simulation=config.simulation)
        base = f"http://{http.host}:{http.port}"
        log.info(
            "dashboard: %s/  (API %s/api/v1, docs %s/docs, ready %s/readyz)", base, base, base, base
        )
        server = _Server(
            uvicorn.Config(app, host=http.host, port=http.port, log_level="info"), listener
        )
        asyncio.run(
            _serve(
                [server],
                database,
                config,
                loop=not args.no_loop,
                demo=args.demo,
                readiness=readiness,
                context=context,
            )
        )
    finally:
        listener.close()
        database.close()
        log.info(
            "ledger closed%s",
            "; embedded PostgreSQL stopped" if config.database.url is None else "",
        )
    return 0


def share_the_interpreter() -> None:
    """Let API requests in between the loop's steps promptly: the loop runs its cycles in a
    thread of this process, beside the threads that answer requests."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    log.info("the loop shares the interpreter with the API: switch interval %.1f ms",
             SWITCH_INTERVAL * 1000)


def admission_loop(
    sessions: SessionScope, actuator: Actuator, config: settings.Settings
) -> AdmissionLoop:
    """The loop ``berth serve`` runs: fair sharing, and the crash tests' hook, as set."""
    return AdmissionLoop(
        sessions,
        actuator,
        fairness=config.fair_sharing.fairness(),
        pods_ready=config.pods_ready,
        crash=config.loop.crash_hook(),
    )


def runner_config(
    loop: settings.LoopSettings,
    *,
    holder: str,
    on_cycle: Callable[[float, int], None] | None = None,
) -> RunnerConfig:
    """The runner's pace and retries from the settings' ``loop`` section."""
    return RunnerConfig(
        holder=holder,
        interval=loop.interval,
        leader_poll=loop.leader_poll,
        reconcile_every=loop.reconcile_seconds,
        backoff_first=loop.backoff_first,
        backoff_max=loop.backoff_max,
        on_cycle=on_cycle,
    )


def kube_settings(config: settings.Settings, **knobs: Any) -> KubeSettings:
    """Kubernetes mode's settings from the tree; ``knobs`` are the fields of
    ``KubeSettings`` that are not settings (the tests turn them down)."""
    from admission.kube.runtime import KubeSettings

    kube = config.kube
    return KubeSettings(
        kubeconfig=kube.kubeconfig,
        context=kube.context,
        identity=kube.identity,
        lease_namespace=kube.lease_namespace,
        lease_name=kube.lease_name,
        # leaseDurationSeconds is whole seconds
        lease_seconds=max(1, math.ceil(config.loop.lease_seconds)),
        taint_nodes=kube.taint_nodes,
        health=config.health.thresholds,
        device_error_exit_codes=config.health.device_error_exit_codes,
        pods_ready=config.pods_ready.enable,
        **knobs,
    )


async def _serve(
    servers: list[uvicorn.Server],
    database: Database,
    config: settings.Settings,
    *,
    loop: bool,
    demo: bool = False,
    readiness: ReadinessCheck | None = None,
    context: AppContext | None = None,
) -> None:
    stop = asyncio.Event()
    runner: asyncio.Task[None] | None = None
    # The demo plays the users (jobs arriving and finishing); the loop still admits them.
    demo_task = asyncio.create_task(run_demo(database.session, stop)) if demo else None
    kubeconfig = config.kube.kubeconfig
    cluster = await _start_kubernetes(database, config) if kube_mode(kubeconfig) else None
    try:
        servers = [*servers, *await _https_servers(config, context, cluster)]
    except BaseException:  # the front-proxy ConfigMap unreadable: stop what started
        if cluster is not None:
            await cluster.stop()
        raise
    if loop:
        holder = f"{socket.gethostname()}:{os.getpid()}"
        actuator: Actuator = cluster.actuator if cluster is not None else StandaloneActuator()
        leadership: Leadership = (
            cluster.leadership()
            if cluster is not None
            else LedgerLease(
                database.url,
                identity=holder,
                duration_seconds=config.loop.lease_seconds,
            )
        )
        if readiness is not None:
            readiness.leadership = leadership
        admission = admission_loop(database.session, actuator, config)
        share_the_interpreter()
        runner = asyncio.create_task(
            run_while_leading(
                admission,
                leadership,
                lambda: ChangeListener(database.url, config.database.connection),
                runner_config(config.loop, holder=holder, on_cycle=observe_cycle),
                stop,
            )
        )
        log.info(
            "admission loop enabled: runs while this replica (%s) holds the leader lease", holder
        )
    else:
        log.info("admission loop disabled (--no-loop): serving the API only")
    try:
        with _stopping_on_signals(servers):
            await asyncio.gather(*(server.serve() for server in servers))
    finally:
        stop.set()
        if runner is not None:
            try:
                await asyncio.wait_for(runner, STOP_TIMEOUT)
            except TimeoutError:
                log.warning("the admission loop did not stop within %.0fs", STOP_TIMEOUT)
        if demo_task is not None:
            await asyncio.wait_for(demo_task, STOP_TIMEOUT)
        if cluster is not None:
            await cluster.stop()


def kube_mode(kubeconfig: str | None) -> bool:
    """Kubernetes mode: a kubeconfig given, or running inside a pod."""
    from admission.kube.mode import enabled

    return enabled(kubeconfig)


async def _start_kubernetes(database: Database, config: settings.Settings) -> KubeRuntime:
    from admission.kube.runtime import start_kubernetes

    # The ledger's triggers NOTIFY the loop of every workload change, so the watchers need
    # no wake-up call of their own.
    runtime = await start_kubernetes(kube_settings(config), database.session, _noop)
    log.info("Kubernetes mode: leadership by Lease, Jobs suspended and unsuspended by Berth")
    return runtime


def _noop() -> None:
    return None


async def _https_servers(
    config: settings.Settings, context: AppContext | None, cluster: KubeRuntime | None
) -> list[uvicorn.Server]:
    """The HTTPS listener, when the webhook's certificates are given: the mutating webhook
    (the API server calls it without a bearer token) and, with ``BERTH_AGGREGATED_API``,
    Kueue's visibility API for the aggregation layer (``api.aggregated``)."""
    webhook = config.webhook
    certs = check_certificates(webhook)
    if certs is None:
        return []
    log.info("admission webhook on https://0.0.0.0:%d/mutate/batch/v1/jobs", webhook.port)
    app, client_ca = create_webhook_app(), None
    if webhook.aggregated_api:
        if context is None or cluster is None:  # check_aggregated_api refused this at start
            raise RuntimeError("the aggregated API needs the app context and Kubernetes mode")
        from admission.kube.access_review import SubjectAccessReviewer
        from admission.kube.front_proxy import read_front_proxy

        front_proxy = await read_front_proxy(cluster.kube)
        aggregation = Aggregation(front_proxy, SubjectAccessReviewer(cluster.kube))
        app, client_ca = create_webhook_app(context, aggregation), front_proxy.client_ca
        log.info("Kueue's visibility API for the aggregation layer on https://0.0.0.0:%d/apis/"
                 "visibility.kueue.x-k8s.io (front-proxy CNs: %s)", webhook.port,
                 ", ".join(sorted(front_proxy.allowed_names)) or "any the CA signed")
    https = HttpsConfig(
        app,
        certs=certs,
        client_ca=client_ca,
        host="0.0.0.0",  # the API server calls the webhook from outside the pod
        port=webhook.port,
        log_level="info",
    )
    return [_Server(https)]


def check_aggregated_api(config: settings.Settings) -> None:
    """``BERTH_AGGREGATED_API`` needs a cluster: its front proxy and its authorizer."""
    if config.webhook.aggregated_api and not kube_mode(config.kube.kubeconfig):
        raise SettingsError(
            "BERTH_AGGREGATED_API: the aggregated API needs Kubernetes mode (run in a pod, "
            "or give --kubeconfig / BERTH_KUBECONFIG): the cluster's front-proxy CA and "
            "SubjectAccessReviews authenticate and authorize its callers",
            field="BERTH_AGGREGATED_API",
        )


def listen(host: str, port: int) -> socket.socket:
    """The API's listening socket, bound now; a port that cannot be had is a setting error
    naming it and how to choose another (for the server and for the commands)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: accepted connections inherit it, and asyncio sets TCP_NODELAY only
    # on sockets that say they are TCP. Without it every keep-alive request after the first
    # waits ~40 ms (Nagle against the client's delayed ACK).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        raise SettingsError(
            f"cannot listen on {host}:{port}: {error.strerror or error} (another Berth, "
            "perhaps another user's, or another program has it); start this one on a free "
            "port with --port P (or BERTH_PORT) and point the commands at it with "
            "--server http://127.0.0.1:P (or BERTH_SERVER)",
            field="BERTH_PORT",
        ) from error
    return sock


class _Server(uvicorn.Server):
    """uvicorn would take over SIGINT/SIGTERM per server and re-raise them after serving;
    here several servers, the loop and the ledger must all close, so ``_stopping_on_signals``
    handles the signals once for all of them. ``listener``, when given, is the socket
    already bound for it (``listen``)."""

    def __init__(self, config: uvicorn.Config, listener: socket.socket | None = None) -> None:
        super().__init__(config)
        self.listener = listener

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        await super().serve(sockets or ([self.listener] if self.listener else None))

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.contextmanager
def _stopping_on_signals(servers: list[uvicorn.Server]) -> Iterator[None]:
    """SIGINT/SIGTERM ask every server to stop; the caller then closes the rest in order."""

    def stop_all(sig: int, frame: object) -> None:
        for server in servers:
            server.handle_exit(sig, None)

    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.signal(sig, stop_all) for sig in handled}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
