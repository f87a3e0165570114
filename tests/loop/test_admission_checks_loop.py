"""Admission checks in standalone mode: a workload of a queue with an external check
reserves quota, and the check's controller answers over REST (the admin token's route
``POST …/admission-checks/{check}``); the loop admits, requeues or deactivates it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from builders.loop import Ledgered, RecordingActuator, pool
from builders.manifests import job
from builders.paths import REPO

from admission.loop.actuation import ADMIT
from admission.loop.loop import AdmissionLoop
from berth.cli.why import explain

CHECK = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: capacity}
spec: {controllerName: example.com/capacity}
"""
KUEUE_EXAMPLES = sorted((REPO / "tests" / "kueue_examples").glob("*.yaml"))


def _with_check(text: str) -> str:
    return text.replace("  namespaceSelector: {}\n",
                        "  namespaceSelector: {}\n  admissionChecks: [capacity]\n")


async def _answer(api: httpx.Client, key: str, body: dict[str, Any],
                  check: str = "capacity") -> httpx.Response:
    # The API runs in its own thread; a blocking call would stall the test's event loop.
    return await asyncio.to_thread(
        api.post, f"/api/v1/workloads/{key}/admission-checks/{check}", json=body)


async def _reserved(ledgered: Ledgered, loop: AdmissionLoop) -> None:
    ledgered.apply(_with_check(pool(("team-a", 4))) + "---" + CHECK)
    ledgered.submit(job("train", 4))
    await loop.begin()
    await loop.cycle()


async def test_a_ready_external_check_admits_the_reservation(
    ledgered: Ledgered, loop: AdmissionLoop, actuator: RecordingActuator, api: httpx.Client
) -> None:
    await _reserved(ledgered, loop)
    row = ledgered.workload("train")
    assert row["state"] == "QuotaReserved"
    assert ADMIT not in [a.action for a in actuator.actions]  # the Job stays suspended
    await loop.cycle()
    assert ledgered.workload("train")["reason_code"] == "WaitingForAdmissionCheck"
    shown = (await asyncio.to_thread(api.get, "/api/v1/workloads/team-a/train")).json()
    history = (await asyncio.to_thread(api.get, "/api/v1/workloads/team-a/train/history")).json()
    why = explain(shown, history)
    assert "Why: WaitingForAdmissionCheck: quota is reserved; admission check capacity" in why
    assert "QuotaReserved in ClusterQueue team-a" in why
    metrics = (await asyncio.to_thread(api.get, "/metrics")).text
    assert ('berth_admission_check_workloads{check="capacity",cluster_queue="team-a",'
            'state="Pending"} 1.0') in metrics
    assert 'kueue_admitted_active_workloads{cluster_queue="team-a"} 0.0' in metrics
    assert 'kueue_reserving_active_workloads{cluster_queue="team-a"} 1.0' in metrics

    answered = await _answer(api, "team-a/train", {"state": "Ready"})
    assert answered.status_code == 200, answered.text
    await loop.cycle()

    assert ledgered.workload("train")["state"] == "Admitted"
    assert [a.action for a in actuator.actions].count(ADMIT) == 1
    assert ledgered.events("train")[-3:] == ["QuotaReserved", "CheckChanged", "Admitted"]


async def test_queue_status_tells_reserving_from_admitted(
    ledgered: Ledgered, loop: AdmissionLoop, api: httpx.Client
) -> None:
    ledgered.apply(_with_check(pool(("team-a", 8))) + "---" + CHECK)
    for name in ("checked", "checking"):
        ledgered.submit(job(name, 4))
    await loop.begin()
    await loop.cycle()
    answered = await _answer(api, "team-a/checked", {"state": "Ready"})
    assert answered.status_code == 200, answered.text
    await loop.cycle()
    assert ledgered.workload("checking")["state"] == "QuotaReserved"

    cluster = (await asyncio.to_thread(api.get, "/api/v1/clusterqueues/team-a")).json()
    local = (await asyncio.to_thread(api.get, "/api/v1/status/localqueues")).json()
    # Both hold quota (as Kueue's reservingWorkloads counts); one is admitted.
    counts = {"pendingWorkloads": 0, "reservingWorkloads": 2, "admittedWorkloads": 1}
    assert {key: cluster["status"][key] for key in counts} == counts
    assert [item["status"] for item in local["items"]] == [counts]


async def test_retry_releases_the_quota_and_requeues(
    ledgered: Ledgered, loop: AdmissionLoop, api: httpx.Client
) -> None:
    await _reserved(ledgered, loop)
    answered = await _answer(api, "team-a/train", {"state": "Retry", "message": "no nodes",
                                                   "requeueAfterSeconds": 3600})
    assert answered.status_code == 200, answered.text
    await loop.cycle()
    row = ledgered.workload("train")
    assert (row["state"], row["admission"], row["eviction_reason"]) == (
        "Pending", None, "AdmissionCheck")
    await loop.cycle()
    row = ledgered.workload("train")
    assert row["reason_code"] == "WaitingForAdmissionCheck"
    assert row["reasons"][0]["details"]["state"] == "Retry"


async def test_rejected_deactivates_with_the_checks_message(
    ledgered: Ledgered, loop: AdmissionLoop, api: httpx.Client
) -> None:
    await _reserved(ledgered, loop)
    await _answer(api, "team-a/train", {"state": "Rejected", "message": "account closed"})
    await loop.cycle()
    await loop.cycle()
    row = ledgered.workload("train")
    assert (row["state"], row["reason_code"]) == ("Deactivated", "Deactivated")
    assert "account closed" in row["reasons"][0]["message"]


@pytest.mark.parametrize(("body", "check", "status"), [
    pytest.param({"state": "Ready"}, "other", 409, id="a check the workload does not have"),
    pytest.param({"state": "Done"}, "capacity", 422, id="a state that does not exist"),
])
async def test_bad_answers_are_refused_and_change_nothing(
    ledgered: Ledgered, loop: AdmissionLoop, api: httpx.Client, body: dict[str, Any],
    check: str, status: int,
) -> None:
    await _reserved(ledgered, loop)
    before = ledgered.workload("train")["version"]
    answered = await _answer(api, "team-a/train", body, check)
    assert answered.status_code == status, answered.text
    assert ledgered.workload("train")["version"] == before


async def test_a_workload_not_reserving_quota_has_no_check_to_answer(
    ledgered: Ledgered, api: httpx.Client
) -> None:
    ledgered.apply(pool(("team-a", 4)))
    ledgered.submit(job("train", 4))
    answered = await _answer(api, "team-a/train", {"state": "Ready"})
    assert answered.status_code == 409
    assert answered.json()["error"]["field"] == "check"


@pytest.mark.parametrize("path", KUEUE_EXAMPLES, ids=lambda p: p.name)
def test_kueues_admission_check_examples_apply_unchanged(api: httpx.Client, path: Any) -> None:
    applied = api.post("/api/v1/apply", content=path.read_text(),
                       headers={"content-type": "application/yaml"})
    assert applied.status_code == 200, applied.text
    kinds = {c["kind"] for c in applied.json()["changes"]}
    assert {"AdmissionCheck", "ProvisioningRequestConfig"} <= kinds
    assert api.get("/api/v1/admissionchecks").json()["items"]
