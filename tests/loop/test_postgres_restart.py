"""PostgreSQL restarted under a running ``berth serve``: ``/readyz`` is 503 while it is down,
``/healthz`` stays 200, the loop reconnects by itself and admits again, nothing is lost."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from invariants import violations
from loop_builders import Ledgered, job, pool
from serve_process import ServeProcess, wait_for
from sqlalchemy.orm import sessionmaker

from berth import migrate
from berth.database import ensure_database
from berth.embedded import EmbeddedPostgres

NOMINAL = {"team-a": 6000, "team-b": 4000, "team-c": 2000}
OUTAGE = 3.0  # seconds PostgreSQL stays down
RECOVERY_BOUND = 15.0  # seconds from PostgreSQL back up to the loop admitting again
DATABASE = "berth_restart"


class RestartablePostgres:
    """A dedicated embedded PostgreSQL, stopped and started on the same data folder."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.server = EmbeddedPostgres(home)
        self.url = ""

    def start(self) -> str:
        """Start the server; the URL of the test database (created on first start)."""
        self.server = EmbeddedPostgres(self.home)
        admin = self.server.start()
        ensure_database(admin, DATABASE)
        self.url = self.server.url(DATABASE)
        return self.url

    def stop(self) -> None:
        """The wheel's ``pg_ctl -w stop`` as user pgserver (mode fast: sessions are cut)."""
        self.server.stop()
        assert not (self.server.pgdata / "postmaster.pid").exists(), "PostgreSQL still runs"


@pytest.fixture
def postgres() -> Iterator[RestartablePostgres]:
    # Not pytest's tmp_path: as root the server runs as 'pgserver', who cannot traverse
    # pytest's private (mode 700) folders; mkdtemp's 700 is opened to 755 for the same reason.
    home = Path(tempfile.mkdtemp(prefix="berth-test-pg-restart-"))
    os.chmod(home, 0o755)
    server = RestartablePostgres(home)
    try:
        server.start()
        migrate.upgrade(server.url)
        yield server
    finally:
        server.server.stop()
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def ledger(postgres: RestartablePostgres) -> Iterator[Ledgered]:
    # NullPool: every read opens a fresh connection, so none goes stale across the restart.
    engine = sa.create_engine(postgres.url, poolclass=sa.NullPool)
    try:
        yield Ledgered(postgres.url, sessionmaker(engine, expire_on_commit=False).begin)
    finally:
        engine.dispose()


@dataclass
class Load:
    """Submits workloads (and finishes some) over HTTP at a steady pace, from a thread."""

    server: ServeProcess
    count: int
    submitted: set[str] = field(default_factory=set)  # answered 201: must never be lost
    refused: list[int | None] = field(default_factory=list)  # statuses of the others
    halt: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        with httpx.Client(base_url=str(self.server.client.base_url), timeout=5) as client:
            for i in range(1, self.count + 1):
                if self.halt.is_set():
                    return
                team = "team-a" if i % 2 else "team-b"
                doc = job(f"w-{i}", 1 + i % 2, namespace=team)
                status = _status(client, "/api/v1/workloads", json=doc)
                if status == 201:
                    self.submitted.add(f"{team}/w-{i}")
                else:
                    self.refused.append(status)
                if i % 3 == 0 and f"{team}/w-{i - 2}" in self.submitted:
                    _status(client, f"/api/v1/workloads/{team}/w-{i - 2}/finish")
                time.sleep(0.1)


def _status(client: httpx.Client, path: str, **kwargs: Any) -> int | None:
    try:
        return client.post(path, **kwargs).status_code
    except httpx.HTTPError:
        return None


def _rows(ledger: Ledgered) -> dict[str, dict[str, Any]]:
    found = ledger.rows("SELECT namespace, name, state, admission FROM workloads")
    return {f"{r['namespace']}/{r['name']}": r for r in found}


