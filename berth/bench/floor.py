"""The raw Postgres floor for ``drain``: the rows the loop writes, by a bare psycopg loop.

The same backlog, each workload waiting with an open timeline row; then one transaction
writes what admitting all of it writes (admission, usage intervals, event, audit row,
timeline closed) with plain ``executemany``: no snapshot, no engine, no version checks
beyond the row's own. What Postgres and the driver cost, the loop can only add to.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import psycopg
import sqlalchemy as sa
from sqlalchemy.orm import sessionmaker

from berth.bench.drain import GPU, insert_backlog
from berth.bench.shapes import DrainShape
from quota.ledger.connect import libpq_url


def floor_seconds(url: str, shape: DrainShape) -> float:
    """Seconds the bare loop takes to write every admission of ``shape``'s backlog."""
    engine = sa.create_engine(url)
    insert_backlog(sessionmaker(engine, expire_on_commit=False), shape)
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
                admission = {
                    "clusterQueue": cq,
                    "podSetAssignments": [
                        {
                            "name": "main",
                            "count": 1,
                            "flavors": {"cpu": "gpu", GPU: "gpu"},
                            "usage": {"cpu": 4000, GPU: 1000},
                        }
                    ],
                }
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
                [
                    (wid, cq, r, amount, now)
                    for wid, _, cq, _ in admissions
                    for r, amount in (("cpu", 4000), (GPU, 1000))
                ],
            )
            cursor.executemany(
                "INSERT INTO workload_events (workload_id, at, type, details) "
                "VALUES (%s, %s, 'Admitted', '{}'::jsonb)",
                [(wid, now) for wid, *_ in admissions],
            )
            cursor.executemany(
                "INSERT INTO audit_log (actor, action, kind, namespace, name, before, after) "
                "VALUES ('bench', 'update', 'Workload', %s, %s, '{}'::jsonb, %s::jsonb)",
                [
                    (ns, name, a)
                    for (_, _, ns, name), (_, _, _, a) in zip(rows, admissions, strict=True)
                ],
            )
        return time.perf_counter() - start
