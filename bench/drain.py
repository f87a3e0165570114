"""Benchmark the durable loop draining a backlog: pending workloads, then quota opens at once.

Run: ``python bench/drain.py [--workloads 20000] [--queues 200] [--database-url URL]``
(without a URL it starts an embedded PostgreSQL in a temporary folder). Prints durable
admissions per second through the full loop (refresh, engine, one transaction, actuation)
and, as the floor, the same rows written by a bare psycopg loop over the same backlog.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import sqlalchemy as sa
from sqlalchemy.orm import sessionmaker

from admission.actuation import StandaloneActuator
from admission.loop import AdmissionLoop
from berth import migrate
from berth.database import ensure_database
from quota.apply import apply_objects, parse_texts
from quota.ledger import Ledger
from quota.ledger_notify import libpq_url
from quota.ledger_workloads import WORKLOADS, workload_row
from quota.workload import PodSet, Workload

GPU = "nvidia.com/gpu"
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _objects(queues: int, per_queue_gpus: int, *, with_quota: bool) -> str:
    docs = ["apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n"]
    for i in range(queues):
        name = f"cq-{i:03d}"
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
            f"metadata: {{name: main, namespace: ns-{i:03d}}}\nspec: {{clusterQueue: {name}}}\n"
        )
        if with_quota:
            docs.append(
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                f"metadata: {{name: {name}}}\n"
                "spec:\n  namespaceSelector: {}\n  resourceGroups:\n"
                f"    - coveredResources: [cpu, {GPU}]\n      flavors:\n        - name: gpu\n"
                "          resources:\n"
                f"            - {{name: cpu, nominalQuota: {per_queue_gpus * 8}}}\n"
                f"            - {{name: {GPU}, nominalQuota: {per_queue_gpus}}}\n"
            )
    return "---\n".join(docs)


def _workloads(count: int, queues: int) -> list[Workload]:
    pod_set = PodSet("main", 1, {"cpu": 4000, GPU: 1000})
    return [
        Workload(f"ns-{j % queues:03d}", f"job-{j:05d}", "main", (pod_set,),
                 created_at=T0 + timedelta(milliseconds=j))
        for j in range(count)
    ]  # fmt: skip


def _apply(sessions: sessionmaker[sa.orm.Session], text: str) -> None:
    with sessions.begin() as session:
        apply_objects(Ledger(session), parse_texts([("bench", text)]), actor="bench")


def _insert(sessions: sessionmaker[sa.orm.Session], workloads: Sequence[Workload]) -> None:
    with sessions.begin() as session:
        session.execute(sa.insert(WORKLOADS), [workload_row(w) for w in workloads])


async def _loop_drain(url: str, workloads: int, queues: int) -> tuple[float, int]:
    engine = sa.create_engine(url)
    sessions = sessionmaker(engine, expire_on_commit=False)
    per_queue = -(-workloads // queues)
    _apply(sessions, _objects(queues, per_queue, with_quota=False))
    _insert(sessions, _workloads(workloads, queues))
    loop = AdmissionLoop(sessions.begin, StandaloneActuator())
    await loop.begin()
    await loop.cycle()  # every workload now waits with a reason (its queue has no quota)
    _apply(sessions, _objects(queues, per_queue, with_quota=True))
    start = time.perf_counter()
    cycles = admitted = 0
    while admitted < workloads:
        summary = await loop.cycle()
        admitted += summary.admitted
        cycles += 1
        if cycles > 1000:
            raise RuntimeError(f"only {admitted} of {workloads} admitted after 1000 cycles")
    elapsed = time.perf_counter() - start
    engine.dispose()
    return elapsed, cycles


def _floor(url: str, workloads: int, queues: int) -> float:
    """The same rows (admission, usage intervals, events, audit, timeline closed) written by
    plain executemany in one transaction: no snapshot, no engine, no version checks."""
    engine = sa.create_engine(url)
    sessions = sessionmaker(engine, expire_on_commit=False)
    _insert(sessions, _workloads(workloads, queues))
    engine.dispose()
    with psycopg.connect(libpq_url(url)) as connection:
        with connection.transaction():  # as the loop finds them: each waiting, with a reason
            connection.execute(
                "INSERT INTO wait_reasons (workload_id, code, message, details, since) "
                "SELECT id, 'Misconfigured', 'no quota yet', '{}'::jsonb, now() FROM workloads"
            )
        rows = connection.execute(
            "SELECT id, version, namespace, name FROM workloads ORDER BY id"
        ).fetchall()
        start = time.perf_counter()
        now = datetime.now(UTC)
        with connection.transaction(), connection.cursor() as cursor:
            admissions = []
            for wid, version, namespace, _name in rows:
                cq = f"cq-{namespace[3:]}"
                admission = {"clusterQueue": cq, "podSetAssignments": [
                    {"name": "main", "count": 1, "flavors": {"cpu": "gpu", GPU: "gpu"},
                     "usage": {"cpu": 4000, GPU: 1000}}]}  # fmt: skip
                admissions.append((wid, version, cq, json.dumps(admission)))
            cursor.executemany(
                "UPDATE workloads SET state = 'Admitted', admission = %s::jsonb, "
                "cluster_queue = %s, admitted_at = %s, reason_code = NULL, "
                "reasons = '[]'::jsonb, hints = '[]'::jsonb, queue_position = NULL, "
                "evaluated_at = %s, version = version + 1 WHERE id = %s AND version = %s",
                [(a, cq, now, now, wid, v) for wid, v, cq, a in admissions],
            )
            cursor.executemany(
                "UPDATE wait_reasons SET until = %s WHERE workload_id = %s AND until IS NULL",
                [(now, wid) for wid, *_ in admissions],
            )
            cursor.executemany(
                "INSERT INTO usage_intervals (workload_id, cluster_queue, flavor, resource, "
                "amount, started_at) VALUES (%s, %s, 'gpu', %s, %s, %s)",
                [(wid, cq, r, amount, now) for wid, _, cq, _ in admissions
                 for r, amount in (("cpu", 4000), (GPU, 1000))],
            )  # fmt: skip
            cursor.executemany(
                "INSERT INTO workload_events (workload_id, at, type, details) "
                "VALUES (%s, %s, 'Admitted', '{}'::jsonb)",
                [(wid, now) for wid, *_ in admissions],
            )
            cursor.executemany(
                "INSERT INTO audit_log (actor, action, kind, namespace, name, before, after) "
                "VALUES ('bench', 'update', 'Workload', %s, %s, '{}'::jsonb, %s::jsonb)",
                [(ns, name, a) for (_, _, ns, name), (_, _, _, a) in zip(rows, admissions,
                                                                         strict=True)],
            )  # fmt: skip
        return time.perf_counter() - start


@contextmanager
def _server(url: str | None) -> Iterator[str]:
    if url:
        yield url
        return
    from berth.embedded import EmbeddedPostgres

    home = Path(tempfile.mkdtemp(prefix="berth-drain-"))
    home.chmod(0o755)
    server = EmbeddedPostgres(home)
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(home, ignore_errors=True)


def _fresh(admin_url: str, name: str) -> str:
    admin = sa.create_engine(
        sa.make_url(admin_url).set(database="postgres"), isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as connection:
        connection.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()
    ensure_database(sa.make_url(admin_url).set(database="postgres").render_as_string(False), name)
    url = sa.make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    migrate.upgrade(url)
    return url


def run(workloads: int, queues: int, database_url: str | None) -> dict[str, float]:
    """Both figures, in admissions per second, and their ratio."""
    with _server(database_url) as admin_url:
        loop_seconds, cycles = asyncio.run(
            _loop_drain(_fresh(admin_url, "berth_drain_loop"), workloads, queues)
        )
        floor_seconds = _floor(_fresh(admin_url, "berth_drain_floor"), workloads, queues)
    loop_rate, floor_rate = workloads / loop_seconds, workloads / floor_seconds
    return {
        "workloads": workloads,
        "queues": queues,
        "cycles": cycles,
        "loop_seconds": loop_seconds,
        "loop_per_second": loop_rate,
        "floor_seconds": floor_seconds,
        "floor_per_second": floor_rate,
        "ratio": loop_rate / floor_rate,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workloads", type=int, default=20_000)
    parser.add_argument("--queues", type=int, default=200)
    parser.add_argument("--database-url", help="a PostgreSQL server to use (admin rights)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    figures = run(args.workloads, args.queues, args.database_url)
    print(
        f"workloads={figures['workloads']:.0f} queues={figures['queues']:.0f} "
        f"cycles={figures['cycles']:.0f}"
    )
    print(
        f"loop : {figures['loop_per_second']:>9,.0f} durable admissions/s "
        f"({figures['loop_seconds']:.2f} s)"
    )
    print(
        f"floor: {figures['floor_per_second']:>9,.0f} admissions/s, bare psycopg "
        f"({figures['floor_seconds']:.2f} s)"
    )
    print(f"ratio: {figures['ratio']:.2f} of the floor")
    return 0


if __name__ == "__main__":
    sys.exit(main())
