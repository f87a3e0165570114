"""``berth serve``: open the ledger, migrate, serve the API and (on the leader) run the loop.

uvicorn and the admission loop share one asyncio event loop. Every replica serves the API;
only the one holding the leader lock runs admission cycles (``--no-loop``: API only).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import uvicorn

from admission.loop.actuation import Actuator, StandaloneActuator
from admission.loop.leader import Leadership, LedgerLease
from admission.loop.loop import AdmissionLoop
from admission.loop.runner import RunnerConfig, run_while_leading
from api.app import create_app, create_webhook_app
from api.auth import check_bind, is_loopback, tokens_from_env
from api.deps import AppContext
from api.metrics import observe_cycle
from berth import settings
from berth.database import Database
from berth.demo.stream import run_demo
from berth.readiness import ReadinessCheck
from quota.core.errors import BerthError
from quota.ledger.notify import ChangeListener

if TYPE_CHECKING:
    from admission.kube.runtime import KubeRuntime

log = logging.getLogger("berth")
STOP_TIMEOUT = 10.0  # seconds the loop gets to finish its cycle on shutdown
WEBHOOK_PORT = 8443


def run(args: argparse.Namespace) -> int:
    config = settings.load(
        database_url=args.database_url, home=args.home, host=args.host, port=args.port
    )
    try:
        tokens = tokens_from_env()
    except ValueError as exc:
        raise BerthError(f"BERTH_TOKENS: {exc}", field="BERTH_TOKENS") from exc
    warning = check_bind(config.host, tokens)
    if warning and not is_loopback(config.host):
        raise BerthError(warning, field="--host")
    if warning:
        log.warning("%s", warning)
    database = Database(config)
    database.open()
    try:
        log.info("ledger: %s (migrations at head)", database.description)
        readiness = ReadinessCheck(database)
        context = AppContext(
            session_scope=database.session,
            readiness=readiness,
            tokens=tokens,
            metrics_open=config.metrics_open,
        )
        app = create_app(context, simulation=config.simulation)
        base = f"http://{config.host}:{config.port}"
        log.info(
            "dashboard: %s/  (API %s/api/v1, docs %s/docs, ready %s/readyz)", base, base, base, base
        )
        server = _Server(uvicorn.Config(app, host=config.host, port=config.port, log_level="info"))
        servers = [server, *_webhook_server(args)]
        asyncio.run(
            _serve(
                servers,
                database,
                loop=not getattr(args, "no_loop", False),
                interval=getattr(args, "loop_interval", None) or 1.0,
                kubeconfig=getattr(args, "kubeconfig", None),
                demo=getattr(args, "demo", False),
                config=config,
                readiness=readiness,
            )
        )
    finally:
        database.close()
        log.info(
            "ledger closed%s",
            "; embedded PostgreSQL stopped" if config.database_url is None else "",
        )
    return 0


async def _serve(
    servers: list[uvicorn.Server],
    database: Database,
    *,
    loop: bool,
    interval: float,
    kubeconfig: str | None,
    demo: bool = False,
    config: settings.Settings | None = None,
    readiness: ReadinessCheck | None = None,
) -> None:
    config = config or settings.load()
    stop = asyncio.Event()
    runner: asyncio.Task[None] | None = None
    # The demo plays the users (jobs arriving and finishing); the loop still admits them.
    demo_task = asyncio.create_task(run_demo(database.session, stop)) if demo else None
    cluster = (
        await _start_kubernetes(kubeconfig, database, config) if kube_mode(kubeconfig) else None
    )
    if loop:
        holder = f"{socket.gethostname()}:{os.getpid()}"
        actuator: Actuator = cluster.actuator if cluster is not None else StandaloneActuator()
        leadership: Leadership = (
            cluster.leadership()
            if cluster is not None
            else LedgerLease(
                database.url,
                identity=holder,
                duration_seconds=config.lease_seconds,
            )
        )
        if readiness is not None:
            readiness.leadership = leadership
        admission = AdmissionLoop(database.session, actuator)
        runner = asyncio.create_task(
            run_while_leading(
                admission,
                leadership,
                lambda: ChangeListener(database.url, config.connection),
                RunnerConfig(holder=holder, interval=interval, on_cycle=observe_cycle),
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
    """Kubernetes mode: --kubeconfig given, or running inside a pod."""
    from admission.kube.mode import enabled

    return enabled(kubeconfig)


async def _start_kubernetes(
    kubeconfig: str | None, database: Database, config: settings.Settings | None = None
) -> KubeRuntime:
    from admission.kube.runtime import KubeSettings, start_kubernetes

    kube = KubeSettings(kubeconfig=kubeconfig)
    if config is not None:
        kube = replace(
            kube, health=config.health, device_error_exit_codes=config.device_error_exit_codes
        )
    # The ledger's triggers NOTIFY the loop of every workload change, so the watchers need
    # no wake-up call of their own.
    runtime = await start_kubernetes(kube, database.session, _noop)
    log.info("Kubernetes mode: leadership by Lease, Jobs suspended and unsuspended by Berth")
    return runtime


def _noop() -> None:
    return None


def _webhook_server(args: argparse.Namespace) -> list[uvicorn.Server]:
    """The mutating webhook needs HTTPS: a second listener when certificates are given. It
    serves the webhook alone (the API server calls it without a bearer token)."""
    cert_dir = getattr(args, "webhook_cert_dir", None) or os.environ.get("BERTH_WEBHOOK_CERT_DIR")
    if not cert_dir:
        return []
    port = getattr(args, "webhook_port", None) or int(
        os.environ.get("BERTH_WEBHOOK_PORT") or WEBHOOK_PORT
    )
    certs = Path(cert_dir)
    for name in ("tls.crt", "tls.key"):
        if not (certs / name).is_file():
            raise BerthError(f"webhook certificate {certs / name} does not exist", field=name)
    log.info("admission webhook on https://0.0.0.0:%d/mutate/batch/v1/jobs", port)
    config = uvicorn.Config(
        create_webhook_app(),
        host="0.0.0.0",  # the API server calls the webhook from outside the pod
        port=port,
        ssl_certfile=str(certs / "tls.crt"),
        ssl_keyfile=str(certs / "tls.key"),
        log_level="info",
    )
    return [_Server(config)]


class _Server(uvicorn.Server):
    """uvicorn would take over SIGINT/SIGTERM per server and re-raise them after serving;
    here several servers, the loop and the ledger must all close, so ``_stopping_on_signals``
    handles the signals once for all of them."""

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
