"""``berth simulate`` input: durations, and invalid scenarios naming file, object and field."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from builders.simulate import KUEUE, cluster_queue, flavor, job, one_queue, write_scenario

from admission.simulate.scenario import DurationError, format_duration, parse_duration
from berth.cli.simulate import run


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        pytest.param("0s", 0, id="zero"),
        pytest.param("90s", 90, id="seconds beyond a minute stay as written"),
        pytest.param("5m", 300, id="minutes"),
        pytest.param("1h30m", 5400, id="hours and minutes"),
        pytest.param("2h0m5s", 7205, id="all three units"),
        pytest.param("36h", 129600, id="hours beyond a day"),
    ],
)
def test_parses_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("", id="empty"),
        pytest.param("5", id="no unit"),
        pytest.param(5, id="a YAML number"),
        pytest.param("30m1h", id="units out of order"),
        pytest.param("1.5h", id="fractions"),
        pytest.param("-5m", id="negative"),
        pytest.param("5 m", id="inner space"),
        pytest.param("1d", id="days are not a unit"),
        pytest.param("5ms", id="milliseconds are not a unit"),
        pytest.param(None, id="missing"),
    ],
)
def test_rejects_what_is_not_a_duration(value: object) -> None:
    with pytest.raises(DurationError, match="not a duration"):
        parse_duration(value)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("876001h", id="just past 100 years"),
        pytest.param("9" * 30 + "h", id="more hours than a timedelta holds"),
    ],
)
def test_a_duration_the_virtual_clock_cannot_reach_is_refused_not_a_crash(text: str) -> None:
    with pytest.raises(DurationError, match="longer than 100 years"):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(0, "0s", id="zero"),
        pytest.param(90, "1m30s", id="seconds roll into minutes"),
        pytest.param(5400, "1h30m", id="zero seconds omitted"),
    ],
)
def test_formats_durations(seconds: int, text: str) -> None:
    assert format_duration(timedelta(seconds=seconds)) == text


# --- input errors: one line per problem naming file, object (Kind/name, when it concerns
# one, as berth apply names it) and field path from the document root; exit 2 -------------


def _bad(objects: list[Any], steps: list[Any]) -> tuple[list[Any], list[Any]]:
    """The scenario of one error case, spread into the parameters."""
    return objects, steps


ERRORS = [
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "craete": [job("team/a", 1)]}]),
        ["steps[0].craete: unknown step key"],
        id="misspelt step key names the step and the key",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s"}, {"at": "5 minutes"}]),
        ["steps[1].at: '5 minutes' is not a duration"],
        id="bad time names the second step",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "create": [{**job("team/a", 1), "kind": {"a": 1}}]}]),
        ["Workload/team/a: steps[0].create[0].kind: must be a string, got a mapping"],
        id="a kind that is a mapping is a problem, not a crash",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "10m"}, {"at": "5m"}]),
        ["steps[1].at: 5m is before the previous step (10m)"],
        id="steps going back in time",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "finish": ["team/ghost"]}]),
        ["steps[0].finish[0]: no workload team/ghost exists at this step"],
        id="finish of an unknown workload",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "deactivate": ["not-a-key"]}]),
        ["steps[0].deactivate[0]: 'not-a-key' is not a workload key namespace/name"],
        id="deactivate needs namespace/name",
    ),
    pytest.param(
        *_bad(
            one_queue(),
            [{"at": "0s", "finish": ["team/a"]}, {"at": "1m", "create": [job("team/a", 1)]}],
        ),
        ["steps[0].finish[0]: no workload team/a exists at this step"],
        id="finish before the workload is created",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "create": [job("team/a", 1), job("team/a", 2)]}]),
        ["Job/team/a: steps[0].create[1].metadata.name: team/a already exists"],
        id="creating the same workload twice",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "delete": [{"kind": "ClusterQueue", "name": "nope"}]}]),
        ["ClusterQueue/nope: steps[0].delete[0]: ClusterQueue nope does not exist at this step"],
        id="delete of an object that does not exist",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "delete": [{"kind": "Gadget", "name": "a"}]}]),
        ["steps[0].delete[0].kind: unknown kind Gadget"],
        id="delete of an unknown kind",
    ),
    pytest.param(
        *_bad(
            one_queue(),
            [
                {
                    "at": "0s",
                    "delete": [{"kind": "ClusterQueue", "name": "team", "namespace": "team"}],
                }
            ],
        ),
        ["ClusterQueue/team: steps[0].delete[0].namespace: ClusterQueue is cluster-scoped"],
        id="delete with a namespace for a cluster-scoped kind",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "delete": [{"kind": "Job", "name": "a"}]}]),
        ["Job/a: steps[0].delete[0].namespace: required to delete a Job"],
        id="deleting a job needs its namespace",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "create": [job("team/a", 1, runtime="soon")]}]),
        ["Job/team/a: steps[0].create[0].metadata.annotations[berth.dev/runtime]: "
         "'soon' is not a duration"],
        id="runtime annotation must be a duration",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "create": [job("team/a", 1, runtime="0s")]}]),
        ["Job/team/a: steps[0].create[0].metadata.annotations[berth.dev/runtime]: "
         "must be longer than 0s"],
        id="runtime annotation must be positive",
    ),
    pytest.param(
        *_bad([*one_queue(), job("team/a", 1)], [{"at": "0s"}]),
        ["Job/team/a: objects[3].kind: Jobs are created by a step's create list"],
        id="jobs do not belong in objects",
    ),
    pytest.param(
        *_bad([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                "status": {"allocatable": {"nvidia.com/gpu": "lots"}}}], []),
        ["Node/n1: objects[0].status.allocatable[nvidia.com/gpu]: "],
        id="a node's allocatable must be quantities",
    ),
    pytest.param(
        *_bad(
            one_queue(),
            [
                {
                    "at": "0s",
                    "apply": [{"apiVersion": KUEUE, "kind": "Topology", "metadata": {"name": "t"}}],
                }
            ],
        ),
        ["Topology/t: steps[0].apply[0].spec: required field missing",
         "Topology/t: steps[0].apply[0].spec.levels: required field missing"],
        id="a topology needs levels",
    ),
    pytest.param(
        *_bad(one_queue(), [{"at": "0s", "checkpointed": ["team/a"]}]),
        ["steps[0].checkpointed[0]: no workload team/a exists at this step"],
        id="a checkpoint names a workload that exists",
    ),
    pytest.param(
        *_bad(
            one_queue(),
            [
                {
                    "at": "0s",
                    "create": [job("team/a", 1, annotations={"berth.dev/checkpoint-grace": "10"})],
                }
            ],
        ),
        ["Job/team/a: steps[0].create[0].metadata.annotations[berth.dev/checkpoint-grace]: "
         "'10' is not a duration"],
        id="a checkpoint grace must be a duration",
    ),
]


@pytest.mark.parametrize(("objects", "steps", "expected"), ERRORS)
def test_invalid_scenarios_exit_2_naming_file_object_and_field(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    objects: list[Any],
    steps: list[Any],
    expected: list[str],
) -> None:
    path = write_scenario(tmp_path, objects, steps)
    assert run(path, "json") == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == len(expected), err
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(f"{path}: {start}"), line


def test_manifest_problems_are_prefixed_with_their_place_in_the_scenario(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad_queue = cluster_queue("team", 8)
    bad_queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "lots"
    bad_job = job("team/a", 1)
    bad_job["spec"]["parallelism"] = "two"
    path = write_scenario(tmp_path, [flavor(), bad_queue], [{"at": "0s", "create": [bad_job]}])
    assert run(path, "json") == 2
    err = capsys.readouterr().err.splitlines()
    assert any(
        line.startswith(
            f"{path}: ClusterQueue/team: objects[1].spec.resourceGroups[0].flavors[0].resources[0]"
        )
        for line in err
    ), err
    assert any(
        line.startswith(f"{path}: Job/team/a: steps[0].create[0].spec.parallelism") for line in err
    ), err


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        pytest.param("steps: [\n  - at: 0s\n   bad", "", id="YAML syntax error"),
        pytest.param("- just\n- a list\n", "one YAML mapping", id="not a mapping"),
        pytest.param("name: x\nstpes: []\n", "stpes: unknown key", id="misspelt top-level key"),
    ],
)
def test_unreadable_scenarios_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, fragment: str
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    assert run(str(path), "table") == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"{path}: ") and fragment in err
    assert "Traceback" not in err


def test_missing_file_and_bad_format_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(str(tmp_path / "absent.yaml"), "json") == 2
    assert "cannot read" in capsys.readouterr().err
    path = write_scenario(tmp_path, one_queue(), [{"at": "0s"}])
    assert run(path, "xml") == 2
    assert "--format" in capsys.readouterr().err


def test_reports_every_problem_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    steps = [{"at": "soon"}, {"at": "1m", "finish": ["team/x"]}, {"at": "2m", "bogus": 1}]
    path = write_scenario(tmp_path, one_queue(), steps)
    assert run(path, "json") == 2
    assert len(capsys.readouterr().err.splitlines()) == 3