def test_the_loop_survives_a_postgres_restart_and_loses_nothing(
    postgres: RestartablePostgres, ledger: Ledgered, tmp_path: Path
) -> None:
    server = ServeProcess(postgres.url, tmp_path / "serve.log")
    server.start()
    load = Load(server, count=60)
    worker = threading.Thread(target=load.run, daemon=True)
    try:
        applied = server.post(
            "/api/v1/apply",
            content=pool(("team-a", 6), ("team-b", 4), ("team-c", 2)),
            headers={"content-type": "application/yaml"},
        )
        assert applied.status_code == 200, applied.text
        worker.start()
        wait_for(
            lambda: sum(r["state"] == "Admitted" for r in _rows(ledger).values()) >= 4,
            10,
            "the loop admits under load",
        )

        before = _rows(ledger)
        url_before = postgres.url
        postgres.stop()
        stopped = time.monotonic()
        readyz_down = wait_for(lambda: server.status("/readyz") == 503, 5, "/readyz says 503")
        readiness_while_down, health_while_down = [], []
        while time.monotonic() - stopped < OUTAGE:
            readiness_while_down.append(server.status("/readyz"))
            health_while_down.append(server.status("/healthz"))
            time.sleep(0.2)
        outage_submit = server.post("/api/v1/workloads", json=job("during", 1, namespace="team-c"))

        starting = time.monotonic()
        assert postgres.start() == url_before  # same socket folder: the server's URL still works
        restarted = time.monotonic()
        ready_again = wait_for(lambda: server.status("/readyz") == 200, RECOVERY_BOUND, "ready")
        fresh = server.post("/api/v1/workloads", json=job("fresh", 1, namespace="team-c"))
        assert fresh.status_code == 201, fresh.text
        wait_for(
            lambda: _rows(ledger)["team-c/fresh"]["state"] == "Admitted",
            RECOVERY_BOUND,
            "the loop admits again after the restart",
        )
        admitting_again = time.monotonic() - restarted
        worker.join(30)
        assert not worker.is_alive(), "the load did not finish"
        time.sleep(1.0)  # a few cycles settle what the load left pending
        print(
            f"\n/readyz 503 {readyz_down:.2f}s after the stop; PostgreSQL down "
            f"{restarted - stopped:.2f}s (start took {restarted - starting:.2f}s); once it was up: "
            f"/readyz 200 in {ready_again:.2f}s, loop admitting in {admitting_again:.2f}s; "
            f"{len(load.submitted)} submitted, {len(load.refused)} refused while down"
        )
    finally:
        load.halt.set()
        if worker.is_alive():
            worker.join(10)
        server.stop()

    assert set(readiness_while_down) == {503}
    assert set(health_while_down) == {200}
    assert outage_submit.status_code == 503, outage_submit.text
    assert outage_submit.json()["error"]["code"] == "DatabaseUnavailable"
    assert load.refused, "no submission fell into the outage: the load did not overlap it"
    assert server.process is not None and server.process.returncode == 0  # clean SIGTERM exit
    # The loop backed off, waiting longer after each failed reconnect, then resumed.
    delays = [float(d) for d in re.findall(r"ledger database unavailable .*?; retrying in ([0-9.]+)s", server.output(), re.S)]
    assert len(delays) >= 2, server.output()
    assert delays[1] > delays[0], delays

    after = _rows(ledger)
    assert "team-c/during" not in after  # refused with 503: not half-written either
    for key, row in before.items():  # what was decided before the outage still stands
        assert key in after, f"{key} vanished"
        if row["state"] == "Finished":
            assert after[key]["state"] == "Finished", key
        if row["state"] == "Admitted":  # no preemption here: it runs on, or finished
            assert after[key]["state"] in ("Admitted", "Finished"), key
        if after[key]["state"] == row["state"] == "Admitted":
            assert after[key]["admission"] == row["admission"], key
    assert violations(ledger, NOMINAL, load.submitted | {"team-c/fresh"}) == []
    never_evaluated = ledger.rows(
        "SELECT name FROM workloads WHERE state = 'Pending' AND reason_code = 'PendingEvaluation'"
    )
    assert never_evaluated == []
