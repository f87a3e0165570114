"""The demo's first minute shows what the README promises, read back over the REST API.

``berth serve --demo``'s own players (``berth.demo.live.Demo``) and the durable loop run on
a real ledger, on a clock set to each second of the first minute; then the API is asked
what a user would ask: who borrowed, who was reclaimed, who was preempted after saving a
checkpoint, which node is sick, and why the rest wait.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from builders.loop import Ledgered, RecordingActuator, settle

from admission.loop.loop import AdmissionLoop
from berth.demo.live import Demo

pytestmark = pytest.mark.asyncio

# (workload, a reason it waits with during the first minute): the README's list.
PROMISED_REASONS = [
    ("vision/segformer", "WaitingForQuota"),
    ("vision/vit-eval", "BlockedByQueueHead"),
    ("llm/giant-64", "ExceedsMaxQuota"),
    ("llm/single-pod-24", "ExceedsNodeCapacity"),
    ("interns/mig-3g", "NoMatchingFlavor"),
    ("interns/playground", "Misconfigured"),
    ("llm/pretrain-prod", "WaitingForPreemptedWorkloads"),
    ("inference/serve-llama", "WaitingForPreemptedWorkloads"),
]



@pytest.fixture
async def first_minute(ledgered: Ledgered, actuator: RecordingActuator) -> datetime:
    """Play the demo's first 60 seconds; the instant it started."""
    epoch = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    clock = [epoch]
    loop = AdmissionLoop(ledgered.sessions, actuator, clock=lambda: clock[0])
    demo = Demo(ledgered.sessions)
    demo.start(epoch)
    await loop.begin()
    for second in range(61):
        clock[0] = epoch + timedelta(seconds=second)
        demo.advance(second, clock[0])
        await settle(loop)
    return epoch


def history(api: httpx.Client, key: str) -> dict[str, Any]:
    response = api.get(f"/api/v1/workloads/{key}/history")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_the_first_minute_shows_what_the_readme_promises(
    first_minute: datetime, api: httpx.Client
) -> None:
    check_promises(api, first_minute)


def check_promises(api: httpx.Client, first_minute: datetime) -> None:
    """What a user asks the API after the first minute (a plain function: blocking calls)."""
    for key, reason in PROMISED_REASONS:
        codes = {row["code"] for row in history(api, key)["rows"]}
        assert reason in codes, (key, reason, codes)

    window = {"from": first_minute.isoformat(),
              "to": (first_minute + timedelta(minutes=1)).isoformat()}
    borrowing = api.get("/api/v1/borrowing", params=window)
    assert borrowing.status_code == 200, borrowing.text
    owed = {(item["borrower"], item["lender"], item["flavor"])
            for item in borrowing.json()["items"] if item["resourceSeconds"] > 0}
    assert owed == {("llm-training", "inference", "h100-80gb"),
                    ("vision", "llm-training", "a100-40gb")}, owed

    def evictions(key: str) -> list[tuple[str, str]]:
        return [(e["details"]["why"], e["preemptor"]["workload"])
                for e in history(api, key)["evictions"]]

    # Reclaims: lent quota taken back, by llm (A100s) and by inference (H100s).
    assert evictions("vision/detr-finetune") == [("InCohortReclamation", "llm/finetune-a100")]
    assert evictions("llm/pretrain-2") == [("InCohortReclamation", "inference/serve-llama")]
    # A priority preemption whose victim saved a checkpoint first, then requeued.
    victim = history(api, "llm/pretrain-1")
    assert evictions("llm/pretrain-1") == [("InClusterQueue", "llm/pretrain-prod")]
    kinds = [row["kind"] for row in victim["rows"]]
    assert kinds[kinds.index("Evicted"):kinds.index("Evicted") + 3] == [
        "Evicted", "Checkpointed", "Requeued"], kinds
    preemptor = api.get("/api/v1/workloads/llm/pretrain-prod").json()
    assert preemptor["state"] == "Admitted", preemptor

    health = api.get("/api/v1/node-health")
    assert health.status_code == 200, health.text
    sick = {item["node"]: item["health"] for item in health.json()["items"]
            if item["health"] != "Healthy"}
    assert sick == {"h100-3": "Degraded"}, sick
