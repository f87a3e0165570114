"""Benchmark the read API on a large ledger: GET one workload and GET one ClusterQueue.

Run: ``python -m berth.bench.api_load [--database-url URL] [--workloads 100000]
[--queues 20] [--requests 3000] [--threads 1 4] [--churn 20] [--modes alone loop]
[--reuse]``. Without a URL the embedded PostgreSQL runs in a temporary folder, configured
as ``berth serve`` runs it; the database a URL names is dropped and recreated (``--reuse``:
kept as the last run seeded it, migrated to head). It seeds the workloads by COPY (half pending
with verdicts and timeline rows, a few thousand admitted holding quota, the rest finished
with run history), then measures each mode in turn against a real ``berth serve`` child:
"alone" is ``berth serve --no-loop`` (the API only), "loop" is ``berth serve`` with its
admission loop running while a churn process finishes ``--churn`` admitted workloads a
second through the ledger, as a Job controller would, so every cycle admits. Each mode
warms up, then drives a bounded local load (a fixed number of requests each kind, at each
client thread count) and prints p50/p90/p99/max latency, and in loop mode the cycles the
loop ran meanwhile (count, mean, decisions). The load average and CPU count come first (on
a shared machine the figures mean little without them), and whether the server vacuums.
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import IO

import httpx
import psycopg
import sqlalchemy as sa
from sqlalchemy.orm import sessionmaker

from berth import migrate
from berth.bench import ledger
from berth.bench.report import machine
from quota.ledger.apply import apply_objects
from quota.ledger.connect import libpq_url
from quota.ledger.lifecycle import finish_locked
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts

GPU = "nvidia.com/gpu"
TARGET_P99_MS, TARGET_CLIENTS = 20, 4  # reads with the loop running: p99 at 4 clients
NOW = datetime.now(UTC)


def _objects(queues: int, gpus: int) -> str:
    docs = ["apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n"]
    for i in range(queues):
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
            f"metadata: {{name: cq-{i:02d}}}\nspec:\n  cohort: pool\n  namespaceSelector: {{}}\n"
            f"  resourceGroups:\n    - coveredResources: [{GPU}]\n      flavors:\n"
            f"        - name: h100\n          resources: [{{name: {GPU}, nominalQuota: {gpus}}}]\n"
        )
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
            f"metadata: {{name: main, namespace: ns-{i:02d}}}\nspec: {{clusterQueue: cq-{i:02d}}}\n"
        )
    return "---\n".join(docs)


def _pod_sets(gpus: int) -> str:
    return json.dumps(
        [
            {
                "name": "main",
                "count": 1,
                "minCount": None,
                "requests": {GPU: gpus * 1000},
                "nodeSelector": {},
                "affinityTerms": [],
                "tolerations": [],
                "annotations": {},
            }
        ]
    )


def _reason(cq: str, gpus: int) -> dict[str, object]:
    return {
        "code": "WaitingForQuota",
        "message": f"insufficient unused quota for {GPU} in flavor h100 of ClusterQueue {cq}: "
        f"{gpus} requested, 0 available, {gpus} more needed",
        "details": {
            "flavor": "h100",
            "resource": GPU,
            "requested": str(gpus),
            "available": "0",
            "shortfall": str(gpus),
        },
    }


# The columns seeded by COPY, in order.
_COLUMNS = (
    "namespace", "name", "kind", "queue_name", "cluster_queue", "priority", "pod_sets", "state",
    "active", "admission", "created_at", "admitted_at", "finished_at", "eviction_count",
    "labels", "annotations", "reason_code", "reasons", "hints", "queue_position",
    "evaluated_at",
)  # fmt: skip


def _row(ns: str, name: str, state: str, created: datetime, **given: object) -> tuple[object, ...]:
    """A COPY row in ``_COLUMNS`` order: an active one-GPU Job of LocalQueue ``main`` with
    nothing else recorded, but for what is ``given``."""
    values: dict[str, object] = {
        "namespace": ns, "name": name, "kind": "Job", "queue_name": "main",
        "cluster_queue": None, "priority": 0, "pod_sets": _pod_sets(1), "state": state,
        "active": True, "admission": None, "created_at": created, "admitted_at": None,
        "finished_at": None, "eviction_count": 0, "labels": "{}", "annotations": "{}",
        "reason_code": None, "reasons": "[]", "hints": "[]", "queue_position": None,
        "evaluated_at": None, **given,
    }  # fmt: skip
    return tuple(values[column] for column in _COLUMNS)


def _admission(cq: str) -> str:
    assignment = {"name": "main", "count": 1, "flavors": {GPU: "h100"}, "usage": {GPU: 1000}}
    return json.dumps({"clusterQueue": cq, "podSetAssignments": [assignment]})


def seed(url: str, workloads: int, queues: int, admitted_per_queue: int) -> None:
    """The objects through the ledger, the workloads and their history by COPY."""
    engine = sa.create_engine(url)
    with sessionmaker(engine).begin() as session:
        apply_objects(
            Ledger(session),
            parse_texts([("bench", _objects(queues, admitted_per_queue))]),
            actor="bench",
        )
    engine.dispose()
    pending = workloads // 2
    admitted = admitted_per_queue * queues
    positions = [0] * queues
    rng = random.Random(7)
    with psycopg.connect(libpq_url(url)) as conn:
        copy_rows = f"COPY workloads ({', '.join(_COLUMNS)}) FROM STDIN"
        with conn.cursor() as cur, cur.copy(copy_rows) as copy:
            for j in range(workloads):
                q = j % queues
                cq, ns, name = f"cq-{q:02d}", f"ns-{q:02d}", f"job-{j:06d}"
                created = NOW - timedelta(hours=48) + timedelta(seconds=j)
                if j < pending:
                    positions[q] += 1
                    gpus = rng.choice((1, 2, 4, 8))
                    copy.write_row(
                        _row(ns, name, "Pending", created, pod_sets=_pod_sets(gpus),
                             reason_code="WaitingForQuota", reasons=json.dumps([_reason(cq, gpus)]),
                             queue_position=positions[q], evaluated_at=NOW)
                    )  # fmt: skip
                    continue
                started = created + timedelta(minutes=10)
                held = {"cluster_queue": cq, "admission": _admission(cq), "admitted_at": started,
                        "evaluated_at": started}  # fmt: skip
                if j < pending + admitted:
                    copy.write_row(_row(ns, name, "Admitted", created, **held))
                else:
                    ended = started + timedelta(minutes=rng.randint(20, 120))
                    copy.write_row(_row(ns, name, "Finished", created, finished_at=ended, **held))
        conn.execute("""
            INSERT INTO wait_reasons (workload_id, code, message, details, since, until)
            SELECT id, COALESCE(reason_code, 'WaitingForQuota'), '', '{}'::jsonb, created_at,
                   admitted_at FROM workloads""")
        conn.execute(
            """
            INSERT INTO usage_intervals
                (workload_id, cluster_queue, flavor, resource, amount, started_at, ended_at)
            SELECT id, cluster_queue, 'h100', %s, 1000, admitted_at, finished_at
            FROM workloads WHERE admitted_at IS NOT NULL""",
            (GPU,),
        )
        conn.execute("""
            INSERT INTO workload_events (workload_id, at, type, reason, details)
            SELECT id, admitted_at, 'Admitted', NULL,
                   jsonb_build_object('clusterQueue', cluster_queue)
            FROM workloads WHERE admitted_at IS NOT NULL
            UNION ALL
            SELECT id, finished_at, 'Finished', NULL, '{}'::jsonb
            FROM workloads WHERE finished_at IS NOT NULL""")
        conn.commit()
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")


def start_server(url: str, port: int, *, loop: bool, log: IO[bytes]) -> subprocess.Popen[bytes]:
    """``berth serve`` on ``port`` over the seeded ledger, as a user would run it: with its
    admission loop, or (``loop`` false) the API only."""
    command = [sys.executable, "-m", "berth", "serve", "--database-url", url, "--port", str(port)]
    return subprocess.Popen(
        [*command, *([] if loop else ["--no-loop"])], stdout=log, stderr=subprocess.STDOUT
    )


def churn(url: str, per_second: int) -> None:
    """Until terminated: finish ``per_second`` admitted workloads a second, the longest
    running first, through the ledger (``finish_locked``), as a Job controller reporting
    finished runs would; so the loop has quota to hand out in every cycle."""
    engine = sa.create_engine(url)
    sessions = sessionmaker(engine)
    batch = max(1, per_second // 10)
    while True:
        started = time.monotonic()
        with sessions.begin() as session:
            rows = session.execute(
                sa.text(
                    "SELECT id, namespace, name, state, version FROM workloads "
                    "WHERE state = 'Admitted' ORDER BY admitted_at LIMIT :n "
                    "FOR UPDATE SKIP LOCKED"
                ),
                {"n": batch},
            ).mappings().all()
            finish_locked(session, rows, now=datetime.now(UTC), actor="api-load churn")
        time.sleep(max(0.0, 0.1 - (time.monotonic() - started)))


def _cycles(base: str) -> tuple[float, float, float]:
    """The loop's cycle count, their summed seconds and decisions, from ``/metrics``."""
    text = httpx.get(f"{base}/metrics", timeout=30).text
    wanted = (
        "berth_admission_cycle_duration_seconds_count",
        "berth_admission_cycle_duration_seconds_sum",
        "berth_decisions_per_cycle_sum",
    )
    values = dict.fromkeys(wanted, 0.0)
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in values:
            values[name] = float(value)
    count, seconds, decisions = (values[name] for name in wanted)
    return count, seconds, decisions


