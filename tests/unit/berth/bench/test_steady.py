"""`berth bench engine --steady --events N` at a small shape: the events are applied to the
steady state after its cycle, and every row it prints agrees with the engine run
independently on the same states."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest

from admission.engine.cycle import run_cycle
from admission.engine.types import CycleResult, EvictionDecision, Snapshot
from berth.bench import engine, steady
from berth.cli.main import main
from quota.core.workload import WorkloadState

QUEUES, COHORTS, WORKLOADS, EVENTS = 8, 2, 400, 6
SHAPE = ["--queues", str(QUEUES), "--cohorts", str(COHORTS), "--workloads", str(WORKLOADS)]
NOW = engine.T0 + timedelta(days=2)


def _pending(snapshot: Snapshot) -> set[str]:
    return {key for key, w in snapshot.workloads.items() if w.admission is None}


def _holders(snapshot: Snapshot) -> set[str]:
    return {key for key, w in snapshot.workloads.items() if w.admission is not None}


@pytest.mark.parametrize("mix", ["random", "classes"])
def test_n_arrivals_wait_and_n_running_holders_are_gone_after_the_steady_cycle(
    mix: str,
) -> None:
    step = steady.step(engine.build(QUEUES, COHORTS, WORKLOADS, mix=mix), NOW, EVENTS, mix)

    arrivals = {w.key for w in step.events.arrivals}
    finishes = set(step.events.finishes)
    assert len(arrivals) == len(finishes) == EVENTS
    # The steady state's cycles were carried out first, until one changed nothing.
    assert 1 < step.cycles <= steady.SETTLE_CYCLES
    assert not step.result.admitted and not step.result.evicted
    assert step.settled.workloads == step.previous.workloads
    assert len(_holders(step.settled)) > len(_holders(step.steady))
    assert _pending(step.current) == _pending(step.settled) | arrivals
    assert not arrivals & set(step.settled.workloads)
    assert _holders(step.current) == _holders(step.settled) - finishes
    assert finishes <= _holders(step.settled)
    assert all(step.settled.workloads[k].state is WorkloadState.ADMITTED for k in finishes)
    # New work of the mix's kind, arriving just before the cycle it is measured in.
    assert all(w.created_at == step.now and w.queue_name == "lq" for w in step.events.arrivals)
    assert step.now > step.result.now


def test_prints_the_states_each_engines_row_and_the_target_for_each_mix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "engine", *SHAPE, "--steady", "--events", str(EVENTS)]) == 0
    out = capsys.readouterr().out

    assert out.startswith(f"snapshot: {QUEUES} ClusterQueues in {COHORTS} cohorts, "
                          f"{WORKLOADS} workloads, 0 nodes; {EVENTS} arrivals and {EVENTS} "
                          "finishes on the settled steady state")
    sections = out.split("\n[")[1:]
    assert [s.split("]")[0] for s in sections] == ["random shapes (primary)",
                                                   "Kueue-perf classes"]
    for section, mix in zip(sections, ("random", "classes"), strict=True):
        step = steady.step(engine.build(QUEUES, COHORTS, WORKLOADS, mix=mix), NOW, EVENTS, mix)
        assert f"{step.cycles} cycles carried out, the last admitted 0 and evicted 0 " \
               "(settled); then" in section
        settled = re.search(r"then (\d+) holders, (\d+) pending", section)
        after = re.search(rf"events: {EVENTS} arrivals, {EVENTS} finishes -> (\d+) holders, "
                          r"(\d+) pending", section)
        assert settled is not None and after is not None
        held, waiting = map(int, settled.groups())
        assert (held, waiting) == (len(_holders(step.settled)), len(_pending(step.settled)))
        assert tuple(map(int, after.groups())) == (held - EVENTS, waiting + EVENTS)
        # One row, the full recompute: no incremental engine exists yet.
        rows = re.findall(r"\n  ([a-z ]+): \d+ ms wall, (\d+) ms CPU \(best of 3\); "
                          r"admitted=(\d+) evicted=(\d+) pending=(\d+) decisions digest=(\w+)",
                          section)
        assert [row[0] for row in rows] == ["full recompute"]
        result = run_cycle(step.current, step.now)
        _, cpu, *counts, digest = rows[0]
        assert list(map(int, counts)) == [len(result.admitted), len(result.evicted),
                                          len(result.pending)]
        assert len(result.pending) == waiting + EVENTS - len(result.admitted)
        assert digest == engine.digest(result)
        # The loop's plan of that cycle: a transition per admission and eviction, and at
        # least every waiting verdict whose primary code is not the stored one (arrivals
        # have none stored) among the verdicts written.
        planned = re.search(r"the loop's plan of that cycle \(.*\): \d+ ms CPU \(best of 3\); "
                            r"transitions=(\d+) reasons=(\d+)", section)
        assert planned is not None
        transitions, written = map(int, planned.groups())
        assert transitions == len(result.admitted) + len(result.evicted)
        stored = steady.records(step)
        moved = {key for key, status in result.pending.items()
                 if stored[key].verdict.code != status.reason.code}
        assert {w.key for w in step.events.arrivals} & set(result.pending) <= moved
        assert len(moved) <= written <= len(result.pending)
        # A small shape is not judged against the default shape's target.
        assert f"cycle after {EVENTS} arrivals + {EVENTS} finishes <= 50 ms CPU: {cpu} ms; " \
               "the target is for the default shape and 100 events" in section
        assert "PASS" not in section and "MISS" not in section
        again = step.repeats
        assert (f"evicted again by a preemptor that had evicted them: {again.running} while "
                f"it kept running, {again.readmitted} after it was itself evicted") in section


def test_an_incremental_engine_is_timed_beside_the_full_recompute_with_its_own_digest(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[tuple[int, int, int]] = []

    def stand_in(previous: Snapshot, result: CycleResult, events: steady.Events,
                 current: Snapshot, now: datetime) -> CycleResult:
        # What an incremental engine is given: the state before, its result, the events.
        seen.append((len(previous.workloads), len(events.arrivals), len(events.finishes)))
        return run_cycle(current, now)

    monkeypatch.setattr(steady, "ENGINES", (*steady.ENGINES, ("incremental", stand_in)))

    assert main(["bench", "engine", *SHAPE, "--mix", "classes", "--steady", "--events", "3"]) == 0
    out = capsys.readouterr().out

    digests = re.findall(r"\n  (full recompute|incremental): .* decisions digest=(\w+)", out)
    assert [name for name, _ in digests] == ["full recompute", "incremental"]
    assert digests[0][1] == digests[1][1]
    assert len(seen) == 3 and {(n, a, f) for n, a, f in seen if a == f == 3} == set(seen)


def _cycle(*evictions: tuple[str, str]) -> CycleResult:
    return CycleResult(now=NOW, evicted=tuple(
        EvictionDecision(victim, preemptor, None, "cq") for victim, preemptor in evictions))


@pytest.mark.parametrize(
    ("cycles", "running", "readmitted"),
    [
        pytest.param([_cycle(("v", "p")), _cycle(("w", "p"))], 0, 0,
                     id="one preemptor, two victims once each"),
        pytest.param([_cycle(("v", "p")), _cycle(("v", "q"))], 0, 0,
                     id="one victim, two preemptors"),
        pytest.param([_cycle(("v", "p")), _cycle(), _cycle(("v", "p"))], 1, 0,
                     id="the same victim again while its preemptor kept running"),
        pytest.param([_cycle(("v", "p")), _cycle(("p", "r")), _cycle(("v", "p"))], 0, 1,
                     id="again after the preemptor itself was evicted"),
        pytest.param([_cycle(("v", "p")), _cycle(("p", "r")), _cycle(("v", "p")),
                      _cycle(("v", "p"))], 1, 1,
                     id="after it was readmitted, then again while it kept running"),
    ],
)
def test_repeated_evictions_are_told_apart_by_whether_the_preemptor_kept_running(
        cycles: list[CycleResult], running: int, readmitted: int) -> None:
    assert steady.repeats(cycles) == steady.Repeats(running, readmitted)
