"""An admission's node placement survives the ledger's JSON codec, and old rows still read."""

from __future__ import annotations

import json

import pytest

from quota.core.workload import Admission, PodSetAssignment, PodSetPlacement
from quota.ledger.codec import admission_json, from_admission

ASSIGNED = (PodSetAssignment("main", 2, {"nvidia.com/gpu": "h100"}, {"nvidia.com/gpu": 16000}),)


@pytest.mark.parametrize(
    "admission",
    [
        pytest.param(Admission("team", ASSIGNED), id="without a placement (quota only)"),
        pytest.param(Admission("team", ASSIGNED, ()), id="with an empty placement"),
        pytest.param(Admission("team", ASSIGNED, (PodSetPlacement("main", {"a": 1, "b": 1}),)),
                     id="pods per node"),
        pytest.param(
            Admission("team", ASSIGNED,
                      (PodSetPlacement("main", {"b1": 2}, "topology.rack", "r2"),)),
            id="pods per node inside a topology domain"),
    ],
)
def test_admission_round_trips_through_json(admission: Admission) -> None:
    stored = json.loads(json.dumps(admission_json(admission)))
    assert from_admission(stored) == admission


def test_an_admission_written_before_placements_reads_as_unplaced() -> None:
    old = {"clusterQueue": "team", "podSetAssignments": [
        {"name": "main", "count": 2, "flavors": {"nvidia.com/gpu": "h100"},
         "usage": {"nvidia.com/gpu": 16000}}]}
    assert from_admission(old) == Admission("team", ASSIGNED, None)
