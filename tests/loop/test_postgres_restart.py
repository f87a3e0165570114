"""PostgreSQL restarted under a running ``berth serve``: ``/readyz`` is 503 while it is down,
``/healthz`` stays 200, the loop reconnects by itself and admits again, nothing is lost.

Behaviour only, never timings: every wait is a liveness bound (``LIVENESS``) that fails
only when the thing never happens; how fast the loop recovers is for benchmarks to say."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from builders.invariants import violations
from builders.load import Load
from builders.loop import Ledgered, pool
from builders.manifests import job
from builders.serve_process import ServeProcess, wait_for
from sqlalchemy.orm import sessionmaker

from berth import migrate
from berth.database import ensure_database
from berth.embedded import EmbeddedPostgres

NOMINAL = {"team-a": 6000, "team-b": 4000, "team-c": 2000}
LIVENESS = 60.0  # seconds: generous, only a hang reaches it
DATABASE = "berth_restart"
_RETRY = re.compile(r"ledger database unavailable .*?; retrying in ([0-9.]+)s", re.S)


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


def _rows(ledger: Ledgered) -> dict[str, dict[str, Any]]:
    found = ledger.rows("SELECT namespace, name, state, admission FROM workloads")
    return {f"{r['namespace']}/{r['name']}": r for r in found}


def _retries(server: ServeProcess) -> list[float]:
    """The delays the loop logged before each reconnect attempt, in order."""
    return [float(d) for d in _RETRY.findall(server.output())]


def _never_evaluated(ledger: Ledgered) -> list[dict[str, Any]]:
    return ledger.rows(
        "SELECT name FROM workloads WHERE state = 'Pending' AND reason_code = 'PendingEvaluation'"
    )


def test_the_loop_survives_a_postgres_restart_and_loses_nothing(
    postgres: RestartablePostgres, ledger: Ledgered, tmp_path: Path
) -> None:
    server = ServeProcess(postgres.url, tmp_path / "serve.log")
    server.start()
    load = Load(server)
    worker = threading.Thread(target=load.run, daemon=True)
    readiness_while_down: list[int | None] = []
    health_while_down: list[int | None] = []
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
            LIVENESS,
            "the loop admits under load",
        )

        before = _rows(ledger)
        url_before = postgres.url
        refused_before = len(load.refused)
        postgres.stop()
        wait_for(lambda: server.status("/readyz") == 503, LIVENESS, "/readyz says 503")

        def outage_seen() -> bool:
            # Sampled on every poll while PostgreSQL stays down, until the load has been
            # refused and the loop has backed off twice: the outage lasts as long as it
            # takes to see that, not a fixed time.
            readiness_while_down.append(server.status("/readyz"))
            health_while_down.append(server.status("/healthz"))
            return len(load.refused) > refused_before and len(_retries(server)) >= 2

        wait_for(outage_seen, LIVENESS, "a refused submission and two backed-off retries")
        outage_submit = server.post("/api/v1/workloads", json=job("during", 1, namespace="team-c"))

        assert postgres.start() == url_before  # same socket folder: the server's URL still works
        wait_for(lambda: server.status("/readyz") == 200, LIVENESS, "/readyz says 200 again")
        fresh = server.post("/api/v1/workloads", json=job("fresh", 1, namespace="team-c"))
        assert fresh.status_code == 201, fresh.text
        wait_for(
            lambda: _rows(ledger)["team-c/fresh"]["state"] == "Admitted",
            LIVENESS,
            "the loop admits again after the restart",
        )
        submitted_after = len(load.submitted)
        wait_for(lambda: len(load.submitted) > submitted_after, LIVENESS, "the load goes on")
        load.halt.set()
        worker.join(LIVENESS)
        assert not worker.is_alive(), "the load did not stop"
        # Whatever the load left pending, the loop evaluates (a few cycles at most).
        wait_for(lambda: not _never_evaluated(ledger), LIVENESS, "every workload evaluated")
    finally:
        load.halt.set()
        if worker.is_alive():
            worker.join(10)
        server.stop()

    assert readiness_while_down and set(readiness_while_down) == {503}
    assert set(health_while_down) == {200}
    assert outage_submit.status_code == 503, outage_submit.text
    assert outage_submit.json()["error"]["code"] == "DatabaseUnavailable"
    assert server.process is not None and server.process.returncode == 0  # clean SIGTERM exit
    # The loop backed off, waiting longer after each failed reconnect, then resumed.
    delays = _retries(server)
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
