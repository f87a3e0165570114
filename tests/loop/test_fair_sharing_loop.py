"""Fair sharing, admission fair sharing, fair sharing with memory and min-runtime decide in
``berth serve``'s loop as they do in ``berth simulate``.

Each scenario of tests/scenarios runs twice: through the simulator, and into a real ledger
where the loop ``berth serve`` builds (``berth.serve.admission_loop``, from the settings
file holding the scenario's ``config`` block as it is written) runs on a clock set to each
instant: every step, and every ``berth.dev/runtime`` completion between steps (the
harness finishes those Jobs, as their controller would). At every step each workload's
state and eviction count must be what the simulator says. The loop reads the usage
history fair sharing needs from the ledger's usage intervals, the simulator from its own.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders.loop import Ledgered, RecordingActuator, settle
from builders.paths import SCENARIOS

from admission.intake.workloads import finish_workload, submit_workload
from admission.loop.loop import AdmissionLoop
from admission.simulate.run import simulate
from admission.simulate.scenario import RUNTIME_ANNOTATION, parse_duration, parse_scenario
from berth import settings
from berth.serve import admission_loop
from quota.core.workload import Workload, WorkloadState
from quota.ledger.apply import apply_objects
from quota.ledger.repository import Ledger

pytestmark = pytest.mark.asyncio

Facts = dict[str, tuple[str, int]]


def facts(workloads: list[Workload]) -> Facts:
    return {w.key: (str(w.state), w.eviction_count) for w in workloads}



@pytest.mark.parametrize(
    ("scenario", "decided"),
    [
        pytest.param("fair-sharing-strategies", ("big/giant", "Pending", 1),
                     id="LessThanInitialShare preempts what LessThanOrEqualToFinalShare may not"),
        pytest.param("admission-fair-sharing", ("default/b-first", "Admitted", 0),
                     id="the LocalQueue that used less goes first"),
        pytest.param("fair-sharing-memory", ("team-a/day-seven", "Admitted", 0),
                     id="a team idle for six days is not penalised on day seven"),
        pytest.param("min-runtime", ("team/sweep", "Pending", 1),
                     id="a victim is preempted once its minimum runtime is over"),
    ],
)  # fmt: skip
async def test_the_loop_decides_as_the_simulator(
    ledgered: Ledgered, actuator: RecordingActuator, tmp_path: Path, scenario: str,
    decided: tuple[str, str, int],
) -> None:
    path = SCENARIOS / f"{scenario}.yaml"
    text = path.read_text()
    parsed = parse_scenario(text, str(path))
    expected = simulate(parsed).steps
    raw: dict[str, Any] = yaml.safe_load(text)
    (tmp_path / "berth.yaml").write_text(yaml.safe_dump(raw.get("config") or {}))
    config = settings.load(env={"BERTH_CONFIG": str(tmp_path / "berth.yaml")})
    assert config.fair_sharing.fairness() == parsed.fairness
    clock = [parsed.epoch]

    def now() -> datetime:
        return clock[0]

    loop = admission_loop(ledgered.sessions, actuator, config)
    loop.clock = now
    with ledgered.sessions() as session:
        apply_objects(Ledger(session), list(parsed.objects), actor="test")
    await loop.begin()
    runtimes: dict[str, timedelta] = {}

    for step, raw_step, outcome in zip(parsed.steps, raw["steps"], expected, strict=True):
        at = parsed.epoch + step.at
        await _finish_due(ledgered, loop, clock, runtimes, until=at)
        clock[0] = at
        with ledgered.sessions() as session:
            for index, doc in enumerate(raw_step.get("create") or ()):
                made = submit_workload(Ledger(session), doc,
                                       now=at + timedelta(microseconds=index), actor="test")
                note = made.annotations.get(RUNTIME_ANNOTATION)
                if note is not None:
                    runtimes[made.key] = parse_duration(note)
        await settle(loop)
        with ledgered.sessions() as session:
            in_ledger = facts(Ledger(session).list_workloads())
        assert in_ledger == facts([v.workload for v in outcome.workloads]), f"at {step.at_text}"

    key, state, evictions = decided
    assert in_ledger[key] == (state, evictions)  # not vacuous: the feature decided this


async def _finish_due(ledgered: Ledgered, loop: AdmissionLoop, clock: list[datetime],
                      runtimes: dict[str, timedelta], *, until: datetime) -> None:
    """Finish, in time order, the Jobs whose runtime ends by ``until``; cycle at each."""
    while True:
        with ledgered.sessions() as session:
            running = [w for w in Ledger(session).list_workloads()
                       if w.state is WorkloadState.ADMITTED and w.key in runtimes
                       and w.admitted_at is not None]
        due = sorted(((w.admitted_at + runtimes[w.key], w.key), w) for w in running
                     if w.admitted_at is not None and w.admitted_at + runtimes[w.key] <= until)
        if not due:
            return
        (at, _), workload = min(due, key=lambda item: item[0])
        clock[0] = at
        with ledgered.sessions() as session:
            finish_workload(Ledger(session), workload.namespace, workload.name, now=at,
                            actor="test")
        await settle(loop)
