"""Which pods count as Ready for waitForPodsReady, and which belong to the current run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from admission.kube.readiness import pod_ready, pods_admitted, ready_pod_count
from quota.core.workload import Admission, PodSet, PodSetAssignment, Workload, WorkloadState

T0 = datetime(2026, 12, 1, 9, tzinfo=UTC)


def pod(status: str | None = "True", *, phase: str = "Running", deleting: bool = False) -> Any:
    meta: dict[str, Any] = {"name": "p"}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-01T09:00:00Z"
    conditions = [] if status is None else [{"type": "Ready", "status": status}]
    return {"metadata": meta, "status": {"phase": phase, "conditions": conditions}}


READY = [
    pytest.param(pod(), True, id="running with Ready True"),
    pytest.param(pod("False"), False, id="Ready False"),
    pytest.param(pod(None), False, id="no Ready condition yet"),
    pytest.param(pod(deleting=True), False, id="being deleted"),
    pytest.param(pod("False", phase="Succeeded"), True,
                 id="succeeded: counted as Kueue counts ready + succeeded"),
    pytest.param(pod("True", phase="Failed"), False, id="failed"),
]


@pytest.mark.parametrize(("obj", "ready"), READY)
def test_pod_ready(obj: Any, ready: bool) -> None:
    assert pod_ready(obj) is ready


def test_only_pods_of_the_current_run_count() -> None:
    admission = Admission("q", (PodSetAssignment("main", 8, {"gpu": "h100"}, {"gpu": 8000}),))
    workload = Workload("ns", "job", "q", (PodSet("main", 8, {"gpu": 1000}),), T0,
                        state=WorkloadState.ADMITTED, admission=admission,
                        admitted_at=T0 + timedelta(minutes=10, microseconds=500))  # fmt: skip
    ready = {
        "old": T0,  # a pod of the run before this admission
        "same-second": T0 + timedelta(minutes=10),  # creation stamps have whole seconds
        "new": T0 + timedelta(minutes=11),
        "unknown": None,
    }
    assert (ready_pod_count(ready, workload), pods_admitted(workload)) == (3, 8)
