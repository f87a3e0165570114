"""What a REST simulation may cost: size caps checked before the run, engine cycles and a
caller's deadline counted during it, and the answer's size while it is rendered (PURE)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
import yaml
from builders.simulate import cluster_queue, flavor, job, local_queue

from admission.simulate.limits import (
    ResultTooLarge,
    ScenarioTooLarge,
    SimulationLimits,
    SimulationStopped,
    check_size,
)
from admission.simulate.output import render_compact, to_dict
from admission.simulate.run import simulate
from admission.simulate.scenario import Scenario, parse_scenario
from berth import settings
from quota.core.errors import BerthError

OBJECTS = [flavor(), cluster_queue("cq", 2), local_queue("ns", "cq")]


def scenario(steps: list[dict[str, Any]], objects: list[Any] = OBJECTS) -> Scenario:
    return parse_scenario(yaml.safe_dump({"objects": objects, "steps": steps}), "s.yaml")


def jobs(*names: str, runtime: str | None = "1m") -> list[dict[str, Any]]:
    return [job(f"ns/{name}", 1, runtime=runtime) for name in names]


SMALL = SimulationLimits(max_steps=3, max_workloads=4, max_workload_rows=6, max_objects=3)


@pytest.mark.parametrize(
    ("steps", "objects", "field", "words"),
    [
        pytest.param([{"at": f"{i}m"} for i in range(4)], OBJECTS, "steps", "4 steps; POST /api/v1/simulate takes at most 3", id="more steps than the cap"),
        pytest.param([{"at": "0s", "create": jobs("a", "b", "c", "d", "e")}], OBJECTS, "steps[].create", "5 workloads", id="more workloads than the cap"),
        pytest.param([{"at": "0s"}], [*OBJECTS, cluster_queue("other", 1)], "objects", "4 objects", id="more objects than the cap"),
        pytest.param([{"at": "0s", "create": jobs("a", "b", "c")}, {"at": "1m"}, {"at": "2m"}], OBJECTS, "steps", "9 workload rows", id="workloads times steps over the cap"),
    ],
)
def test_a_scenario_over_a_cap_is_refused_before_it_runs(
    steps: list[dict[str, Any]], objects: list[Any], field: str, words: str
) -> None:
    with pytest.raises(ScenarioTooLarge) as caught:
        check_size(scenario(steps, objects), SMALL)
    assert (caught.value.status, caught.value.field) == (413, field)
    assert words in caught.value.message
    assert "berth simulate on the command line" in caught.value.message


@pytest.mark.parametrize(
    "steps",
    [
        pytest.param([{"at": "0s", "create": jobs("a", "b")}, {"at": "1m"}, {"at": "2m"}], id="six rows: exactly the cap"),
        pytest.param(
            [{"at": "0s", "create": jobs("a", "b", "c")},
             {"at": "1m", "delete": [{"kind": "Job", "namespace": "ns", "name": n} for n in "abc"]},
             {"at": "2m", "create": jobs("d")}],
            id="deleted workloads leave the answer, so they leave the count",
        ),
    ],
)
def test_a_scenario_within_the_caps_passes(steps: list[dict[str, Any]]) -> None:
    check_size(scenario(steps), SMALL)


def test_the_engine_cycles_of_the_whole_run_are_counted_against_the_budget() -> None:
    run = scenario([{"at": "0s", "create": jobs("a", "b", "c", "d")}, {"at": "10m"}])
    # Two at a time: 0s and 1m admit and settle (two cycles each), 2m and 10m only settle.
    simulate(run, cycle_budget=6)
    with pytest.raises(ScenarioTooLarge, match="more than 5 engine cycles"):
        simulate(run, cycle_budget=5)


def test_the_callers_deadline_is_asked_between_cycles_and_stops_the_run() -> None:
    run = scenario([{"at": "0s", "create": jobs("a", "b", "c", "d")}, {"at": "10m"}])
    asked = []

    def keep_going() -> bool:
        asked.append(True)
        return len(asked) <= 3  # the caller's clock ran out after three cycles

    with pytest.raises(SimulationStopped) as caught:
        simulate(run, keep_going=keep_going)
    assert caught.value.message == "stopped at virtual time 1m, after 3 cycles"
    assert len(asked) == 4


def test_the_compact_answer_is_the_output_document() -> None:
    result = simulate(scenario([{"at": "0s", "create": jobs("a", "b", "c")}, {"at": "1m"}]))
    assert json.loads(render_compact(result)) == to_dict(result)


def test_an_answer_over_the_size_cap_is_refused_at_the_step_that_passes_it() -> None:
    result = simulate(scenario([{"at": "0s", "create": jobs("a", "b", "c")}, {"at": "1m"}]))
    whole = len(render_compact(result))
    assert len(render_compact(result, max_bytes=whole)) == whole
    with pytest.raises(ResultTooLarge) as caught:
        render_compact(result, max_bytes=whole - 1)
    assert caught.value.status == 413
    assert f"passes {whole - 1:,} bytes (the limit) at step 1 of 2" in caught.value.message


def test_the_defaults_refuse_the_scenario_that_took_the_server_to_2_gb() -> None:
    # 5,000 workloads over 200 steps: refused on its counts, before anything is simulated.
    base = scenario([{"at": "0s", "create": jobs("a")}])
    first = replace(base.steps[0], create=base.steps[0].create * 5000)
    rest = tuple(replace(base.steps[0], index=i, create=()) for i in range(1, 200))
    with pytest.raises(ScenarioTooLarge, match="5,000 workloads"):
        check_size(replace(base, steps=(first, *rest)), SimulationLimits())


@pytest.mark.parametrize(
    ("env", "time_limit", "concurrency"),
    [
        pytest.param({}, 10.0, 2, id="defaults"),
        pytest.param({"BERTH_SIMULATE_TIME_LIMIT": "2.5", "BERTH_SIMULATE_CONCURRENCY": "4"}, 2.5, 4, id="both set"),
    ],
)
def test_the_time_limit_and_concurrency_are_settings(env: dict[str, str], time_limit: float, concurrency: int) -> None:
    limits = settings.load(env=env).simulation
    assert (limits.time_limit, limits.concurrency) == (time_limit, concurrency)
    assert limits.max_workload_rows == SimulationLimits().max_workload_rows  # the caps are fixed


@pytest.mark.parametrize(
    ("name", "value"),
    [
        pytest.param("BERTH_SIMULATE_TIME_LIMIT", "0", id="no time at all"),
        pytest.param("BERTH_SIMULATE_TIME_LIMIT", "-1", id="negative time"),
        pytest.param("BERTH_SIMULATE_TIME_LIMIT", "nan", id="not a number of seconds"),
        pytest.param("BERTH_SIMULATE_TIME_LIMIT", "10s", id="a unit"),
        pytest.param("BERTH_SIMULATE_CONCURRENCY", "0", id="no simulations at all"),
        pytest.param("BERTH_SIMULATE_CONCURRENCY", "two", id="a word"),
    ],
)
def test_a_bad_setting_is_refused_naming_the_variable(name: str, value: str) -> None:
    with pytest.raises(BerthError) as caught:
        settings.load(env={name: value})
    assert caught.value.field == name
