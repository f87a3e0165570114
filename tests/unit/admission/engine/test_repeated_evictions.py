"""Hypothesis property over random quota pools (no nodes): a preemptor evicts a workload at
most once while it keeps running, and the pool settles.

A second eviction of the same workload by the same preemptor is allowed only after that
preemptor was itself evicted and admitted again: each admission of it evicted the workload
once, as Kueue's rules allow (the engine bench's steady state prints both counts). Cycles
run at one instant, the second wave of workloads arriving once the first is placed.
"""

from __future__ import annotations

from builders.cycles import apply, pending, queues
from builders.engine import T0, snapshot
from hypothesis import given, settings

from admission.engine.cycle import run_cycle
from admission.engine.types import Snapshot
from quota.core.model import ClusterQueue
from quota.core.workload import Workload

CYCLES = 40


def _with(snap: Snapshot, workloads: list[Workload]) -> Snapshot:
    return snapshot(*snap.cluster_queues.values(), *snap.workloads.values(), *workloads)


@settings(max_examples=150, deadline=None)
@given(queues(preemption=True), pending(), pending("x"))
def test_a_preemptor_evicts_a_workload_once_while_it_keeps_running(
        pool: list[ClusterQueue], first: list[Workload], later: list[Workload]) -> None:
    snap = snapshot(*pool, *first)
    evictions: dict[str, int] = {}  # workload -> times evicted so far
    seen: dict[tuple[str, str], int] = {}  # (victim, preemptor) -> preemptor's evictions then
    for n in range(CYCLES):
        if n == 1:
            snap = _with(snap, later)
        result = run_cycle(snap, T0)
        if n >= 1 and not result.admitted and not result.evicted:
            return
        for eviction in result.evicted:
            pair, times = (eviction.key, eviction.preemptor), evictions.get(eviction.preemptor, 0)
            assert seen.get(pair) != times, (
                f"{eviction.key} evicted again by {eviction.preemptor}, which kept running")
            seen[pair] = times
            evictions[eviction.key] = evictions.get(eviction.key, 0) + 1
        snap = apply(snap, result)
    raise AssertionError(f"no fixed point after {CYCLES} cycles")
