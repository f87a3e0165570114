"""The real-time report prints the loop's memory at the end of the run beside the figures."""

from __future__ import annotations

from berth.bench.figures import Figures, Memory
from berth.bench.report import ShapeReport, shape_table, shape_targets

MIB = 1024 * 1024


def _report(memory: Memory | None) -> ShapeReport:
    figures = Figures(wall=10.0, admitted=3, finished=3, workloads=3, admissions=3,
                      evictions=0, usage=50.0)
    return ShapeReport("kueue-baseline", 0.01, 1, figures, figures,
                       shape_targets("kueue-baseline", figures, figures), memory=memory)


def test_prints_the_loops_rss_at_the_end_and_its_peak_in_mib() -> None:
    report = _report(Memory(rss=312 * MIB + 256 * 1024, peak=420 * MIB))

    lines = shape_table(report).splitlines()

    assert "  berth serve RSS at end: 312 MiB (peak 420 MiB)" in lines
    assert report.as_dict()["loop_memory"] == {"rss_mib": 312.25, "peak_mib": 420.0}


def test_a_report_without_a_measure_has_no_memory_row() -> None:
    report = _report(None)

    assert "RSS" not in shape_table(report)
    assert report.as_dict()["loop_memory"] is None
