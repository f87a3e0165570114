"""Hypothesis properties of preemption over random pools with nodes: no workload is evicted
twice by the same preemptor, and the cycle (and ``berth simulate``) reaches a fixed point.

Pods range up to 12 GPUs on nodes of at most 8, so some never fit any node (the demo's
livelock: they evicted the same victims every cycle). Some victims checkpoint (a grace):
their preemptor waits for them, and the room its other victims freed must not go to work
that it would evict again in the next cycle."""

from __future__ import annotations

from typing import Any

import yaml
from builders.capacity import node, with_nodes
from builders.cycles import FLAVORS, QUEUES, apply, queues
from builders.engine import GPU, T0, snapshot, wl
from builders.simulate import KUEUE, job, local_queue, priority_class
from hypothesis import example, given, settings
from hypothesis import strategies as st

from admission.engine.cycle import run_cycle
from admission.simulate.run import simulate
from admission.simulate.scenario import parse_scenario
from quota.core.checkpoints import CHECKPOINT_GRACE
from quota.core.model import ClusterQueue, Node
from quota.core.workload import Workload

CYCLES = 60  # far more than a pool of at most 12 workloads needs to settle
LABELS = {f: {"gpu": f} for f in FLAVORS}


@st.composite
def inventory(draw: st.DrawFn) -> list[Node]:
    return [node(f"n{i}", draw(st.integers(1, 8)),
                 labels={"gpu": draw(st.sampled_from(FLAVORS))})
            for i in range(draw(st.integers(1, 4)))]


@st.composite
def big_pending(draw: st.DrawFn) -> list[Workload]:
    return [wl(f"w{i}", {GPU: draw(st.integers(1, 12))}, ns=draw(st.sampled_from(QUEUES)),
               count=draw(st.integers(1, 2)), priority=draw(st.integers(0, 3)),
               created=draw(st.integers(0, 5)))
            for i in range(draw(st.integers(1, 12)))]


@settings(max_examples=150, deadline=None)
@given(queues(preemption=True), inventory(), big_pending())
def test_no_workload_is_evicted_twice_by_one_preemptor_and_the_pool_settles(
        pool: list[ClusterQueue], nodes: list[Node], pending: list[Workload]) -> None:
    snap = with_nodes(snapshot(*pool, *pending), *nodes, labels=LABELS)
    seen: set[tuple[str, str]] = set()
    for _ in range(CYCLES):
        result = run_cycle(snap, T0)
        if not result.admitted and not result.evicted:
            return
        for eviction in result.evicted:
            pair = (eviction.key, eviction.preemptor)
            assert pair not in seen, f"{eviction.key} evicted again by {eviction.preemptor}"
            seen.add(pair)
        snap = apply(snap, result)
    raise AssertionError(f"no fixed point after {CYCLES} cycles")


POLICIES = st.sampled_from([
    {},
    {"withinClusterQueue": "LowerPriority"},
    {"withinClusterQueue": "LowerOrNewerEqualPriority", "reclaimWithinCohort": "Any"},
    {"reclaimWithinCohort": "LowerPriority",
     "borrowWithinCohort": {"policy": "LowerPriority"}},
])
# (queue, GPUs per pod, pods, priority class, minute created, runtime minutes or None)
JOBS = st.lists(st.tuples(st.sampled_from(QUEUES), st.integers(1, 12), st.integers(1, 2),
                          st.sampled_from(["low", "high"]), st.integers(0, 30),
                          st.none() | st.integers(1, 40)), min_size=1, max_size=10)
# Crowded: jobs arrive within three minutes, so preemptors meet running victims and the
# work queued behind them in one cycle.
CROWDED = st.lists(st.tuples(st.sampled_from(QUEUES), st.integers(1, 8), st.integers(1, 2),
                             st.sampled_from(["low", "high"]), st.integers(0, 2),
                             st.none() | st.integers(1, 40)), min_size=2, max_size=10)
GRACES = st.lists(st.none() | st.integers(1, 20), min_size=10, max_size=10)  # minutes


