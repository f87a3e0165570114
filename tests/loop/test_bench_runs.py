"""``berth bench`` runs every shape end to end at a tiny scale, through the real loop.

Behaviour only, never timings: every workload is admitted and finished, the figures are
present and agree with each other, and the ideal (zero decision latency) is never beaten.
"""

from __future__ import annotations

import json

import pytest

from berth.bench.command import bench_shape
from berth.bench.report import shape_table
from berth.bench.shapes import kueue_shape
from berth.cli.main import main

SCALE = "0.01"


def _bench(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["bench", *args, "--scale", SCALE, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, dict)
    return data


def _check_run(run: dict[str, object], workloads: int, classes: list[str]) -> None:
    assert run["workloads"] == run["admitted"] == run["finished"] == workloads
    admissions, evictions = run["admissions"], run["evictions"]
    assert isinstance(admissions, int) and isinstance(evictions, int)
    assert admissions >= workloads  # a preempted workload is admitted again
    assert 0 < float(run["usage_percent"]) <= 100  # type: ignore[arg-type]
    waits = run["time_to_admission_seconds"]
    assert isinstance(waits, dict) and sorted(waits) == sorted(classes)
    assert sum(w["count"] for w in waits.values()) == workloads
    for wait in waits.values():
        assert 0 <= wait["p50"] <= wait["p90"] <= wait["p99"]
        assert wait["avg"] >= 0
    assert float(run["cycle_p50_ms"]) <= float(run["cycle_p99_ms"])  # type: ignore[arg-type]


def test_kueue_baseline_admits_and_finishes_everything_and_never_beats_the_ideal(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shape = kueue_shape("kueue-baseline", scale=float(SCALE))

    data = _bench(capsys, "kueue-baseline", "--database-url", postgres_url)

    berth, ideal, ratios = data["berth"], data["ideal"], data["ratios"]
    assert isinstance(berth, dict) and isinstance(ideal, dict) and isinstance(ratios, dict)
    classes = ["small", "medium", "large"]
    _check_run(berth, shape.workloads, classes)
    _check_run(ideal, shape.workloads, classes)
    assert berth["cycles"] > 0
    lag = berth["driver_lag_seconds"]  # every submission's lag is reported, apart from Berth's
    assert lag["count"] == shape.workloads and 0 <= lag["p50"] <= lag["p99"]
    assert ideal["driver_lag_seconds"] is None
    runner_lag = berth["runner_lag_seconds"]  # and every finish's, after its due time
    assert runner_lag["count"] == shape.workloads and 0 <= runner_lag["p50"] <= runner_lag["p99"]
    assert ideal["runner_lag_seconds"] is None
    # The ideal admits at the instant quota allows: the real run cannot end sooner.
    assert ideal["wall_seconds"] <= berth["wall_seconds"]
    assert ratios["wall"] == berth["wall_seconds"] / ideal["wall_seconds"]
    targets = data["targets"]
    assert isinstance(targets, list)
    assert [t["result"] in ("PASS", "MISS") for t in targets] == [True] * (2 + len(classes))
    assert targets[-1]["target"] == "arrival driver lag p99 <= 0.1 s"
    assert targets[-1]["measured"] == lag["p99"]
    assert data["kueue_reference"] is None  # published figures are for the full shape only
    # The loop's process (the bench's own) as berth serve would hold it at the end.
    memory = data["loop_memory"]
    assert isinstance(memory, dict) and 0 < memory["rss_mib"] <= memory["peak_mib"]


def test_kueue_large_runs_through_the_loop_with_the_same_figures_as_its_ideal(
    postgres_url: str,
) -> None:
    shape = kueue_shape("kueue-large", scale=float(SCALE))

    report = bench_shape(shape, float(SCALE), postgres_url)

    assert report.berth.workloads == report.berth.finished == shape.workloads
    assert report.ideal.workloads == report.ideal.finished == shape.workloads
    assert report.ideal.wall <= report.berth.wall
    assert list(report.berth.waits) == list(report.ideal.waits) == ["large", "medium", "small"]
    assert report.berth.admissions - report.berth.evictions == shape.workloads
    assert report.ideal.admissions - report.ideal.evictions == shape.workloads
    assert report.memory is not None and 0 < report.memory.rss <= report.memory.peak
    assert "berth serve RSS at end: " in shape_table(report)


def test_drain_admits_the_backlog_and_reports_loop_floor_and_ideal(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _bench(capsys, "drain", "--database-url", postgres_url)

    assert data["workloads"] == 200 and data["queues"] == 2
    berth, floor, ideal, ratios = data["berth"], data["floor"], data["ideal"], data["ratios"]
    assert isinstance(berth, dict) and isinstance(floor, dict) and isinstance(ideal, dict)
    assert isinstance(ratios, dict)
    assert berth["cycles"] >= 1 and ideal["cycles"] >= 1
    rates = [berth["admissions_per_second"], floor["admissions_per_second"]]
    assert all(rate > 0 for rate in rates)
    assert ratios["berth_over_floor"] == rates[0] / rates[1]
    targets = data["targets"]
    assert isinstance(targets, list) and [t["result"] for t in targets] != []
