"""``waitForPodsReady.requeuingStrategy.timestamp`` through ``berth simulate``: the time a
workload requeued after PodsReadyTimeout queues by decides who heads a StrictFIFO queue."""

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

# StrictFIFO, 8 GPUs: stuck (4, created first) and filler (4) admitted at 0s, later (8)
# waiting from 1s; stuck times out at 5m and backs off 1s; at 5m1s it would fit in
# filler's remainder, later would not (the file's comments tell each step).
SCENARIO = SCENARIOS / "pods-ready-requeue-order.yaml"


def requeue_order(tmp_path: Path, timestamp: str) -> list[dict[str, Any]]:
    """``berth simulate``'s steps for the scenario with ``timestamp`` in its config."""
    doc = yaml.safe_load(SCENARIO.read_text())
    doc["config"]["waitForPodsReady"]["requeuingStrategy"]["timestamp"] = timestamp
    path = tmp_path / SCENARIO.name
    path.write_text(yaml.safe_dump(doc))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run(str(path), "json") == 0
    return list(json.loads(out.getvalue())["steps"])


def _view(step: dict[str, Any]) -> dict[str, tuple[str, int | None]]:
    return {key: (body["state"], body.get("position"))
            for key, body in step["workloads"].items()}  # fmt: skip


@pytest.mark.parametrize(
    ("timestamp", "backing_off", "after_backoff"),
    [
        pytest.param(
            "Eviction",
            {"team/stuck": 2, "team/later": 1},
            {"team/stuck": ("Pending", 2), "team/later": ("Pending", 1),
             "team/filler": ("Admitted", None)},
            id="eviction: the timed-out workload queues behind later and is blocked by it",
        ),
        pytest.param(
            "Creation",
            {"team/stuck": 1, "team/later": 2},
            {"team/stuck": ("Admitted", None), "team/later": ("Pending", 1),
             "team/filler": ("Admitted", None)},
            id="creation: the timed-out workload keeps its place at the head and is admitted",
        ),
    ],
)  # fmt: skip
def test_the_requeuing_timestamp_decides_who_heads_the_queue_after_a_timeout(
    tmp_path: Path,
    timestamp: str,
    backing_off: dict[str, int],
    after_backoff: dict[str, tuple[str, int | None]],
) -> None:
    steps = requeue_order(tmp_path, timestamp)

    timed_out = steps[2]  # 5m: evicted (PodsReadyTimeout), backing off, already in place
    assert timed_out["preempted"] == ["team/stuck"]
    assert {k: v for k, (state, v) in _view(timed_out).items() if state == "Pending"} == (
        backing_off)
    assert _view(steps[3]) == after_backoff
