"""The read-API benchmark runs end to end at a tiny scale: a real ``berth serve`` per mode,
the loop admitting what the churn process finishes. Behaviour only, never timings."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import psycopg
from builders.serve_process import ServeProcess

from berth.serve import SWITCH_INTERVAL
from quota.ledger.connect import libpq_url

WORKLOADS, QUEUES, PER_QUEUE, REQUESTS = 600, 3, 10, 40
ROW = re.compile(r"^(GET one (?:workload|ClusterQueue)) \[(\d) thr, (alone|loop)\]\s+n=\s*(\d+)")
LOOP = re.compile(r"the loop meanwhile: (\d+) cycles, mean \d+ ms, (\d+) decisions")
TARGET = re.compile(r"target p99 <= 20 ms with 4 clients and the loop running -> (PASS|MISS)$")


def test_both_modes_report_every_row_and_the_loop_admits_what_the_churn_finishes(
    empty_db_url: str,
) -> None:
    command = [
        sys.executable, "-m", "berth.bench.api_load", "--database-url", empty_db_url,
        "--workloads", str(WORKLOADS), "--queues", str(QUEUES),
        "--admitted-per-queue", str(PER_QUEUE), "--requests", str(REQUESTS),
        "--threads", "1", "4", "--churn", "100",
    ]  # fmt: skip

    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)

    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    rows = [match.groups() for line in lines if (match := ROW.match(line))]
    assert sorted(rows) == sorted(
        (label, threads, mode, str(REQUESTS))
        for label in ("GET one workload", "GET one ClusterQueue")
        for threads in ("1", "4")
        for mode in ("alone", "loop")
    )
    loops = [match.groups() for line in lines if (match := LOOP.search(line))]
    assert len(loops) == 4  # one after every row of the loop mode
    assert sum(int(decisions) for _, decisions in loops) > 0
    assert len([line for line in lines if TARGET.search(line)]) == 2  # both reads, 4 clients
    with psycopg.connect(libpq_url(empty_db_url)) as conn:
        finished = conn.execute(
            "SELECT count(*) FROM audit_log WHERE actor = 'api-load churn'"
        ).fetchone()
        admitted_by_loop = conn.execute(
            "SELECT count(*) FROM workloads WHERE state <> 'Pending' AND admitted_at > now() "
            "- interval '1 hour'"
        ).fetchone()
    assert finished is not None and finished[0] > 0
    assert admitted_by_loop is not None and admitted_by_loop[0] > 0


def test_berth_serve_with_its_loop_hands_the_interpreter_to_requests_sooner(
    db_url: str, tmp_path: Path
) -> None:
    """The loop's cycles run in a thread beside the API's: ``berth serve`` shortens how long
    one may keep the interpreter while the other waits, and says so."""
    server = ServeProcess(db_url, tmp_path / "serve.log")
    try:
        server.start()
        assert server.client.get("/readyz").status_code == 200
    finally:
        server.stop()
    assert sys.getswitchinterval() > SWITCH_INTERVAL  # shorter than Python's own
    assert f"switch interval {SWITCH_INTERVAL * 1000:.1f} ms" in server.output()
