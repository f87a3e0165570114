"""Kueue's documentation examples for fair sharing (copies under examples/kueue/) work
unchanged: the configurations are ``berth serve --config`` files, the admission fair
sharing setup applies with ``berth apply`` and its Jobs submit with ``berth submit``."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import pytest
from builders.paths import EXAMPLES

from berth import settings
from quota.core.fairness import FINAL, INITIAL, AdmissionFairSharing, Fairness

KUEUE = EXAMPLES / "kueue"
Berth = Any  # the `berth` fixture of conftest.py: runs the real CLI


@pytest.mark.parametrize(
    ("name", "fairness"),
    [
        pytest.param("fair-sharing-configuration.yaml", Fairness(True, (FINAL, INITIAL)),
                     id="Kueue's v1beta2 Configuration turns fair sharing on by its section"),
        pytest.param("admission-fair-sharing-configuration.yaml", Fairness(admission=AdmissionFairSharing(
            timedelta(hours=168), timedelta(minutes=5), {"cpu": 2000, "memory": 1000})),
                     id="Kueue's admission fair sharing configuration"),
    ],
)  # fmt: skip
def test_kueues_configurations_load_unchanged(name: str, fairness: Fairness) -> None:
    loaded = settings.load(env={"BERTH_CONFIG": str(KUEUE / name)})
    assert loaded.fair_sharing.fairness() == fairness


def test_kueues_admission_fair_sharing_example_runs_in_berth_serve(berth: Berth) -> None:
    config = KUEUE / "admission-fair-sharing-configuration.yaml"
    server = berth.serve("--config", str(config))
    berth.wait_ready()
    applied = berth.run("apply", "-f", str(KUEUE / "admission-fair-sharing-setup.yaml"))
    assert applied.returncode == 0, applied.stderr
    assert "clusterqueue/cluster-queue created" in applied.stdout
    queue = _get(berth, "clusterqueue", "cluster-queue")
    assert queue["spec"]["admissionScope"] == {"admissionMode": "UsageBasedAdmissionFairSharing"}
    assert _get(berth, "localqueue", "lq-a", "-n", "default")["spec"]["fairSharing"] == {
        "weight": "1"}
    for job in ("lq-a-simple-job.yaml", "lq-b-simple-job.yaml"):
        submitted = berth.run("submit", "-f", str(KUEUE / job))
        assert submitted.returncode == 0, submitted.stderr
    _wait_admitted(berth, 2)  # 3 CPUs each of 9: both run
    berth.stop(server)


def _get(berth: Berth, kind: str, name: str, *more: str) -> dict[str, Any]:
    result = berth.run("get", kind, name, *more, "-o", "json")
    assert result.returncode == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


def _wait_admitted(berth: Berth, count: int, seconds: float = 60) -> None:
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        result = berth.run("get", "workloads", "-n", "default", "-o", "json")
        items = json.loads(result.stdout)["items"] if result.returncode == 0 else []
        if sum(1 for i in items if i.get("state") == "Admitted") >= count:
            return
        time.sleep(0.5)
    raise AssertionError(f"fewer than {count} workloads admitted: {result.stdout[-2000:]}")


def test_examples_are_unchanged_copies_listed_in_their_readme() -> None:
    listed = (KUEUE / "README.md").read_text()
    for path in KUEUE.glob("*.yaml"):
        assert f"`{path.name}`" in listed, path.name