def _queue(name: str, gpus: int, policy: dict[str, Any],
           flavor_names: tuple[str, ...]) -> dict[str, Any]:
    flavors = [{"name": f, "resources": [{"name": GPU, "nominalQuota": gpus}]}
               for f in flavor_names]
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name},
            "spec": {"namespaceSelector": {}, "cohort": "all", "preemption": policy,
                     "resourceGroups": [{"coveredResources": [GPU], "flavors": flavors}]}}


def _node(name: str, flavor: str, gpus: int) -> dict[str, Any]:
    status = {"capacity": {GPU: "8"}, "allocatable": {GPU: str(gpus)}}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"gpu": flavor}}, "status": status}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), POLICIES), min_size=3, max_size=3),
       st.lists(st.tuples(st.sampled_from(FLAVORS), st.integers(1, 8)), min_size=1,
                max_size=4), JOBS)
def test_simulate_reaches_a_fixed_point_on_pools_with_nodes(
        quotas: list[tuple[int, dict[str, Any]]], nodes: list[tuple[str, int]],
        jobs: list[tuple[str, int, int, str, int, int | None]]) -> None:
    _simulate_to_the_end(quotas, nodes, jobs, [None] * len(jobs), FLAVORS)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), POLICIES), min_size=3, max_size=3),
       st.lists(st.tuples(st.sampled_from(FLAVORS), st.integers(1, 8)), max_size=4), CROWDED,
       GRACES)
# The engine bench's churn in small: a high-priority job preempts a checkpointing and a
# plain victim, and a low one queued behind it must not take what the plain one freed.
@example([(8, {"withinClusterQueue": "LowerPriority"}), (0, {}), (0, {})], [],
         [(QUEUES[0], 4, 1, "low", 0, None), (QUEUES[0], 4, 1, "low", 0, None),
          (QUEUES[0], 8, 1, "high", 1, None), (QUEUES[0], 4, 1, "low", 1, None)],
         [10] + [None] * 9)
def test_simulate_reaches_a_fixed_point_with_checkpointing_victims(
        quotas: list[tuple[int, dict[str, Any]]], nodes: list[tuple[str, int]],
        jobs: list[tuple[str, int, int, str, int, int | None]],
        graces: list[int | None]) -> None:
    # One flavor: a preemptor cannot go round a full pool by another flavor.
    _simulate_to_the_end(quotas, nodes, jobs, graces, FLAVORS[:1])


def _simulate_to_the_end(
        quotas: list[tuple[int, dict[str, Any]]], nodes: list[tuple[str, int]],
        jobs: list[tuple[str, int, int, str, int, int | None]],
        graces: list[int | None], flavors: tuple[str, ...]) -> None:
    objects: list[dict[str, Any]] = [
        {"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": f},
         "spec": {"nodeLabels": {"gpu": f}}} for f in flavors]
    objects += [priority_class("low", 0), priority_class("high", 100)]
    for name, (gpus, policy) in zip(QUEUES, quotas, strict=True):
        objects += [_queue(name, gpus, policy, flavors), local_queue(name, name)]
    objects += [_node(f"n{i}", flavor, gpus) for i, (flavor, gpus) in enumerate(nodes)
                if flavor in flavors]
    by_minute: dict[int, list[dict[str, Any]]] = {}
    for i, (queue, gpus, pods, priority, minute, runtime) in enumerate(jobs):
        grace = graces[i]
        by_minute.setdefault(minute, []).append(job(
            f"{queue}/j{i}", gpus, count=pods, priority=priority,
            runtime=None if runtime is None else f"{runtime}m",
            annotations=None if grace is None else {CHECKPOINT_GRACE: f"{grace}m"}))
    steps = [{"at": f"{m}m", "create": made} for m, made in sorted(by_minute.items())]
    steps.append({"at": "2h"})
    text = yaml.safe_dump({"objects": objects, "steps": steps})
    # SimulationError ("no fixed point after 1000 cycles") fails the property.
    result = simulate(parse_scenario(text, "property.yaml"))
    assert len(result.steps) == len(steps)
