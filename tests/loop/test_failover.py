"""A failover under a running ``berth serve``: a primary and a synchronous streaming standby
(two PostgreSQL servers from this machine's binaries), Berth on libpq's two-host URL with
``target_session_attrs=read-write``. The primary is killed (SIGKILL, postmaster and
backends: a lost host) under load and the standby promoted; Berth finds the new primary by
itself, loses no decision it committed, and admits again.

Synchronous replication (``synchronous_standby_names``) is what makes "committed" mean "on
the standby too": the primary acknowledges a commit only once the standby has it, so every
submission answered 201 and every admission the loop logged survives the promotion."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from builders.load import Load
from builders.loop import pool
from builders.manifests import job
from builders.ports import free_port
from builders.serve_process import ServeProcess, wait_for

from berth import migrate
from berth.database import ensure_database

BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_basebackup"), reverse=True)),
           None)
LIVENESS = 30.0  # seconds: only a hang reaches it
DATABASE = "berth_failover"

pytestmark = pytest.mark.skipif(
    BIN is None or (shutil.which("runuser") is None and os.geteuid() == 0),
    reason="needs PostgreSQL's server binaries (/usr/lib/postgresql/<v>/bin: initdb, "
    "pg_ctl, pg_basebackup) and, as root, runuser to run them as 'postgres'",
)


class Server:
    """One PostgreSQL server in ``data`` on ``port``, run as a non-root user."""

    def __init__(self, root: Path, name: str) -> None:
        self.data = root / name
        self.log = root / f"{name}.log"
        self.port = free_port()
        self.sockets = root

    def run(self, tool: str, *args: str) -> None:
        assert BIN is not None
        command = [str(BIN.parent / tool), *args]
        if os.geteuid() == 0:  # PostgreSQL refuses root
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, f"{tool}: {done.stdout}{done.stderr}"

    def configure(self, **settings: str) -> None:
        with (self.data / "postgresql.auto.conf").open("a") as conf:
            conf.writelines(f"{key} = '{value}'\n" for key, value in settings.items())

    def start(self) -> None:
        self.run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "30", "start")

    def url(self, database: str = DATABASE) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def crash(self) -> None:
        """SIGKILL the postmaster and every backend: nothing is flushed or said goodbye."""
        pid = int((self.data / "postmaster.pid").read_text().split()[0])
        children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True,
                                  text=True, check=False).stdout.split()
        for victim in [pid, *map(int, children)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(victim, signal.SIGKILL)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")


def query(url: str, sql: str) -> list[dict[str, Any]]:
    engine = sa.create_engine(url, poolclass=sa.NullPool)
    try:
        with engine.connect() as connection:
            return [dict(r._mapping) for r in connection.execute(sa.text(sql))]
    finally:
        engine.dispose()


@pytest.fixture
def pair() -> Iterator[tuple[Server, Server]]:
    root = Path(tempfile.mkdtemp(prefix="berth-test-failover-"))
    os.chmod(root, 0o755)  # the server user must reach its folders and the socket directory
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    primary, standby = Server(root, "primary"), Server(root, "standby")
    try:
        primary.run("initdb", "-D", str(primary.data), "-U", "postgres", "--auth=trust",
                    "--no-sync")
        primary.configure(port=str(primary.port), listen_addresses="127.0.0.1",
                          unix_socket_directories=str(root), fsync="off")
        primary.start()
        ensure_database(primary.url("postgres"), DATABASE)
        primary.run("pg_basebackup", "-h", "127.0.0.1", "-p", str(primary.port), "-U",
                    "postgres", "-D", str(standby.data), "-R", "-X", "stream", "-c", "fast")
        # A short retry interval: the promotion does not wait out a reconnect attempt.
        standby.configure(port=str(standby.port), wal_retrieve_retry_interval="200ms",
                          primary_conninfo=(
            f"host=127.0.0.1 port={primary.port} user=postgres application_name=standby"))
        standby.start()
        # Synchronous only now: with no standby yet, every commit would wait for one.
        primary.configure(synchronous_standby_names="standby", synchronous_commit="on")
        primary.run("pg_ctl", "-D", str(primary.data), "reload")
        wait_for(lambda: query(primary.url("postgres"), "SELECT sync_state FROM "
                               "pg_stat_replication") == [{"sync_state": "sync"}],
                 LIVENESS, "the standby streams synchronously")
        yield primary, standby
    finally:
        for server in (primary, standby):
            with contextlib.suppress(AssertionError):
                server.stop()
        shutil.rmtree(root, ignore_errors=True)


def _rows(url: str) -> dict[str, dict[str, Any]]:
    found = query(url, "SELECT namespace, name, state, admission FROM workloads")
    return {f"{r['namespace']}/{r['name']}": r for r in found}


def test_berth_follows_a_promoted_standby_and_loses_no_committed_decision(
    pair: tuple[Server, Server], tmp_path: Path
) -> None:
    primary, standby = pair
    hosts = f"127.0.0.1:{primary.port},127.0.0.1:{standby.port}"
    url = f"postgresql://postgres@{hosts}/{DATABASE}?target_session_attrs=read-write"
    migrate.upgrade(primary.url())
    server = ServeProcess(url, tmp_path / "serve.log",
                          env={"BERTH_DB_CONNECT_TIMEOUT": "2", "BERTH_BACKOFF_MAX_SECONDS": "1"})
    server.start()
    load = Load(server)
    worker = threading.Thread(target=load.run, daemon=True)
    try:
        applied = server.post("/api/v1/apply", content=pool(("team-a", 6), ("team-b", 4)),
                              headers={"content-type": "application/yaml"})
        assert applied.status_code == 200, applied.text
        worker.start()
        wait_for(lambda: sum(r["state"] == "Admitted" for r in _rows(primary.url()).values())
                 >= 4, LIVENESS, "the loop admits under load")

        acknowledged = set(load.submitted)  # copied before the kill: all answered 201
        admitted = set(server.admitted())  # logged after their commit
        killed = time.monotonic()
        primary.crash()
        standby.run("pg_ctl", "-D", str(standby.data), "-w", "promote")
        promoted = time.monotonic() - killed
        fresh_status: list[int] = []

        def admits_fresh_work() -> bool:
            if not fresh_status:
                answer = server.post("/api/v1/workloads", json=job("fresh", 1, namespace="team-a"))
                if answer.status_code != 201:
                    return False
                fresh_status.append(answer.status_code)
            return bool(_rows(standby.url()).get("team-a/fresh", {}).get("state") == "Admitted")

        wait_for(admits_fresh_work, LIVENESS, "Berth admits again on the promoted standby")
        resumed = time.monotonic() - killed
        submitted_after = len(load.submitted)
        wait_for(lambda: len(load.submitted) > submitted_after, LIVENESS, "the load goes on")
    finally:
        load.halt.set()
        worker.join(10)
        server.stop()

    after = _rows(standby.url())
    lost = sorted(acknowledged - after.keys())
    assert not lost, f"acknowledged submissions lost in the failover: {lost}"
    undone = sorted(k for k in admitted if after[k]["state"] not in ("Admitted", "Finished"))
    assert not undone, f"admissions lost in the failover: {undone}"
    print(f"\nfailover: standby promoted {promoted:.2f}s after the primary was killed; Berth "
          f"admitted new work {resumed:.2f}s after the kill ({resumed - promoted:.2f}s after "
          "the promotion)")
