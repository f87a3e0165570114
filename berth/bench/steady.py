"""``berth bench engine --steady [--events N]``: the cycle after N arrivals and N finishes.

What users feel is the durable loop's cycle in a steady state, where between two cycles a
few runs finish and a few workloads arrive. The engine bench's steady state (``engine.
steady``: ~3,000 holders of mixed priorities, 50,000 waiting, urgent newcomers) is not one
yet: half its quota was just freed, so its own cycle admits and evicts thousands. So cycles
run on it and are carried out as the loop would (``committed``: victims first, through
the engine's own transitions) until one neither admits nor evicts, or for at most
``SETTLE_CYCLES`` (measured at the default shape: the classes mix settles in 8, the random
one in 11). Then N new workloads of the mix arrive and N running holders finish
(``Events``), and the cycle of that new state, a second later, is timed.

Each way of computing it is a ``CycleEngine``: given the previous snapshot, the previous
cycle's result, the events and the new snapshot, the new cycle's result. Today there is one,
the full recompute (``full_recompute``: it ignores all but the new snapshot); an
incremental engine goes in ``ENGINES`` beside it when one exists, and gets its own timing
row and digest (equal digests, equal decisions). The target is judged on the fastest row,
at the default shape and N only. Beside the rows, the durable loop's plan of that cycle
(``timed_plan``: codes against the stored verdicts, positions, the verdicts it writes), the
part of a loop cycle after the engine's that grows with the number waiting. Figures only:
it never fails.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Protocol

from admission.engine.collector import collector_paused
from admission.engine.cycle import run_cycle
from admission.engine.stored_form import StoredForms, verdict_of
from admission.engine.transitions import admitted, evicted
from admission.engine.types import CycleResult, Snapshot
from admission.loop.plan import CyclePlan, plan_cycle
from admission.loop.reason_budget import cycle_share
from berth.bench import engine
from berth.bench.arguments import ENGINE_SHAPE
from quota.core.cycle_writes import NO_VERDICT, WorkloadRecord
from quota.core.workload import Workload, WorkloadState

TARGET_MS = 50  # the incremental issue's goal: CPU time of the cycle after the events
DEFAULT_EVENTS = 100  # the target's N
SEED = 13
SETTLE_CYCLES = 15  # at most, carried out on the steady state before the events


@dataclass(frozen=True, slots=True)
class Events:
    """What changed between two cycles: workloads that arrived, holders that finished."""

    arrivals: tuple[Workload, ...]
    finishes: tuple[str, ...]  # keys of holders whose runs ended


class CycleEngine(Protocol):
    """The cycle of ``current`` at ``now``, where ``current`` is ``previous`` with its cycle
    ``result`` carried out (``committed``) and ``events`` applied (``applied``)."""

    def __call__(
        self, previous: Snapshot, result: CycleResult, events: Events, current: Snapshot,
        now: datetime,
    ) -> CycleResult: ...  # fmt: skip


def full_recompute(
    previous: Snapshot, result: CycleResult, events: Events, current: Snapshot, now: datetime
) -> CycleResult:
    """The cycle of ``current`` from scratch, as the engine runs today."""
    return run_cycle(current, now)


# (label, engine) timed side by side; an incremental engine is added here when it exists.
ENGINES: tuple[tuple[str, CycleEngine], ...] = (("full recompute", full_recompute),)


@dataclass(frozen=True, slots=True)
class Step:
    """One measured step: the steady state, the cycles that settled it (the last one's input
    and result), the events, and the state they lead to."""

    steady: Snapshot  # engine.steady's, before settling
    cycles: int  # run on it and carried out, the last one included
    previous: Snapshot
    result: CycleResult  # previous's cycle, the last of ``cycles``
    settled: Snapshot  # previous with result carried out
    events: Events
    current: Snapshot  # settled with the events applied
    now: datetime  # the instant of the cycle after the events
    repeats: Repeats  # of the settling cycles


@dataclass(frozen=True, slots=True)
class Repeats:
    """Evictions of a workload by a preemptor that had evicted it before: while that
    preemptor kept running (``running``: the churn the engine must not have), and after
    the preemptor was itself evicted and admitted again (``readmitted``: each admission
    of it evicted the workload once)."""

    running: int = 0
    readmitted: int = 0


def repeats(results: list[CycleResult]) -> Repeats:
    """``Repeats`` over cycles carried out one after the other."""
    evictions: dict[str, int] = {}  # workload -> times evicted so far
    seen: dict[tuple[str, str], int] = {}  # (victim, preemptor) -> the preemptor's evictions then
    running = readmitted = 0
    for result in results:
        for eviction in result.evicted:
            if not eviction.preemptor:
                continue
            pair, times = (eviction.key, eviction.preemptor), evictions.get(eviction.preemptor, 0)
            if pair in seen:
                if seen[pair] == times:
                    running += 1
                else:
                    readmitted += 1
            seen[pair] = times
            evictions[eviction.key] = evictions.get(eviction.key, 0) + 1
    return Repeats(running, readmitted)


def holders(snapshot: Snapshot) -> int:
    return sum(1 for w in snapshot.workloads.values() if w.admission is not None)


def committed(snapshot: Snapshot, result: CycleResult) -> Snapshot:
    """``snapshot`` after ``result`` is carried out, as the loop commits it: victims first
    (a graceful one runs on, holding quota, as Evicting), then the admissions (the bench's
    queues have no admission checks, so none is a mere reservation)."""
    workloads = dict(snapshot.workloads)
    for eviction in result.evicted:
        workloads[eviction.key] = evicted(workloads[eviction.key], eviction.reason, result.now,
                                          check=eviction.check, requeue_at=eviction.requeue_at,
                                          deactivation=eviction.deactivation).workload  # fmt: skip
    for decision in result.admitted:
        workloads[decision.key] = admitted(workloads[decision.key], decision.admission, result.now)
    return replace(snapshot, workloads=workloads)


def events(snapshot: Snapshot, count: int, mix: str, at: datetime, seed: int = SEED) -> Events:
    """``count`` new workloads like the mix's, created at ``at``, and ``count`` running
    holders (or as many as there are) finishing."""
    rnd = random.Random(seed)
    queues = len(snapshot.cluster_queues)
    arrivals = tuple(
        engine.random_workload(rnd, queues, f"arrival-{j:05d}", at)
        if mix == "random"
        else engine.class_workload(rnd, queues, f"arrival-{j:05d}", at)
        for j in range(count)
    )
    running = sorted(k for k, w in snapshot.workloads.items() if w.state is WorkloadState.ADMITTED)
    return Events(arrivals, tuple(rnd.sample(running, min(count, len(running)))))


def applied(snapshot: Snapshot, happened: Events) -> Snapshot:
    """``snapshot`` with the arrivals waiting and the finished holders gone."""
    workloads = dict(snapshot.workloads)
    for key in happened.finishes:
        del workloads[key]  # finished: its quota is free again
    for workload in happened.arrivals:
        workloads[workload.key] = workload
    return replace(snapshot, workloads=workloads)


def step(snapshot: Snapshot, now: datetime, count: int, mix: str) -> Step:
    """From a cold snapshot: its steady state one minute on, settled (see the module), and
    ``count`` arrivals and finishes a second later."""
    start = previous = engine.steady(snapshot, run_cycle(snapshot, now))
    at = now + timedelta(minutes=1)
    results: list[CycleResult] = []
    for cycles in range(1, SETTLE_CYCLES + 1):
        result = run_cycle(previous, at)
        results.append(result)
        if cycles == SETTLE_CYCLES or not (result.admitted or result.evicted):
            break
        previous = committed(previous, result)
    settled = committed(previous, result)
    later = at + timedelta(seconds=1)
    happened = events(settled, count, mix, later)
    return Step(start, cycles, previous, result, settled, happened, applied(settled, happened),
                later, repeats(results))  # fmt: skip


def records(measured: Step) -> dict[str, WorkloadRecord]:
    """The rows the loop would hold before the cycle after the events: every workload of
    that state, a waiting one with the verdict the settled cycle gave it, in its stored
    form (arrivals have none yet)."""
    forms = StoredForms()
    stored = {key: verdict_of(status, forms) for key, status in measured.result.pending.items()}
    return {key: WorkloadRecord(row, 1, workload, stored.get(key, NO_VERDICT))
            for row, (key, workload) in enumerate(sorted(measured.current.workloads.items()),
                                                  start=1)}  # fmt: skip


def timed_plan(measured: Step) -> tuple[float, CyclePlan]:
    """Best-of-3 CPU seconds of the loop's plan of the cycle after the events (collector
    off, as the loop runs it; a second's share of the verdict budget), and the plan. Each
    run plans a fresh result: a result keeps the codes it computed once."""
    rows, flavors = records(measured), measured.current.flavors
    best, plan = float("inf"), None
    for _ in range(3):
        result = run_cycle(measured.current, measured.now)
        with collector_paused():
            start = time.process_time()
            plan = plan_cycle(rows, result, flavors, budget=cycle_share(1.0, len(result.pending)))
            best = min(best, time.process_time() - start)
    assert plan is not None
    return best, plan


def report(label: str, measured: Step, *, judged: bool) -> None:
    """Print one mix's step: the states' counts, a row per engine, the target, the digest."""
    before, after = measured.settled, measured.current
    print(f"[{label}]")
    start, last = measured.steady, measured.result
    settled = "settled" if not (last.admitted or last.evicted) else "not settled"
    print(f"  steady state: {holders(start)} holders, {len(start.workloads) - holders(start)} "
          f"pending; {measured.cycles} cycles carried out, the last admitted "
          f"{len(last.admitted)} and evicted {len(last.evicted)} ({settled}); then "
          f"{holders(before)} holders, {len(before.workloads) - holders(before)} pending")
    again = measured.repeats
    print(f"  while settling, workloads evicted again by a preemptor that had evicted them: "
          f"{again.running} while it kept running, {again.readmitted} after it was itself "
          f"evicted and admitted again")
    arrived, finished = len(measured.events.arrivals), len(measured.events.finishes)
    print(f"  events: {arrived} arrivals, {finished} finishes -> {holders(after)} holders, "
          f"{len(after.workloads) - holders(after)} pending")
    fastest = float("inf")
    for name, cycle in ENGINES:
        wall, cpu, result = engine.best_of_3(partial(
            cycle, measured.previous, measured.result, measured.events, measured.current,
            measured.now))
        fastest = min(fastest, cpu)
        print(f"  {name}: {wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU (best of 3); "
              f"admitted={len(result.admitted)} evicted={len(result.evicted)} "
              f"pending={len(result.pending)} decisions digest={engine.digest(result)}")
    seconds, plan = timed_plan(measured)
    print(f"  the loop's plan of that cycle (every waiting workload's code against the one "
          f"stored, positions, the verdicts it writes): {seconds * 1000:.0f} ms CPU (best "
          f"of 3); transitions={len(plan.transitions)} reasons={len(plan.reasons)}")
    what = f"cycle after {arrived} arrivals + {finished} finishes <= {TARGET_MS} ms CPU"
    ms = fastest * 1000
    if judged:
        verdict = "PASS" if ms <= TARGET_MS else "MISS"
        print(f"  {what}: {verdict} ({ms:.0f} ms, {ms / TARGET_MS:.1f}x)")
    else:
        print(f"  {what}: {ms:.0f} ms; the target is for the default shape and "
              f"{DEFAULT_EVENTS} events")


def run(args: argparse.Namespace) -> int:
    """Print each mix's figures; never fails on a slow figure."""
    count = DEFAULT_EVENTS if args.events is None else args.events
    now = engine.T0 + timedelta(days=2)
    mixes = ("random", "classes") if args.mix == "both" else (args.mix,)
    print(f"snapshot: {args.queues} ClusterQueues in {args.cohorts} cohorts, "
          f"{args.workloads} workloads, {args.nodes} nodes; {count} arrivals and "
          f"{count} finishes on the settled steady state")
    shape = (args.queues, args.cohorts, args.workloads)
    judged = shape == ENGINE_SHAPE and not args.nodes and count == DEFAULT_EVENTS
    for mix in mixes:
        snapshot = engine.with_nodes(engine.build(*shape, mix=mix), args.nodes)
        report(engine.LABELS[mix], step(snapshot, now, count, mix), judged=judged)
    return 0

