"""``drain``: a backlog waits in queues without quota; quota opens; the loop admits it all.

Durable admissions per second through the full loop (refresh, engine, one transaction,
actuation), cycle by cycle as fast as it goes; beside it the ideal (the engine alone on the
same backlog) and the floor (the same rows written by a bare psycopg loop, ``floor.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from admission.loop.actuation import StandaloneActuator
from admission.loop.loop import AdmissionLoop
from berth.bench.ledger import apply_text
from berth.bench.shapes import DrainShape
from quota.core.workload import PodSet, Workload
from quota.ledger.workloads import WORKLOADS, workload_row
from quota.manifests.documents import ManifestObject, parse_texts

GPU = "nvidia.com/gpu"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
MAX_CYCLES = 1000


@dataclass(frozen=True, slots=True)
class DrainRun:
    seconds: float
    admitted: int
    cycles: tuple[float, ...]


def backlog(shape: DrainShape) -> list[Workload]:
    """The waiting workloads: one pod of 4 cpu and 1 GPU each, spread over the queues."""
    pod_set = PodSet("main", 1, {"cpu": 4000, GPU: 1000})
    return [
        Workload(
            f"ns-{queue:03d}",
            f"job-{j:05d}",
            "main",
            (pod_set,),
            created_at=T0 + timedelta(milliseconds=j),
        )
        for j, queue in enumerate(shape.assignments())
    ]


def insert_backlog(sessions: sessionmaker[Session], shape: DrainShape) -> None:
    with sessions.begin() as session:
        session.execute(sa.insert(WORKLOADS), [workload_row(w) for w in backlog(shape)])


def objects(shape: DrainShape) -> list[ManifestObject]:
    """The queues with their quota, as parsed manifest objects (for the ideal)."""
    return list(parse_texts([("bench", shape.manifests(with_quota=True))]))


async def drain_loop(url: str, shape: DrainShape) -> DrainRun:
    """Every workload waits with a reason, quota opens, the loop admits the backlog."""
    engine = sa.create_engine(url)
    try:
        sessions = sessionmaker(engine, expire_on_commit=False)
        apply_text(sessions, shape.manifests(with_quota=False))
        insert_backlog(sessions, shape)
        loop = AdmissionLoop(sessions.begin, StandaloneActuator())
        await loop.begin()
        await loop.cycle()  # every workload now waits: its queue has no quota yet
        apply_text(sessions, shape.manifests(with_quota=True))
        start = time.perf_counter()
        cycles: list[float] = []
        admitted = 0
        while admitted < shape.workloads:
            summary = await loop.cycle()
            admitted += summary.admitted
            cycles.append(summary.seconds)
            if len(cycles) > MAX_CYCLES:
                raise RuntimeError(
                    f"only {admitted} of {shape.workloads} admitted after {MAX_CYCLES} cycles"
                )
        return DrainRun(time.perf_counter() - start, admitted, tuple(cycles))
    finally:
        engine.dispose()
