"""The capacity examples in examples/ run through ``berth simulate`` as their comments say."""

from __future__ import annotations

import pytest
from builders.paths import EXAMPLES

from admission.simulate.run import simulate
from admission.simulate.scenario import parse_scenario


def outcome(name: str) -> dict[str, tuple[str, str | None, dict[str, int] | None]]:
    """Per workload of the last step: state, primary reason code, pods per node."""
    path = EXAMPLES / name
    result = simulate(parse_scenario(path.read_text(), str(path)))
    out = {}
    for view in result.steps[-1].workloads:
        workload = view.workload
        code = str(view.status.reason.code) if view.status else None
        placement = workload.admission.placement if workload.admission else None
        nodes = dict(placement[0].nodes) if placement else None
        out[workload.key] = (str(workload.state), code, nodes)
    return out


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        pytest.param("scenario-sick-node.yaml", {
            "team/pretrain": ("Pending", "UnhealthyCapacity", None)}, id="sick node"),
        pytest.param("scenario-mig-and-whole-gpus.yaml", {
            "research/notebooks": ("Admitted", None, {"mig-01": 7}),
            "research/finetune": ("Admitted", None, {"gpu-01": 1}),
            "research/one-more-slice": ("Pending", "InsufficientCapacity", None),
        }, id="MIG slices and whole GPUs"),
    ],
)
def test_example_runs_as_documented(
        name: str, expected: dict[str, tuple[str, str | None, dict[str, int] | None]]) -> None:
    assert outcome(name) == expected