def _drive(base: str, paths: Sequence[str], threads: int) -> list[float]:
    """Every path requested once, spread over ``threads`` clients; milliseconds each."""
    timings: list[float] = []
    lock = threading.Lock()

    def worker(mine: Sequence[str]) -> None:
        with httpx.Client(base_url=base, timeout=30) as client:
            local = []
            for path in mine:
                start = time.perf_counter()
                response = client.get(path)
                local.append((time.perf_counter() - start) * 1000)
                if response.status_code != 200:
                    raise RuntimeError(f"{path}: {response.status_code} {response.text[:200]}")
            with lock:
                timings.extend(local)

    workers = [threading.Thread(target=worker, args=(paths[i::threads],)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return timings


def _server(url: str) -> str:
    """Which PostgreSQL, and whether it vacuums: the loop rewrites waiting rows every cycle,
    and without autovacuum their dead versions pile up under every read."""
    with psycopg.connect(libpq_url(url)) as conn:
        version = conn.execute("SHOW server_version").fetchone()
        vacuum = conn.execute("SHOW autovacuum").fetchone()
    return f"PostgreSQL {version[0] if version else '?'}, autovacuum {vacuum[0] if vacuum else '?'}"


def _report(label: str, timings: list[float], seconds: float) -> float:
    """Print one row; its p99 in milliseconds."""
    ordered = sorted(timings)
    q = statistics.quantiles(ordered, n=100)
    print(
        f"{label:<36} n={len(ordered):>6}  p50={q[49]:6.2f} ms  p90={q[89]:6.2f} ms  "
        f"p99={q[98]:6.2f} ms  max={ordered[-1]:7.2f} ms  {len(ordered) / seconds:7.0f} req/s"
    )
    return q[98]


def _wait(base: str, server: subprocess.Popen[bytes], *, cycles: int) -> None:
    """Until the server answers and, with the loop, has run ``cycles`` cycles."""
    deadline = time.monotonic() + 300
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200 and (
                cycles == 0 or _cycles(base)[0] >= cycles
            ):
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise RuntimeError("berth serve did not start (or its loop ran no cycle)")
        time.sleep(0.2)


def measure(url: str, args: argparse.Namespace, mode: str) -> None:
    """One mode against its own ``berth serve``: every thread count, both endpoints."""
    loop = mode == "loop"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    extra: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryFile() as log:
        server = start_server(url, port, loop=loop, log=log)
        try:
            if loop:
                extra.append(subprocess.Popen(
                    [sys.executable, "-m", "berth.bench.api_load", "--database-url", url,
                     "--run-churn", str(args.churn)]
                ))  # fmt: skip
            _wait(base, server, cycles=3 if loop else 0)
            _measure(base, args, mode)
        except BaseException:
            log.seek(0)
            sys.stderr.write(log.read()[-4000:].decode(errors="replace"))
            raise
        finally:
            for process in (*extra, server):
                process.terminate()
                process.wait(timeout=30)


def _measure(base: str, args: argparse.Namespace, mode: str) -> None:
    rng = random.Random(11)
    pending = args.workloads // 2
    names = [
        f"/api/v1/workloads/ns-{j % args.queues:02d}/job-{j:06d}"
        for j in (rng.randrange(pending) for _ in range(args.requests))
    ]
    queues = [
        f"/api/v1/clusterqueues/cq-{rng.randrange(args.queues):02d}" for _ in range(args.requests)
    ]
    _drive(base, names[:200] + queues[:200], max(args.threads))  # warm-up: pools, caches
    print(f"{mode}: {machine()}")
    for threads in args.threads:
        for label, paths in (("GET one workload", names), ("GET one ClusterQueue", queues)):
            before = _cycles(base) if mode == "loop" else None
            start = time.perf_counter()
            timings = _drive(base, paths, threads)
            seconds = time.perf_counter() - start
            p99 = _report(f"{label} [{threads} thr, {mode}]", timings, seconds)
            if before is None:
                continue
            if threads == TARGET_CLIENTS:
                verdict = "PASS" if p99 <= TARGET_P99_MS else "MISS"
                print(f"{'':<4}target p99 <= {TARGET_P99_MS} ms with {TARGET_CLIENTS} clients "
                      f"and the loop running -> {verdict}")  # fmt: skip
            count, spent, decisions = (
                after - was for after, was in zip(_cycles(base), before, strict=True)
            )
            print(
                f"{'':<4}the loop meanwhile: {count:.0f} cycles, mean "
                f"{spent / max(count, 1) * 1000:.0f} ms, {decisions:.0f} decisions "
                f"({spent / seconds:.0%} of the time in cycles)"
            )
    print(f"{mode}, after: {machine()}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--database-url",
        help="the database to seed (dropped and recreated; default: the embedded PostgreSQL "
        "in a temporary folder, configured as berth serve configures it)",
    )
    parser.add_argument("--workloads", type=int, default=100_000)
    parser.add_argument("--queues", type=int, default=20)
    parser.add_argument("--admitted-per-queue", type=int, default=100)
    parser.add_argument("--requests", type=int, default=3000, help="per endpoint")
    parser.add_argument(
        "--threads", type=int, nargs="+", default=[1, 4], help="client thread counts to measure"
    )
    parser.add_argument(
        "--modes", nargs="+", choices=("alone", "loop"), default=["alone", "loop"],
        help="alone: berth serve --no-loop; loop: berth serve with its loop and churn",
    )  # fmt: skip
    parser.add_argument(
        "--churn", type=int, default=20, help="admitted workloads finished a second (loop mode)"
    )
    parser.add_argument("--reuse", action="store_true", help="keep the seeded database")
    parser.add_argument("--run-churn", type=int, metavar="PER_SECOND", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.run_churn:
        churn(args.database_url, args.run_churn)
        return 0
    if args.reuse and not args.database_url:
        parser.error("--reuse needs --database-url: the embedded server is temporary")
    with ledger.server(args.database_url) as server:
        if args.reuse:
            url = server
            migrate.upgrade(url)
            with psycopg.connect(libpq_url(url), autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE")
        else:
            named = sa.make_url(server).database if args.database_url else None
            url = ledger.fresh(server, named or "berth_api_load")
            started = time.perf_counter()
            seed(url, args.workloads, args.queues, args.admitted_per_queue)
            print(
                f"seeded {args.workloads} workloads ({args.workloads // 2} pending) in "
                f"{time.perf_counter() - started:.1f}s"
            )
        print(_server(url))
        for mode in args.modes:
            measure(url, args, mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
