"""``berth why``'s history lines: the eviction tally and the rows, cut to the last few."""

from __future__ import annotations

from typing import Any

import pytest

from berth.cli.history import ROWS_SHOWN, history_lines


def history(rows: int, evictions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "namespace": "team-a",
        "name": "train",
        "summary": "waited 6s: 6s WaitingForQuota",
        "evictions": evictions,
        "rows": [{"at": f"2026-12-01T08:00:{i % 60:02d}+00:00", "text": f"row {i}"} for i in range(rows)],
    }


def by(workload: str, queue: str | None = "gpu-b") -> dict[str, Any]:
    return {"reason": "Preempted", "preemptor": {"workload": workload, "clusterQueue": queue}}


NODE = {"reason": "NodeUnhealthy", "preemptor": None}


@pytest.mark.parametrize(
    ("evictions", "line"),
    [
        pytest.param([], None, id="never evicted: no tally"),
        pytest.param([by("team-b/x")], "Evicted by: team-b/x (ClusterQueue gpu-b) 1×", id="one preemptor"),
        pytest.param(
            [by("team-b/x"), NODE, by("team-b/y"), by("team-b/x")],
            "Evicted by: team-b/x (ClusterQueue gpu-b) 2×, NodeUnhealthy 1×, team-b/y (ClusterQueue gpu-b) 1×",
            id="most frequent first; an eviction without a preemptor by its reason",
        ),
        pytest.param(
            [by("team-b/gone", None)], "Evicted by: team-b/gone (ClusterQueue unknown) 1×",
            id="a preemptor whose ClusterQueue is unknown says so",
        ),
    ],
)
def test_eviction_tally(evictions: list[dict[str, Any]], line: str | None) -> None:
    lines = history_lines(history(2, evictions))
    assert lines[0] == "History: waited 6s: 6s WaitingForQuota"
    assert [x for x in lines if x.startswith("Evicted by: ")] == ([line] if line else [])


@pytest.mark.parametrize(
    ("rows", "note", "first"),
    [
        pytest.param(3, None, "row 0", id="a short history is printed whole"),
        pytest.param(ROWS_SHOWN, None, "row 0", id="exactly as many rows as shown: nothing left out"),
        pytest.param(
            250, f"  … {250 - ROWS_SHOWN} earlier rows (all of them: GET /api/v1/workloads/team-a/train/history)",
            f"row {250 - ROWS_SHOWN}", id="a workload evicted many times shows its last rows and says where the rest are",
        ),
    ],
)
def test_rows_are_cut_to_the_last_ones(rows: int, note: str | None, first: str) -> None:
    lines = history_lines(history(rows, []))[1:]
    if note is not None:
        assert lines.pop(0) == note
    assert len(lines) == min(rows, ROWS_SHOWN)
    assert lines[0].endswith(f"  {first}") and lines[-1].endswith(f"  row {rows - 1}")
    assert lines[0].startswith("  2026-12-01 08:00:")
