"""The drain benchmark runs end to end at a tiny scale (figures are printed by the script)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "drain.py"


def _drain() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_drain", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_drain_benchmark_admits_every_workload_and_reports_both_rates(
    postgres_url: str,
) -> None:
    figures = _drain().run(workloads=60, queues=3, database_url=postgres_url)

    assert figures["workloads"] == 60
    assert figures["loop_per_second"] > 0 and figures["floor_per_second"] > 0
    assert figures["ratio"] == figures["loop_per_second"] / figures["floor_per_second"]
