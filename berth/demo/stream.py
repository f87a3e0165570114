"""``berth serve --demo``: a realistic GPU pool and a steady synthetic stream of jobs.

The stream is seeded, so a demo (and its test) is reproducible. Its mix is chosen so that
within a minute the dashboard shows every common situation: queues full and waiting for
quota, borrowing across the cohort and reclaiming it, priority preemption, StrictFIFO heads
blocking, jobs that can never fit, a resource no flavor offers, a queue that does not exist.
Jobs finish by themselves after their run time (``berth.dev/runtime``, as in scenarios).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml
from sqlalchemy.orm import Session

from admission.intake.workloads import finish_workload, submit_workload
from admission.simulate.scenario import RUNTIME_ANNOTATION, parse_duration
from berth.demo.pool import GPU, MIG, QUEUES, pool_manifests
from quota.core.errors import BerthError
from quota.core.workload import WorkloadState
from quota.ledger.apply import apply_objects
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts

log = logging.getLogger(__name__)

SessionScope = Callable[[], AbstractContextManager[Session]]
ACTOR = "demo"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"


@dataclass(frozen=True, slots=True)
class DemoJob:
    at: float  # seconds after the demo started
    manifest: dict[str, Any]  # a batch/v1 Job

    @property
    def key(self) -> str:
        meta = self.manifest["metadata"]
        return f"{meta['namespace']}/{meta['name']}"


# (weight, namespace, local queue, resource, sizes, priority classes, run seconds lo..hi)
_KINDS: tuple[tuple[int, str, str, str, tuple[int, ...], tuple[str, ...], tuple[int, int]], ...] = (
    (30, "llm", "main", GPU, (4, 8, 8, 16, 16, 24), ("research",) * 4 + ("production",),
     (40, 180)),
    (20, "inference", "serve", GPU, (1, 2, 4, 4, 8), ("production",), (30, 120)),
    (12, "inference", "serve", MIG, (1, 2, 4, 7), ("production",), (20, 90)),
    (20, "vision", "main", GPU, (2, 4, 4, 8, 12), ("research",), (40, 150)),
    (10, "interns", "main", GPU, (1, 2, 2, 4), ("research",), (30, 100)),
    (3, "llm", "main", GPU, (64,), ("research",), (60, 60)),  # never fits: ExceedsMaxQuota
    (2, "interns", "main", "nvidia.com/mig-3g.40gb", (1,), ("research",), (30, 30)),
    (1, "interns", "playground", GPU, (1,), ("research",), (30, 30)),  # no such LocalQueue
)


class JobStream:
    """An endless, seeded stream of Jobs: a burst at the start, then one every few seconds."""

    def __init__(self, seed: int = 42, *, mean_gap: float = 2.5, burst: int = 14) -> None:
        self._random = random.Random(seed)
        self._mean_gap = mean_gap
        self._burst = burst
        self._count = 0
        self._at = 0.0

    def __iter__(self) -> Iterator[DemoJob]:
        return self

    def __next__(self) -> DemoJob:
        rnd = self._random
        if self._count >= self._burst:
            self._at += rnd.expovariate(1 / self._mean_gap)
        self._count += 1
        # The burst opens with one job of every kind, so each situation shows at once.
        if self._count <= len(_KINDS):
            kind_of = _KINDS[self._count - 1]
        else:
            kind_of = rnd.choices(_KINDS, [k[0] for k in _KINDS])[0]
        _, namespace, queue, resource, sizes, classes, (lo, hi) = kind_of
        size, priority = rnd.choice(sizes), rnd.choice(classes)
        runtime = rnd.randint(lo, hi)
        kind = "mig" if resource == MIG else "train" if namespace == "llm" else "job"
        name = f"{kind}-{self._count:05d}"
        return DemoJob(round(self._at, 3), _job(namespace, name, queue, resource, size,
                                                priority, runtime))


def _job(namespace: str, name: str, queue: str, resource: str, size: int, priority: str,
         runtime: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {QUEUE_LABEL: queue, PRIORITY_LABEL: priority},
            "annotations": {RUNTIME_ANNOTATION: f"{runtime}s"},
        },
        "spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "demo/trainer",
             "resources": {"requests": {resource: str(size)}, "limits": {resource: str(size)}}}
        ]}}},
    }


def pool_text() -> str:
    """The demo pool as multi-document YAML (what ``berth apply -f`` would take)."""
    return yaml.safe_dump_all(pool_manifests(), sort_keys=False)


# --- the live demo ---------------------------------------------------------------------


def load_pool(sessions: SessionScope) -> None:
    with sessions() as session:
        apply_objects(Ledger(session), parse_texts([("demo-pool", pool_text())]), actor=ACTOR)


def _submit(sessions: SessionScope, job: DemoJob, now: datetime) -> bool:
    try:
        with sessions() as session:
            submit_workload(Ledger(session), job.manifest, now=now, actor=ACTOR)
    except BerthError as exc:  # e.g. a name left from an earlier demo run on this ledger
        log.debug("demo: %s not submitted: %s", job.key, exc.message)
        return False
    return True


def _pending_count(sessions: SessionScope) -> int:
    with sessions() as session:
        return len(Ledger(session).list_workloads([WorkloadState.PENDING]))


def _finish_due(sessions: SessionScope, now: datetime) -> int:
    """Finish every admitted workload whose run time has passed; how many."""
    with sessions() as session:
        running = Ledger(session).list_workloads([WorkloadState.ADMITTED])
    done = 0
    for workload in running:
        runtime = workload.annotations.get(RUNTIME_ANNOTATION)
        if runtime is None or workload.admitted_at is None:
            continue
        if workload.admitted_at + parse_duration(runtime) <= now:
            with sessions() as session:
                finish_workload(Ledger(session), workload.namespace, workload.name, now=now,
                                actor=ACTOR)
            done += 1
    return done


def _utcnow() -> datetime:
    return datetime.now(UTC)


async def run_demo(
    sessions: SessionScope,
    stop: asyncio.Event,
    *,
    seed: int = 42,
    now_fn: Callable[[], datetime] = _utcnow,
    tick: float = 1.0,
    max_pending: int = 60,
) -> None:
    """Load the demo pool, then feed jobs and finish them until ``stop`` is set.

    Admission itself is the ordinary loop's job; the demo only plays the users. Pending work
    is capped at ``max_pending`` so a long-running demo stays readable.
    """
    await asyncio.to_thread(load_pool, sessions)
    # Names carry the start time: a demo restarted on the same ledger does not collide.
    prefix = now_fn().strftime("%H%M%S")
    stream = JobStream(seed)
    started = time.monotonic()
    upcoming = next(stream)
    log.info("demo: pool loaded (%d queues); feeding jobs", len(QUEUES))
    while not stop.is_set():
        elapsed = time.monotonic() - started
        if await asyncio.to_thread(_pending_count, sessions) < max_pending:
            while upcoming.at <= elapsed:
                upcoming.manifest["metadata"]["name"] += f"-{prefix}"
                await asyncio.to_thread(_submit, sessions, upcoming, now_fn())
                upcoming = next(stream)
        else:
            while upcoming.at <= elapsed:  # skipped, not queued up for later
                upcoming = next(stream)
        await asyncio.to_thread(_finish_due, sessions, now_fn())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), tick)


def scenario_steps(seed: int, seconds: float) -> list[dict[str, Any]]:
    """The first ``seconds`` of a stream as scenario steps (``berth simulate`` input)."""
    steps: dict[float, list[dict[str, Any]]] = {}
    for job in JobStream(seed):
        if job.at > seconds:
            break
        steps.setdefault(int(job.at), []).append(job.manifest)
    return [{"at": f"{int(at)}s", "create": jobs} for at, jobs in sorted(steps.items())]


def scenario_text(seed: int, seconds: float, *, nodes: bool = False) -> str:
    """A whole ``berth simulate`` scenario: the demo pool and the stream's first jobs
    (``nodes``: with the pool's Nodes, as ``berth serve --demo`` runs it; without them
    quota alone decides)."""
    doc = {"name": f"demo-{seed}", "objects": pool_manifests(nodes=nodes),
           "steps": scenario_steps(seed, seconds)}
    return yaml.safe_dump(doc, sort_keys=False)

