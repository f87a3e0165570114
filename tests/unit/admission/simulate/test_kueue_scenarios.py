"""Cases ported from Kueue's own scheduler tests, run through ``berth simulate``.

Each ``tests/scenarios/kueue/<case>.yaml`` opens with a ``# Kueue:`` line naming the test
file and case it was ported from; ``<case>.expected.yaml`` holds what Kueue's test expects,
as a digest of each step: ``admitted`` (every admitted workload, each pod set's count and
flavors), ``pending`` and ``preempted`` (sorted keys), and any other state (``finished``,
``evicting``, ``deactivated``). Empty ones are left out. The digest is compared exactly, so
a workload admitted, left waiting, evicted or given a flavor other than Kueue's fails;
reasons, positions and usage are not compared (Kueue's tests do not assert Berth's).

A case where Berth knowingly decides otherwise carries ``knownDifference: {rule, why}``:
it runs as a strict xfail, so the fix that makes Berth agree flips it to a failure that
asks for the marker to go.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders.paths import SCENARIOS

from berth.cli.simulate import run

KUEUE = SCENARIOS / "kueue"
FILES = sorted(p for p in KUEUE.glob("*.yaml") if not p.name.endswith(".expected.yaml"))
RULES = (
    "flavor-fungibility",
    "classical-preemption",
    "partial-admission",
    "hierarchical-cohorts",
    "capacity-reservation",
    "other",
)
OTHER_STATES = {"Finished": "finished", "Evicting": "evicting", "Deactivated": "deactivated"}


def digest(step: dict[str, Any]) -> dict[str, Any]:
    """What Kueue's tests assert of one step of ``berth simulate``'s output."""
    found: dict[str, Any] = {"at": step["at"]}
    admitted = {
        key: {name: {"count": ps["count"], "flavors": ps["flavors"]}
              for name, ps in view["podSets"].items()}
        for key, view in step["workloads"].items() if view["state"] == "Admitted"
    }
    if admitted:
        found["admitted"] = admitted
    for state, field in (("Pending", "pending"), *OTHER_STATES.items()):
        keys = sorted(k for k, view in step["workloads"].items() if view["state"] == state)
        if keys:
            found[field] = keys
    if step["preempted"]:
        found["preempted"] = sorted(step["preempted"])
    return found


def expectation(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.with_suffix(".expected.yaml").read_text())
    return loaded


def marks(path: Path) -> list[pytest.MarkDecorator]:
    known = expectation(path).get("knownDifference")
    if known is None:
        return []
    return [pytest.mark.xfail(strict=True, reason=f"{known['rule']}: {known['why']}")]


def outcome(path: Path) -> list[dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(str(path), "json")
    assert code == 0, err.getvalue()
    return [digest(step) for step in json.loads(out.getvalue())["steps"]]


def test_every_case_names_its_source_and_has_an_expectation() -> None:
    assert len(FILES) >= 60
    for path in FILES:
        assert path.read_text().startswith("# Kueue: "), path.name
        known = expectation(path).get("knownDifference")
        assert known is None or (known["rule"] in RULES and known["why"]), path.name


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=marks(p)) for p in FILES])
def test_berth_decides_as_kueue(path: Path) -> None:
    assert outcome(path) == expectation(path)["steps"]


def test_a_wrong_decision_fails_the_digest() -> None:
    step = {"at": "0s", "preempted": [], "workloads": {
        "ns/a": {"state": "Admitted",
                 "podSets": {"main": {"count": 2, "flavors": {"cpu": "spot"}}}},
        "ns/b": {"state": "Pending"},
    }}
    want = {"at": "0s", "admitted": {"ns/a": {"main": {"count": 2, "flavors": {"cpu": "spot"}}}},
            "pending": ["ns/b"]}
    assert digest(step) == want
    other_flavor = {**step, "workloads": {**step["workloads"], "ns/a": {
        "state": "Admitted", "podSets": {"main": {"count": 2, "flavors": {"cpu": "on-demand"}}}}}}
    fewer_pods = {**step, "workloads": {**step["workloads"], "ns/a": {
        "state": "Admitted", "podSets": {"main": {"count": 1, "flavors": {"cpu": "spot"}}}}}}
    both_admitted = {**step, "workloads": {**step["workloads"], "ns/b": step["workloads"]["ns/a"]}}
    evicted = {**step, "preempted": ["ns/c"]}
    for wrong in (other_flavor, fewer_pods, both_admitted, evicted):
        assert digest(wrong) != want
