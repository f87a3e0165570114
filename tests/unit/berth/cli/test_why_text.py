"""``berth why``'s first lines for a workload that is in no ClusterQueue (its LocalQueue does
not exist): the text must not read "in ClusterQueue (no ClusterQueue)"."""

from __future__ import annotations

from typing import Any

import pytest

from berth.cli.why import explain

HISTORY: dict[str, Any] = {
    "namespace": "team-a",
    "name": "train",
    "summary": "waited 3s: 3s Misconfigured",
    "evictions": [],
    "rows": [],
}


def workload(cluster_queue: str | None, state: str = "Pending") -> dict[str, Any]:
    return {
        "namespace": "team-a",
        "name": "train",
        "state": state,
        "clusterQueue": cluster_queue,
        "queueName": "main",
        "priority": 0,
        "reasons": [],
        "position": None,
    }


@pytest.mark.parametrize(
    ("shown", "first", "estimate"),
    [
        pytest.param(
            workload("gpu"),
            "team-a/train is Pending in ClusterQueue gpu (LocalQueue main, priority 0)",
            "Estimated start: unknown (no run history for this ClusterQueue yet, "
            "or waiting alone will not let it start)",
            id="in a ClusterQueue: named",
        ),
        pytest.param(
            workload(None),
            "team-a/train is Pending in no ClusterQueue (LocalQueue main, priority 0)",
            "Estimated start: unknown (it is in no ClusterQueue)",
            id="LocalQueue missing: says it is in no ClusterQueue, and why no estimate",
        ),
        pytest.param(
            workload(None, "Finished"),
            "team-a/train is Finished in no ClusterQueue (LocalQueue main, priority 0)",
            None,
            id="finished without a ClusterQueue: no estimate line",
        ),
    ],
)
def test_first_lines_name_the_queue_or_say_there_is_none(
    shown: dict[str, Any], first: str, estimate: str | None
) -> None:
    lines = explain(shown, HISTORY).splitlines()
    assert lines[0] == first
    assert [x for x in lines if x.startswith("Estimated start")] == ([estimate] if estimate else [])
