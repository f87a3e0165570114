"""The dashboard's workload detail in headless Chromium: a workload reclaimed three times
(``builders.histories``) shows the REST history's summary, who evicted it (every preemptor
with its ClusterQueue, another tenant's hidden from a tenant) and its rows in time order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from builders.browser import chromium
from builders.histories import BORROWER, served_reclaims
from builders.paths import REPO

from api.tenancy import HIDDEN

pytestmark = pytest.mark.db

ARTIFACTS = REPO / "test-artifacts"
KEY = "/".join(BORROWER)
GPU = "nvidia.com/gpu"


@pytest.fixture(scope="module")
def api(pg_server: Any, migrated_template: str) -> Iterator[httpx.Client]:
    with served_reclaims(pg_server, migrated_template) as client:
        yield client


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.mark.parametrize(
    ("token", "second"),
    [
        pytest.param("root-secret-token-1", "rival/boss-2", id="an admin sees every preemptor"),
        pytest.param("tenant-secret-token-3", HIDDEN, id="a tenant sees another tenant's preemptor hidden"),
    ],
)
def test_the_workload_detail_says_who_evicted_it_and_when(
    api: httpx.Client, browser: Any, token: str, second: str
) -> None:
    expected = api.get(f"/api/v1/workloads/{KEY}/history",
                       headers={"authorization": f"Bearer {token}"}).json()  # fmt: skip
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.add_init_script(f"window.localStorage.setItem('berth.token', {token!r})")
    page.goto(f"{api.base_url}/#workload={KEY}")
    timeline = page.locator("#workload-body .wl-timeline")
    timeline.wait_for()

    assert timeline.locator(".wl-history-summary").inner_text() == expected["summary"]
    assert expected["summary"] == "waited 33m: 33m WaitingForQuota; evicted 3 times (3 Preempted)"
    preemptors = sorted(f"{who} (ClusterQueue owner) 1×" for who in ("team-a/boss-1", second, "team-a/boss-3"))
    assert timeline.locator(".wl-evicted-by").inner_text() == "Evicted 3×: " + ", ".join(preemptors)
    evicted = timeline.locator('li[data-kind="Evicted"]').all_inner_texts()
    assert [e.split(" · ", 1)[1] for e in evicted] == [
        r["text"] for r in expected["rows"] if r["kind"] == "Evicted"
    ]
    assert f"by {second} of ClusterQueue owner" in evicted[1]
    kinds = timeline.locator("li").evaluate_all("ls => ls.map(l => l.dataset.kind)")
    assert kinds == [r["kind"] for r in expected["rows"]]  # the server's order, all of them
    if second == HIDDEN:
        assert "rival" not in page.locator("#workload-body").inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.locator("#workload").screenshot(path=str(ARTIFACTS / f"workload-history-{token[:4]}.png"))
    assert problems == []


def test_the_preemptions_panel_counts_who_preempted_whom_as_the_api_does(
    api: httpx.Client, browser: Any
) -> None:
    admin = {"authorization": "Bearer root-secret-token-1"}
    answer = api.get("/api/v1/preemptions", headers=admin).json()
    history = api.get(f"/api/v1/workloads/{KEY}/history", headers=admin).json()
    # The API's pairs agree with the victim's own history: every eviction names its
    # preemptor's ClusterQueue, and the borrower was the only victim.
    by_pair: dict[tuple[str, str], int] = {}
    for e in history["evictions"]:
        pair = (e["preemptor"]["clusterQueue"], "spare")
        by_pair[pair] = by_pair.get(pair, 0) + 1
    assert {(t["preemptorClusterQueue"], t["victimClusterQueue"]): t["count"]
            for t in answer["totals"]} == by_pair
    assert sum(i["count"] for b in answer["buckets"] for i in b["items"]) == len(history["evictions"])

    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.add_init_script("window.localStorage.setItem('berth.token', 'root-secret-token-1')")
    page.goto(f"{api.base_url}/")
    panel = page.locator("#preemptions-body")
    panel.locator("table.matrix").wait_for()
    # The work lost to them agrees with the usage report's preemption waste of the victim.
    usage = api.get("/api/v1/usage", headers=admin, params={
        "from": answer["start"], "groupBy": "clusterQueue"}).json()["items"]
    waste = next(i for i in usage if i["group"]["clusterQueue"] == "spare")
    [total] = answer["totals"]
    assert total["lostResourceHours"][GPU] == pytest.approx(waste["wasteResourceSeconds"] / 3600)
    assert total["lostResourceHours"][GPU] > 0
    for (preemptor, victim), count in by_pair.items():
        cell = panel.locator(f'tr[data-preemptor="{preemptor}"] td[data-victim="{victim}"]')
        assert cell.locator(".count").inner_text() == str(count)
        lost = cell.locator(f'.lost[data-resource="{GPU}"]')
        assert float(lost.get_attribute("data-hours") or "nan") == total["lostResourceHours"][GPU]
        assert lost.inner_text().endswith(" GPUs·h lost")
    total = sum(by_pair.values())
    assert panel.locator(".preemption-total").inner_text() == f"{total} preemptions"
    # One mark per bucket with preemptions, on the pair's row of the timeline.
    marks = panel.locator(".preemption-timeline rect").count()
    assert marks == len(answer["buckets"])
    page.locator("#preemptions").screenshot(path="/tmp/dash-preemptions.png")
    assert problems == []
