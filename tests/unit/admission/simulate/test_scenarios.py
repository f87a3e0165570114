"""Every ``tests/scenarios/*.yaml`` run through ``berth simulate`` against its expectation.

``<name>.expected.yaml`` holds ``exit`` (default 0), ``stderr`` (fragments, one per expected
line) and ``steps``: one entry per step of the output. Expectations match exactly: a
mapping names every key of the output (an extra workload, queue or field in the output
fails as surely as a missing one), a list matches item by item. One shorthand, for
reasons: a string where the output has a reason object stands for its ``code``, and a
reason written as a mapping without ``message`` is compared without it (the message is
prose made from the details; ``reasons`` still lists every reason, so an extra one fails).
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders.paths import SCENARIOS

from berth.cli.simulate import run

FILES = sorted(p for p in SCENARIOS.glob("*.yaml") if not p.name.endswith(".expected.yaml"))


def mismatches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` differs from the expectation, as ``path: why`` lines."""
    if isinstance(actual, dict) and "code" in actual:  # a reason
        if isinstance(expected, str):
            actual = actual["code"]
        elif isinstance(expected, dict) and "message" not in expected:
            actual = {k: v for k, v in actual.items() if k != "message"}
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected a mapping, got {_brief(actual)}"]
        found = [f"{path}.{key}: missing (the output has {sorted(actual)})"
                 for key in expected if key not in actual]
        found += [f"{path}.{key}: unexpected in the output: {_brief(value)}"
                  for key, value in actual.items() if key not in expected]
        for key, value in expected.items():
            if key in actual:
                found.extend(mismatches(value, actual[key], f"{path}.{key}"))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected {_brief(expected)}, got {_brief(actual)}"]
        return [
            line
            for index, (want, have) in enumerate(zip(expected, actual, strict=True))
            for line in mismatches(want, have, f"{path}[{index}]")
        ]
    return [] if expected == actual else [f"{path}: expected {expected!r}, got {actual!r}"]


def _brief(value: Any) -> str:
    """``value`` on one line, each reason shown as its code (as an expectation writes it)."""
    return json.dumps(_codes(value))


def _codes(value: Any) -> Any:
    if isinstance(value, dict):
        if "code" in value and "message" in value:
            return value["code"]
        return {k: _codes(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_codes(v) for v in value]
    return value


def simulate_file(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(str(path), "json")
    return code, out.getvalue(), err.getvalue()


def check(path: Path, code: int, out: str, err: str) -> None:
    expected = yaml.safe_load(path.with_suffix(".expected.yaml").read_text())
    assert code == expected.get("exit", 0), err
    if code != 0:
        lines = err.splitlines()
        fragments = expected.get("stderr", [])
        assert len(lines) == len(fragments), err
        for line, fragment in zip(lines, fragments, strict=True):
            assert line.startswith(f"{path}: ") and fragment in line, line
        return
    steps = json.loads(out)["steps"]
    assert len(steps) == len(expected["steps"]), "one expectation per step"
    problems = mismatches(expected["steps"], steps, "steps")
    assert not problems, "\n".join(problems)


def test_every_scenario_has_an_expectation() -> None:
    assert len(FILES) >= 6
    missing = [p.name for p in FILES if not p.with_suffix(".expected.yaml").exists()]
    assert not missing


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in FILES])
def test_scenario_matches_its_expectation(path: Path) -> None:
    check(path, *simulate_file(path))


REASON = {"code": "WaitingForQuota", "message": "m", "details": {"shortfall": "4"}}


@pytest.mark.parametrize(
    ("expected", "actual", "wrong"),
    [
        pytest.param({"a": 1}, {"a": 1}, False, id="an equal mapping matches"),
        pytest.param({"a": 1}, {"a": 1, "b": 2}, True, id="an extra key in the output fails"),
        pytest.param({"a": 1}, {"a": 2}, True, id="a differing value fails"),
        pytest.param({"a": 1}, {"b": 1}, True, id="a missing key fails"),
        pytest.param([1], [1, 2], True, id="lists must have the same length"),
        pytest.param("WaitingForQuota", REASON, False, id="a code stands for a whole reason"),
        pytest.param("Misconfigured", REASON, True, id="a different code fails"),
        pytest.param({"code": "WaitingForQuota", "details": {"shortfall": "4"}}, REASON, False,
                     id="a reason without its message is compared without it"),
        pytest.param({"code": "WaitingForQuota", "details": {}}, REASON, True,
                     id="a reason's details are compared exactly"),
        pytest.param(["WaitingForQuota"], [REASON, {**REASON, "code": "InsufficientCapacity"}],
                     True, id="an extra reason fails"),
    ],
)
def test_expectations_match_exactly(expected: Any, actual: Any, wrong: bool) -> None:
    assert bool(mismatches(expected, actual)) is wrong


EXTRA = {"state": "Admitted", "clusterQueue": "research",
         "podSets": {"main": {"count": 1, "flavors": {"nvidia.com/gpu": "gpu"}}},
         "borrowing": True}


@pytest.mark.parametrize(
    ("change", "flagged"),
    [
        pytest.param(lambda step: step["workloads"].update({"research/extra": EXTRA}),
                     'steps[1].workloads.research/extra: unexpected in the output: {"state": '
                     '"Admitted", "clusterQueue": "research", "podSets": {"main": {"count": 1, '
                     '"flavors": {"nvidia.com/gpu": "gpu"}}}, "borrowing": true}',
                     id="an extra admission"),
        pytest.param(lambda step: step["preempted"].append("prod/other"),
                     'steps[1].preempted: expected ["research/sweep"], '
                     'got ["research/sweep", "prod/other"]',
                     id="an extra eviction"),
        pytest.param(lambda step: step["workloads"]["research/sweep"]["reasons"].append(
                         {"code": "InsufficientCapacity", "message": "m", "details": {}}),
                     'steps[1].workloads.research/sweep.reasons: expected ["WaitingForQuota"], '
                     'got ["WaitingForQuota", "InsufficientCapacity"]',
                     id="an extra reason"),
    ],
)
def test_anything_extra_in_a_scenarios_output_is_flagged(
    change: Callable[[dict[str, Any]], None], flagged: str
) -> None:
    path = SCENARIOS / "borrow-and-reclaim.yaml"
    expected = yaml.safe_load(path.with_suffix(".expected.yaml").read_text())["steps"]
    code, out, _ = simulate_file(path)
    steps = json.loads(out)["steps"]
    assert code == 0 and mismatches(expected, steps, "steps") == []
    change(steps[1])
    assert mismatches(expected, steps, "steps") == [flagged]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("borrow-and-reclaim", id="json on stdout, exit 0"),
        pytest.param("error-checkpoint-input", id="problems on stderr, exit 2"),
    ],
)
def test_berth_simulate_command_line(name: str) -> None:
    path = SCENARIOS / f"{name}.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "berth", "simulate", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr
    check(path, done.returncode, done.stdout, done.stderr)


def test_berth_simulate_table_format() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "berth",
            "simulate",
            str(SCENARIOS / "borrow-and-reclaim.yaml"),
            "--format",
            "table",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "== step 1 at 30m ==" in done.stdout
    assert "preempted: research/sweep" in done.stdout
