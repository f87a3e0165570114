"""GET /api/v1/workloads/{ns}/{name}/history on a ledger written by the real admission loop:
a borrower is reclaimed three times by preemptors of the lending ClusterQueue, one of them
another tenant's; the history counts the evictions, names each preemptor and its
ClusterQueue, and hides the other tenant's name from a tenant token; ``berth why`` prints
it in time order."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from builders.histories import PREEMPTORS, served_reclaims

from api.tenancy import HIDDEN
from berth.cli import why as why_cli

pytestmark = pytest.mark.db

ADMIN = {"authorization": "Bearer root-secret-token-1"}
TENANT = {"authorization": "Bearer tenant-secret-token-3"}


@pytest.fixture(scope="module")
def api(pg_server: Any, migrated_template: str) -> Iterator[httpx.Client]:
    """The borrower reclaimed by each of ``PREEMPTORS`` in turn (``builders.histories``)."""
    with served_reclaims(pg_server, migrated_template) as client:
        yield client


def _history(api: httpx.Client, headers: dict[str, str]) -> dict[str, Any]:
    response = api.get("/api/v1/workloads/team-a/borrower/history", headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_every_eviction_names_its_preemptor_and_its_cluster_queue(api: httpx.Client) -> None:
    body = _history(api, ADMIN)
    assert body["evictionCount"] == len(PREEMPTORS)
    assert [e["preemptor"] for e in body["evictions"]] == [
        {"workload": f"{ns}/{name}", "clusterQueue": "owner"} for ns, name in PREEMPTORS
    ]
    assert [e["details"]["clusterQueue"] for e in body["evictions"]] == ["spare"] * 3


def test_rows_are_in_time_order_and_say_who_evicted_it(api: httpx.Client) -> None:
    rows = _history(api, ADMIN)["rows"]
    times = [r["at"] for r in rows]
    assert times == sorted(times)
    evicted = [r["text"] for r in rows if r["kind"] == "Evicted"]
    assert evicted == [
        f"Evicted from ClusterQueue spare (Preempted, InCohortReclamation) by {ns}/{name} "
        "of ClusterQueue owner"
        for ns, name in PREEMPTORS
    ]
    kinds = [r["kind"] for r in rows]
    assert kinds.count("Admitted") == len(PREEMPTORS) + 1  # the first run and one per reclaim


def test_the_summary_totals_the_wait_per_reason_and_counts_evictions(api: httpx.Client) -> None:
    # Each reclaim: evicted at t; evaluated WaitingForQuota at the next cycle (t+30s);
    # readmitted when its preemptor finishes, at t+1m30s+10m: 11m of quota wait, three times.
    # The 0s of PendingEvaluation before its first admission is left out of the summary.
    body = _history(api, ADMIN)
    assert body["summary"] == "waited 33m: 33m WaitingForQuota; evicted 3 times (3 Preempted)"
    assert body["totals"] == [
        {"code": "WaitingForQuota", "seconds": 3 * 660.0},
        {"code": "PendingEvaluation", "seconds": 0.0},
    ]
    assert body["waitedSeconds"] == 3 * 660.0


def test_a_tenant_sees_its_own_preemptors_and_the_others_hidden(api: httpx.Client) -> None:
    body = _history(api, TENANT)
    assert [e["preemptor"]["workload"] for e in body["evictions"]] == [
        "team-a/boss-1", HIDDEN, "team-a/boss-3"
    ]
    assert "rival" not in str(body) and "boss-2" not in str(body)
    hidden = [r["text"] for r in body["rows"] if r["kind"] == "Evicted"][1]
    assert f"by {HIDDEN} of ClusterQueue owner" in hidden


@pytest.mark.parametrize(
    ("token", "evicted_by", "second"),
    [
        pytest.param(
            "root-secret-token-1",
            "rival/boss-2 (ClusterQueue owner) 1×, team-a/boss-1 (ClusterQueue owner) 1×, "
            "team-a/boss-3 (ClusterQueue owner) 1×",
            "rival/boss-2",
            id="berth why names every preemptor to an admin",
        ),
        pytest.param(
            "tenant-secret-token-3",
            f"{HIDDEN} (ClusterQueue owner) 1×, team-a/boss-1 (ClusterQueue owner) 1×, "
            "team-a/boss-3 (ClusterQueue owner) 1×",
            HIDDEN,
            id="berth why hides another tenant's preemptor from a tenant",
        ),
    ],
)
def test_berth_why_prints_the_history_in_time_order(
    api: httpx.Client, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    token: str, evicted_by: str, second: str,
) -> None:
    monkeypatch.setenv("BERTH_TOKEN", token)
    args = argparse.Namespace(workload="team-a/borrower", server=str(api.base_url))
    assert why_cli.why(args) == 0
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("History: waited 33m: 33m WaitingForQuota; evicted 3 times (3 Preempted)")
    assert lines[start + 1] == f"Evicted by: {evicted_by}"
    rows = lines[start + 2:]
    assert [r[:21] for r in rows] == sorted(r[:21] for r in rows)  # "  YYYY-MM-DD HH:MM:SS"
    reclaim = "Evicted from ClusterQueue spare (Preempted, InCohortReclamation) by {} of ClusterQueue owner"
    run = ["Admitted to ClusterQueue spare"]
    assert [r[23:] for r in rows] == ["PendingEvaluation for 0s", *run] + [
        line
        for who in ("team-a/boss-1", second, "team-a/boss-3")
        for line in (reclaim.format(who), "Requeued (Preempted)", "WaitingForQuota for 11m", *run)
    ]
