"""``berth serve --demo``'s users: the scripted first minute, then a seeded stream of jobs.

The opening (``opening``) shows every situation the README promises within a minute. Then
jobs arrive every few seconds, seeded so that a demo (and its test) is reproducible, and
every one of them can run: the jobs that never can are the opening's few, so they do not
pile up and fill the pending cap. Jobs finish by themselves after their run time
(``berth.dev/runtime``, as in scenarios).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from berth.demo.opening import OPENING_CHECKPOINTS, OPENING_JOBS, OPENING_SECONDS, job
from berth.demo.pool import GPU, MIG, pool_manifests


@dataclass(frozen=True, slots=True)
class DemoJob:
    """A Job that arrives ``at`` seconds after the demo started."""

    at: float
    manifest: dict[str, Any]  # a batch/v1 Job

    @property
    def key(self) -> str:
        meta = self.manifest["metadata"]
        return f"{meta['namespace']}/{meta['name']}"


@dataclass(frozen=True, slots=True)
class DemoCheckpoint:
    """A workload that reports a saved checkpoint ``at`` seconds after the demo started."""

    at: float
    key: str  # namespace/name


DemoEvent = DemoJob | DemoCheckpoint

# (weight, namespace, resource, (pods, per pod) sizes, priority classes, run seconds lo..hi)
# About as much work as the pool holds, so queues stay full and still drain (at 2.5s and
# longer runs the pending count grew past the cap within minutes). inference's jobs stay
# mostly within its own quota: above it, each of its arrivals reclaimed the H100s it had
# lent, from the same newest llm borrower (three evictions of one job in two minutes).
# llm's random jobs are all research: production ones preempted the opening's long
# pretraining jobs each time they came back (the least work lost), one six times.
_KINDS: tuple[tuple[int, str, str, tuple[tuple[int, int], ...], tuple[str, ...],
                    tuple[int, int]], ...] = (
    (16, "llm", GPU, ((1, 4), (1, 8), (1, 8), (2, 8)), ("research",), (30, 90)),
    (12, "inference", GPU, ((1, 1), (1, 2), (1, 4), (1, 4), (1, 8)), ("production",), (20, 90)),
    (12, "inference", MIG, ((1, 1), (1, 2), (1, 4), (1, 7)), ("production",), (20, 60)),
    (16, "vision", GPU, ((1, 2), (1, 4), (1, 4), (1, 8)), ("research",), (30, 90)),
    (10, "interns", GPU, ((1, 1), (1, 2), (1, 2), (1, 4)), ("research",), (20, 80)),
)


class JobStream:
    """An endless, seeded stream of events: the opening's, then a Job every few seconds."""

    def __init__(self, seed: int = 42, *, mean_gap: float = 4.0) -> None:
        self._random = random.Random(seed)
        self._mean_gap = mean_gap
        self._opening: list[DemoEvent] = sorted(
            [DemoJob(at, manifest) for at, manifest in OPENING_JOBS]
            + [DemoCheckpoint(at, key) for at, key in OPENING_CHECKPOINTS],
            key=lambda event: event.at,
        )
        self._count = 0
        self._at = OPENING_SECONDS

    def __iter__(self) -> Iterator[DemoEvent]:
        return self

    def __next__(self) -> DemoEvent:
        if self._opening:
            return self._opening.pop(0)
        rnd = self._random
        self._at += rnd.expovariate(1 / self._mean_gap)
        self._count += 1
        _, namespace, resource, sizes, classes, (lo, hi) = rnd.choices(
            _KINDS, [k[0] for k in _KINDS]
        )[0]
        pods, size = rnd.choice(sizes)
        priority = rnd.choice(classes)
        runtime = rnd.randint(lo, hi)
        kind = "mig" if resource == MIG else "train" if namespace == "llm" else "job"
        name = f"{kind}-{self._count:05d}"
        return DemoJob(round(self._at, 3), job(namespace, name, resource, size, pods=pods,
                                               priority=priority, runtime=runtime))


def pool_text() -> str:
    """The demo pool as multi-document YAML (what ``berth apply -f`` would take)."""
    return yaml.safe_dump_all(pool_manifests(), sort_keys=False)


def scenario_steps(seed: int, seconds: float) -> list[dict[str, Any]]:
    """The first ``seconds`` of a stream as scenario steps (``berth simulate`` input)."""
    steps: dict[int, dict[str, list[Any]]] = {}
    for event in JobStream(seed):
        if event.at > seconds:
            break
        step = steps.setdefault(int(event.at), {})
        if isinstance(event, DemoJob):
            step.setdefault("create", []).append(event.manifest)
        else:
            step.setdefault("checkpointed", []).append(event.key)
    return [{"at": f"{at}s", **events} for at, events in sorted(steps.items())]


def scenario_text(seed: int, seconds: float, *, nodes: bool = True) -> str:
    """A whole ``berth simulate`` scenario: the demo pool and the stream's first events
    (``nodes``: with the pool's Nodes, as ``berth serve --demo`` runs it; without them
    quota alone decides)."""
    doc = {"name": f"demo-{seed}", "objects": pool_manifests(nodes=nodes),
           "steps": scenario_steps(seed, seconds)}
    return yaml.safe_dump(doc, sort_keys=False)
