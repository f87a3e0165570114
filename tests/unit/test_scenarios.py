"""Every ``tests/scenarios/*.yaml`` run through ``berth simulate`` against its expectation.

``<name>.expected.yaml`` holds ``exit`` (default 0), ``stderr`` (fragments, one per expected
line) and ``steps``: one entry per step of the output. Expectations match as subsets:
a mapping names only the keys it cares about, a list must match item by item, and a
string where the output has a reason object matches that reason's ``code``.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.simulate_cli import run

SCENARIOS = Path(__file__).resolve().parent.parent / "scenarios"
FILES = sorted(p for p in SCENARIOS.glob("*.yaml") if not p.name.endswith(".expected.yaml"))


def mismatches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where ``actual`` fails the subset expectation, as ``path: why`` lines."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected a mapping, got {actual!r}"]
        found = []
        for key, value in expected.items():
            if key not in actual:
                found.append(f"{path}.{key}: missing (have {sorted(actual)})")
            else:
                found.extend(mismatches(value, actual[key], f"{path}.{key}"))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected {len(expected)} items, got {actual!r}"]
        return [
            line
            for index, (want, have) in enumerate(zip(expected, actual, strict=True))
            for line in mismatches(want, have, f"{path}[{index}]")
        ]
    if isinstance(expected, str) and isinstance(actual, dict) and "code" in actual:
        actual = actual["code"]
    return [] if expected == actual else [f"{path}: expected {expected!r}, got {actual!r}"]


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


@pytest.mark.parametrize(
    ("expected", "actual", "wrong"),
    [
        pytest.param({"a": 1}, {"a": 1, "b": 2}, False, id="extra keys in the output are fine"),
        pytest.param({"a": 1}, {"a": 2}, True, id="a differing value fails"),
        pytest.param({"a": 1}, {"b": 1}, True, id="a missing key fails"),
        pytest.param([1], [1, 2], True, id="lists must have the same length"),
        pytest.param(
            "WaitingForQuota",
            {"code": "WaitingForQuota", "message": "m"},
            False,
            id="a code stands for a whole reason",
        ),
        pytest.param(
            "Misconfigured", {"code": "WaitingForQuota"}, True, id="a different code fails"
        ),
    ],
)
def test_expectations_match_as_subsets(expected: Any, actual: Any, wrong: bool) -> None:
    assert bool(mismatches(expected, actual)) is wrong


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
