"""``berth simulate``: the virtual-clock runner end to end, its JSON and table output."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders.frameworks import workload
from builders.simulate import (
    GPU,
    KUEUE,
    cluster_queue,
    flavor,
    job,
    local_queue,
    one_queue,
    priority_class,
    write_scenario,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from admission.kube.kinds.jobset import JOBSET
from admission.simulate.output import to_dict
from admission.simulate.run import SimulationError, simulate
from admission.simulate.scenario import parse_scenario
from berth.cli.simulate import run
from quota.core.quantity import parse_quantity


def simulate_doc(tmp_path: Path, objects: list[Any], steps: list[Any]) -> list[dict[str, Any]]:
    """Run a scenario through the CLI entry point and return its JSON steps."""
    path = write_scenario(tmp_path, objects, steps)
    out = _capture(path)
    return list(json.loads(out)["steps"])


def _capture(path: str) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = run(path, "json")
    assert code == 0
    return buffer.getvalue()


def states(step: dict[str, Any]) -> dict[str, str]:
    return {key: body["state"] for key, body in step["workloads"].items()}


def test_json_shape_follows_the_spec(tmp_path: Path) -> None:
    steps = simulate_doc(
        tmp_path,
        one_queue(8),
        [{"at": "1h30m", "create": [job("team/a", 4, count=2), job("team/b", 4)]}],
    )
    (step,) = steps
    assert set(step) == {"at", "workloads", "preempted", "clusterQueues"}
    assert step["at"] == "1h30m"
    admitted, pending = step["workloads"]["team/a"], step["workloads"]["team/b"]
    assert admitted == {
        "state": "Admitted",
        "clusterQueue": "team",
        "podSets": {"main": {"count": 2, "flavors": {GPU: "default"}}},
        "borrowing": False,
    }
    assert pending["state"] == "Pending"
    assert {"reason", "reasons", "position", "clusterQueue"} <= set(pending)
    assert pending["reason"] == pending["reasons"][0]
    assert set(pending["reason"]) == {"code", "message", "details"}
    assert pending["reason"]["code"] == "WaitingForQuota"
    assert pending["position"] == 1
    assert step["preempted"] == []
    assert step["clusterQueues"] == {
        "team": {
            "usage": {"default": {GPU: "8"}},
            "borrowed": {"default": {GPU: "0"}},
            "pending": 1,
            "admitted": 1,
        }
    }


RUNNER = [
    pytest.param(
        one_queue(8),
        [
            {"at": "0s", "create": [job("team/a", 8, runtime="10m"), job("team/b", 8)]},
            {"at": "20m"},
        ],
        [{"team/a": "Admitted", "team/b": "Pending"}, {"team/a": "Finished", "team/b": "Admitted"}],
        id="a runtime completion between steps lets the next job in",
    ),
    pytest.param(
        one_queue(8),
        [
            {"at": "0s", "create": [job(f"team/j{i}", 8, runtime="10m") for i in range(4)]},
            {"at": "25m"},
            {"at": "40m"},
        ],
        [
            {
                "team/j0": "Admitted",
                "team/j1": "Pending",
                "team/j2": "Pending",
                "team/j3": "Pending",
            },
            {
                "team/j0": "Finished",
                "team/j1": "Finished",
                "team/j2": "Admitted",
                "team/j3": "Pending",
            },
            {
                "team/j0": "Finished",
                "team/j1": "Finished",
                "team/j2": "Finished",
                "team/j3": "Finished",
            },
        ],
        id="completions chain through the time between steps",
    ),
    pytest.param(
        one_queue(8),
        [
            {"at": "0s", "create": [job("team/a", 8, runtime="10m"), job("team/b", 8)]},
            {"at": "10m"},
        ],
        [{"team/a": "Admitted", "team/b": "Pending"}, {"team/a": "Finished", "team/b": "Admitted"}],
        id="a completion at a step's instant happens before that step's cycles",
    ),
    pytest.param(
        one_queue(8),
        [{"at": "0s", "create": [job(f"team/j{i}", 2) for i in range(5)]}],
        [
            {
                "team/j0": "Admitted",
                "team/j1": "Admitted",
                "team/j2": "Admitted",
                "team/j3": "Admitted",
                "team/j4": "Pending",
            }
        ],
        id="cycles run to a fixed point: everything that fits is admitted at once",
    ),
    pytest.param(
        one_queue(8),
        [{"at": "0s", "create": [job("team/zed", 8), job("team/abe", 8)]}],
        [{"team/zed": "Admitted", "team/abe": "Pending"}],
        id="creation order within a step is the list order, not the name order",
    ),
    pytest.param(
        one_queue(8),
        [
            {"at": "0s", "create": [job("team/a", 8), job("team/b", 8)]},
            {"at": "5m", "finish": ["team/a"]},
        ],
        [{"team/a": "Admitted", "team/b": "Pending"}, {"team/a": "Finished", "team/b": "Admitted"}],
        id="finish releases quota",
    ),
    pytest.param(
        one_queue(8),
        [
            {"at": "0s", "create": [job("team/a", 8), job("team/b", 8)]},
            {"at": "5m", "delete": [{"kind": "Job", "name": "a", "namespace": "team"}]},
        ],
        [{"team/a": "Admitted", "team/b": "Pending"}, {"team/b": "Admitted"}],
        id="delete removes the workload and releases its quota",
    ),
    pytest.param(
        one_queue(8),
        [
            {"at": "0s", "create": [job("team/a", 8), job("team/b", 8)]},
            {"at": "5m", "deactivate": ["team/a"]},
        ],
        [
            {"team/a": "Admitted", "team/b": "Pending"},
            {"team/a": "Deactivated", "team/b": "Admitted"},
        ],
        id="deactivate releases quota and keeps the workload listed",
    ),
    pytest.param(
        one_queue(8),
        [
            {"at": "0s", "create": [job("team/a", 8)]},
            {
                "at": "5m",
                "delete": [{"kind": "Job", "name": "a", "namespace": "team"}],
                "create": [job("team/a", 4)],
            },
        ],
        [{"team/a": "Admitted"}, {"team/a": "Admitted"}],
        id="a deleted job may be created again in the same step",
    ),
]


@pytest.mark.parametrize(("objects", "steps", "expected"), RUNNER)
def test_runner_moves_workloads_through_virtual_time(
    tmp_path: Path, objects: list[Any], steps: list[Any], expected: list[dict[str, str]]
) -> None:
    result = simulate_doc(tmp_path, objects, steps)
    assert [states(step) for step in result] == expected
    # Workloads are listed in creation order, like the expectations above.
    assert [list(step["workloads"]) for step in result] == [list(e) for e in expected]


def test_deactivated_workload_shows_why_and_holds_nothing(tmp_path: Path) -> None:
    steps = [
        {"at": "0s", "create": [job("team/a", 8), job("team/b", 8)]},
        {"at": "5m", "deactivate": ["team/a"]},
    ]
    _, later = simulate_doc(tmp_path, one_queue(8), steps)
    body = later["workloads"]["team/a"]
    assert body["state"] == "Deactivated"
    assert body["reason"]["code"] == "Deactivated"
    assert "position" not in body and "podSets" not in body
    assert later["clusterQueues"]["team"] == {
        "usage": {"default": {GPU: "8"}},
        "borrowed": {"default": {GPU: "0"}},
        "pending": 0,
        "admitted": 1,
    }


def test_deactivated_workloads_take_no_place_in_the_queue(tmp_path: Path) -> None:
    made = [job("team/a", 8), job("team/b", 8), job("team/c", 8)]
    steps = [{"at": "0s", "create": made}, {"at": "1m", "deactivate": ["team/b"]}]
    _, later = simulate_doc(tmp_path, one_queue(8), steps)
    assert later["workloads"]["team/c"]["position"] == 1


def test_workload_created_inactive_starts_deactivated(tmp_path: Path) -> None:
    workload = {
        "apiVersion": KUEUE,
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "team"},
        "spec": {
            "queueName": "q",
            "active": False,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {
                            "containers": [{"name": "c", "resources": {"requests": {GPU: "1"}}}]
                        }
                    },
                }
            ],
        },
    }
    (step,) = simulate_doc(tmp_path, one_queue(8), [{"at": "0s", "create": [workload]}])
    assert step["workloads"]["team/w"]["state"] == "Deactivated"
    assert step["clusterQueues"]["team"]["usage"] == {"default": {GPU: "0"}}


def test_deleting_a_cluster_queue_misconfigures_its_waiting_workloads(tmp_path: Path) -> None:
    steps = [
        {"at": "0s", "create": [job("team/a", 8), job("team/b", 8)]},
        {"at": "1m", "delete": [{"kind": "ClusterQueue", "name": "team"}]},
    ]
    _, later = simulate_doc(tmp_path, one_queue(8), steps)
    assert later["clusterQueues"] == {}
    assert later["workloads"]["team/a"]["state"] == "Admitted"  # running work is not evicted
    assert later["workloads"]["team/b"]["reason"]["code"] == "Misconfigured"


def test_preemption_victims_are_requeued_at_once_and_listed(tmp_path: Path) -> None:
    objects = [
        flavor(),
        cluster_queue("team", 8, preemption={"withinClusterQueue": "LowerPriority"}),
        local_queue("team", "team"),
        priority_class("high", 100),
    ]
    steps = [
        {"at": "0s", "create": [job("team/low", 8)]},
        {"at": "1m", "create": [job("team/urgent", 8, priority="high")]},
        {"at": "2m"},
    ]
    first, second, third = simulate_doc(tmp_path, objects, steps)
    assert states(first) == {"team/low": "Admitted"}
    assert second["preempted"] == ["team/low"]
    assert states(second) == {"team/low": "Pending", "team/urgent": "Admitted"}
    assert second["workloads"]["team/low"]["reason"]["code"] == "WaitingForQuota"
    assert third["preempted"] == []


def test_borrowing_is_reported_with_usage_and_borrowed(tmp_path: Path) -> None:
    objects = [
        flavor(),
        cluster_queue("a", 4, cohort="c"),
        cluster_queue("b", 4, cohort="c"),
        local_queue("a", "a"),
        local_queue("b", "b"),
    ]
    (step,) = simulate_doc(tmp_path, objects, [{"at": "0s", "create": [job("a/big", 6)]}])
    assert step["workloads"]["a/big"]["borrowing"] is True
    assert step["clusterQueues"]["a"]["usage"] == {"default": {GPU: "6"}}
    assert step["clusterQueues"]["a"]["borrowed"] == {"default": {GPU: "2"}}
    assert step["clusterQueues"]["b"]["usage"] == {"default": {GPU: "0"}}


def test_engine_that_never_settles_is_a_clear_error(tmp_path: Path) -> None:
    path = write_scenario(tmp_path, one_queue(8), [{"at": "5m", "create": [job("team/a", 1)]}])
    scenario = parse_scenario(Path(path).read_text(), path)
    with pytest.raises(SimulationError, match="no fixed point after 1 cycles"):
        simulate(scenario, max_cycles=1)


def test_table_format_is_readable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = [{"at": "0s", "create": [job("team/a", 8), job("team/b", 8)]}]
    path = write_scenario(tmp_path, one_queue(8), steps)
    assert run(path, "table") == 0
    out = capsys.readouterr().out
    assert "== step 0 at 0s ==" in out
    assert "team/a" in out and "Admitted" in out
    assert "#1 WaitingForQuota" in out
    assert "preempted: none" in out


def test_stdin_is_read_for_dash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_scenario(tmp_path, one_queue(8), [{"at": "0s", "create": [job("team/a", 1)]}])
    monkeypatch.setattr("sys.stdin", io.StringIO(Path(path).read_text()))
    assert run("-", "json") == 0
    assert json.loads(capsys.readouterr().out)["name"] == "test"


# --- properties ---------------------------------------------------------------------------

JOBS = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=8),  # GPUs per pod
        st.integers(min_value=1, max_value=3),  # pods
        st.sampled_from([None, "5m", "20m", "1h"]),  # runtime
        st.integers(min_value=0, max_value=90),  # minute of creation
    ),
    max_size=8,
)


def _property_scenario(jobs: list[tuple[int, int, str | None, int]]) -> str:
    by_minute: dict[int, list[dict[str, Any]]] = {}
    for index, (gpus, pods, runtime, minute) in enumerate(jobs):
        by_minute.setdefault(minute, []).append(
            job(f"team/j{index}", gpus, count=pods, runtime=runtime)
        )
    steps: list[dict[str, Any]] = [
        {"at": f"{minute}m", "create": made} for minute, made in sorted(by_minute.items())
    ]
    # Runtimes have all run out by 5h; the rest (never admitted, or without runtime) end now.
    steps.append({"at": "5h", "finish": [f"team/j{i}" for i in range(len(jobs))]})
    steps.append({"at": "10h"})
    return yaml.safe_dump({"objects": one_queue(12), "steps": steps})


@settings(max_examples=40, deadline=None)
@given(JOBS)
def test_quota_is_never_exceeded_and_finished_work_gives_everything_back(
    jobs: list[tuple[int, int, str | None, int]],
) -> None:
    text = _property_scenario(jobs)
    result = to_dict(simulate(parse_scenario(text, "property.yaml")))
    steps = result["steps"]
    assert isinstance(steps, list)
    for step in steps:
        used = parse_quantity(step["clusterQueues"]["team"]["usage"]["default"][GPU])
        assert used <= parse_quantity(12)
    last = steps[-1]
    assert all(body["state"] == "Finished" for body in last["workloads"].values())
    assert last["clusterQueues"]["team"]["usage"] == {"default": {GPU: "0"}}
    assert to_dict(simulate(parse_scenario(text, "property.yaml"))) == result  # deterministic


def test_a_framework_workload_is_created_and_deleted_like_a_job(tmp_path: Path) -> None:
    jobset = workload(JOBSET, "js")  # two pod sets of one 4-GPU pod
    jobset["metadata"].update(namespace="team", labels={"kueue.x-k8s.io/queue-name": "q"})
    steps = simulate_doc(
        tmp_path,
        one_queue(8),
        [{"at": "0s", "create": [jobset, job("team/j", 4)]},
         {"at": "1m", "delete": [{"kind": "JobSet", "name": "js", "namespace": "team"}]}],
    )  # fmt: skip
    assert states(steps[0]) == {"team/js": "Admitted", "team/j": "Pending"}
    assert states(steps[1])["team/j"] == "Admitted"
