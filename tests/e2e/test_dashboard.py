"""The admin dashboard in a real headless Chromium, against a ledger seeded the real way
(apply a pool, submit Jobs, run an admission cycle) and served by uvicorn over HTTP.

Chromium comes from Debian's ``chromium`` package (CI installs it); without it this test
fails rather than skips, so a missing browser cannot pass unnoticed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from builders.browser import chromium
from builders.manifests import job
from builders.paths import DEPLOY_BASE, REPO
from builders.ports import free_port

from admission.intake.workloads import submit_workload
from admission.loop.actuation import StandaloneActuator
from admission.loop.loop import AdmissionLoop
from api.app import create_app
from api.auth import Grant, Role
from api.deps import AppContext, Readiness
from api.routers.dashboard import asset_path
from quota.ledger.apply import apply_objects
from quota.ledger.connect import ConnectionLimits, Transactions, create_engine
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts

pytestmark = pytest.mark.db

ARTIFACTS = REPO / "test-artifacts"
GRAFANA = DEPLOY_BASE / "grafana" / "berth.json"
GPU = "nvidia.com/gpu"

POOL = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100, annotations: {berth.dev/price-per-hour: "nvidia.com/gpu=2.50"}}
spec: {nodeLabels: {gpu: h100}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: research
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: h100
          resources: [{name: nvidia.com/gpu, nominalQuota: 16}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-b}
spec:
  cohort: research
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: h100
          resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-b}
spec: {clusterQueue: team-b}
""" + "".join(
    f"""---
apiVersion: v1
kind: Node
metadata:
  name: gpu-{i}
  labels: {{gpu: h100}}
  annotations: {{{'berth.dev/health: Degraded' if i == 3 else ''}}}
status:
  capacity: {{nvidia.com/gpu: "8"}}
  allocatable: {{nvidia.com/gpu: "{6 if i == 3 else 8}"}}
"""
    for i in (1, 2, 3)
)


def _job(namespace: str, name: str, gpus: int) -> dict[str, Any]:
    """A Job of ``gpus`` GPUs in pods of at most 4 (each pod must fit on one 8-GPU node)."""
    pods = max(1, gpus // 4) if gpus % 4 == 0 else 1
    return job(name, gpus // pods, namespace=namespace, pods=pods)


# team-a runs 2×4 of its 16 GPUs; team-b runs 12 on 8 of its own (borrowing 4 from team-a);
# three 8-GPU jobs of team-a (two 4-GPU pods each) then wait for quota (4 left in the
# cohort), and one 40-GPU job of team-b can never fit.
ADMITTED = [("team-a", "train-1", 4), ("team-a", "train-2", 4), ("team-b", "big-1", 12)]
WAITING = [("team-a", f"sweep-{i}", 8) for i in (1, 2, 3)] + [("team-b", "huge", 40)]


async def _seed(sessions: Any) -> None:
    with sessions() as session:
        apply_objects(Ledger(session), parse_texts([("pool", POOL)]), actor="test")
    loop = AdmissionLoop(sessions, StandaloneActuator())
    await loop.begin()
    for batch in (ADMITTED, WAITING):
        for namespace, name, gpus in batch:
            with sessions() as session:
                submit_workload(Ledger(session), _job(namespace, name, gpus),
                                now=datetime.now(UTC), actor="test")
        await loop.cycle()


@contextlib.contextmanager
def _serving(db_url: str, tokens: tuple[Grant, ...] = ()) -> Iterator[str]:
    """Base URL of Berth's API and dashboard over a seeded ledger."""
    engine = create_engine(db_url, ConnectionLimits())
    sessions = Transactions(engine)
    # Its own thread: Playwright's sync API may already run an event loop in this one.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _seed(sessions)).result()
    app = create_app(AppContext(session_scope=sessions, readiness=lambda: Readiness(True, "test"),
                                tokens=tokens))
    port = free_port()
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=uv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not uv.started:
        assert time.monotonic() < deadline, "the test API server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uv.should_exit = True
        thread.join(timeout=10)
        engine.dispose()


@pytest.fixture
def server(db_url: str) -> Iterator[str]:
    with _serving(db_url) as url:
        yield url


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def test_dashboard_shows_the_seeded_ledger_and_drills_into_a_workload(
    server: str, browser: Any
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 1700})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(server + "/")

    team_a = page.locator('#queues-body .queue[data-queue="team-a"] .figure[data-flavor="h100"]')
    team_b = page.locator('#queues-body .queue[data-queue="team-b"] .figure[data-flavor="h100"]')
    page.wait_for_selector('#queues-body .queue[data-queue="team-a"]')
    assert team_a.locator(".usage").inner_text() == "8 / 16 GPUs"
    assert team_a.locator(".tag.lent").inner_text() == "4 GPUs lent"
    assert team_b.locator(".usage").inner_text() == "12 / 8 GPUs"
    assert team_b.locator(".tag.borrowed").inner_text() == "+4 GPUs borrowed"
    assert "borrowing limit unlimited" in (team_b.locator(".bar").get_attribute("title") or "")

    pool = page.locator('#pool-body tr[data-flavor="h100"][data-resource="nvidia.com/gpu"]')
    page.wait_for_selector('#pool-body tr[data-flavor="h100"]')
    assert pool.locator(".pool-free").inner_text() == "2 / 24 GPUs free"  # 24 − 2 bad − 20

    page.wait_for_selector('#nodes-body tr[data-node="gpu-3"]')
    assert "Degraded" in page.locator('#nodes-body tr[data-node="gpu-3"]').inner_text()
    assert "2 unhealthy" in page.locator('#nodes-body tr[data-node="gpu-3"]').inner_text()
    # Since when (from /api/v1/node-health: applied moments ago), and no work displaced yet.
    since = page.locator('#nodes-body tr[data-node="gpu-3"] td.since').inner_text()
    assert re.fullmatch(r"\d+[sm] ago", since), since
    assert page.locator('#nodes-body tr[data-node="gpu-3"] td.displaced').inner_text() == "—"

    waits_a = page.locator('#waits-body tr[data-queue="team-a"]')
    page.wait_for_selector('#waits-body tr[data-queue="team-a"]')
    assert waits_a.locator(".chip").all_inner_texts() == ["WaitingForQuota 3"]
    assert page.locator('#waits-body tr[data-queue="team-b"] .chip').all_inner_texts() == [
        "ExceedsMaxQuota 1"
    ]
    cohort = page.locator('#cohorts-body li.cohort[data-cohort="research"]')
    page.wait_for_selector('#cohorts-body li.cohort[data-cohort="research"]')
    assert "h100: 20 / 24 GPUs" in cohort.inner_text()

    waits_a.locator('.chip[data-reason="WaitingForQuota"]').click()
    rows = page.locator("#waitlist-body tr.clickable")
    rows.first.wait_for()
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.workload)")) == [
        "team-a/sweep-1", "team-a/sweep-2", "team-a/sweep-3"
    ]
    page.locator('#waitlist-body tr[data-workload="team-a/sweep-2"]').click()

    expected = httpx.get(f"{server}/api/v1/workloads/team-a/sweep-2").json()
    reason = page.locator('#workload-body .primary-reason[data-reason="WaitingForQuota"]')
    reason.wait_for()
    assert expected["reasons"][0]["message"] in reason.inner_text()
    assert "team-a/sweep-2" in page.locator("#workload-body h3").inner_text()
    assert "WaitingForQuota" in page.locator("#workload-body .wl-timeline").inner_text()

    assert "3 admissions" in page.locator("#trends-body").inner_text()
    usage = page.locator("#usage-body")
    assert "team-a" in usage.inner_text()
    summary = usage.locator(".usage-summary").inner_text()
    assert "cost " in summary and "preemption waste" in summary and "hardware faults" in summary
    costs = usage.locator("td.cost").all_inner_texts()
    assert costs and all(c != "—" for c in costs)  # h100 has a price: every row is costed

    ARTIFACTS.mkdir(exist_ok=True)
    page.wait_for_timeout(300)  # let the smooth scroll settle before the picture
    page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)
    assert not problems, problems


def _duration(seconds: float) -> str:
    """The page's formatDuration (format.js): "2h 5m", "40m", "12s"."""
    s = max(0, math.floor(seconds + 0.5))
    d, h, m = s // 86400, s % 86400 // 3600, s % 3600 // 60
    if d:
        return f"{d}d {h}h" if h else f"{d}d"
    if h:
        return f"{h}h {m}m" if m else f"{h}h"
    return f"{m}m" if m else f"{s}s"


def _gpus(quantities: dict[str, str]) -> str:
    return f"{int(quantities[GPU])} GPUs"


def test_the_running_node_borrowing_and_age_panels_show_the_apis_answers(
    server: str, browser: Any
) -> None:
    api = httpx.Client(base_url=server)
    ages_before = {a["clusterQueue"]: a for a in api.get("/api/v1/pending-ages").json()["items"]}
    page = browser.new_page(viewport={"width": 1400, "height": 2400})
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(server + "/")

    # Running now: every admitted workload, with the API's flavors, GPUs and nodes.
    admitted = api.get("/api/v1/workloads", params={"state": "Admitted"}).json()["items"]
    page.wait_for_selector('#running-body tr[data-workload="team-b/big-1"]')
    rows = page.locator("#running-body tbody tr")
    assert sorted(rows.evaluate_all("rs => rs.map(r => r.dataset.workload)")) == sorted(
        f"{w['namespace']}/{w['name']}" for w in admitted
    )
    for w in admitted:
        row = page.locator(f'#running-body tr[data-workload="{w["namespace"]}/{w["name"]}"]')
        assert row.locator("td.queue").inner_text() == w["clusterQueue"]
        assert row.locator("td.flavor").inner_text() == ", ".join(w["flavors"])
        assert row.locator("td.gpus").inner_text() == _gpus(w["requests"])
        assert row.locator("td.nodes").inner_text() == ", ".join(
            f"{n} ({pods})" for n, pods in w["nodes"].items()
        )
    # Placements were recorded: every pod of every admitted workload is on some node.
    assert all(sum(w["nodes"].values()) > 0 for w in admitted)
    page.select_option("#running-queue", "team-a")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#running-body tbody tr')]"
        ".every(r => r.dataset.workload.startsWith('team-a/'))"
    )

    # Node map: each node's devices and residents as the API answers them; what the nodes
    # hold adds up to what the pool overview says is admitted.
    nodes = api.get("/api/v1/node-map").json()["items"]
    for node in nodes:
        card = page.locator(f'#nodemap-body .node-card[data-node="{node["node"]}"]')
        card.wait_for()
        gpu = next(r for r in node["resources"] if r["resource"] == GPU)
        counts = card.locator(f'.devices[data-resource="{GPU}"] .device-counts').inner_text()
        assert counts == (f"{int(gpu['allocated'])} allocated · {int(gpu['free'])} free · "
                          f"{int(gpu['unhealthy'])} unhealthy of {int(gpu['capacity'])} GPUs")
        assert card.locator(".health").inner_text() == node["health"]
        assert card.locator("li").evaluate_all("ls => ls.map(l => l.dataset.workload)") == [
            w["workload"] for w in node["workloads"]
        ]
    pool = api.get("/api/v1/pool").json()["flavors"][0]["resources"][0]
    assert sum(int(next(r for r in n["resources"] if r["resource"] == GPU)["allocated"])
               for n in nodes) == int(pool["admitted"])
    on_nodes = {f"{w['namespace']}/{w['name']}": sum(w["nodes"].values()) for w in admitted}
    placed: dict[str, int] = {}
    for n in nodes:
        for w in n["workloads"]:
            placed[w["workload"]] = placed.get(w["workload"], 0) + w["pods"]
    assert placed == on_nodes

    # Borrowing: lender → borrower cells hold the API's amounts now (which add up to what
    # the borrower's ClusterQueue status says it borrows) and its resource-hours.
    report = api.get("/api/v1/borrowing").json()
    assert report["now"], "team-b borrows from team-a in the seeded ledger"
    for lent in report["now"]:
        cell = page.locator(f'#borrowing-body tr[data-lender="{lent["lender"]}"] '
                            f'td[data-borrower="{lent["borrower"]}"]')
        cell.wait_for()
        assert cell.locator(".now").inner_text() == f"{int(lent['amount'])} GPUs now"
        status = api.get(f"/api/v1/clusterqueues/{lent['borrower']}").json()["status"]
        borrowed = status["flavors"][0]["resources"][0]["borrowed"]
        assert sum(int(x["amount"]) for x in report["now"]
                   if x["borrower"] == lent["borrower"]) == int(borrowed)
        shown_hours = float(cell.locator(".hours").get_attribute("data-hours") or "nan")
        window = next(i for i in api.get("/api/v1/borrowing").json()["items"]
                      if (i["lender"], i["borrower"]) == (lent["lender"], lent["borrower"]))
        assert 0 < shown_hours <= window["resourceHours"]  # it only grows while held
        assert cell.locator(".cost").inner_text().startswith("cost ")

    # Pending ages: the oldest and p90 wait per queue, between the API's answers before the
    # page loaded and after (a wait only grows), in the page's words.
    for queue in ages_before:
        row = page.locator(f'#waits-body tr[data-queue="{queue}"]')
        row.wait_for()
        for column, key in (("oldest", "oldestSeconds"), ("p90", "p90Seconds")):
            shown = row.locator(f"td.{column}").evaluate(
                "td => [Number(td.dataset.seconds), td.textContent]"
            )
            after = {a["clusterQueue"]: a for a in api.get("/api/v1/pending-ages").json()["items"]}
            assert ages_before[queue][key] <= shown[0] <= after[queue][key]
            assert shown[1] == _duration(shown[0])
        assert row.locator("td.num").first.inner_text() == str(ages_before[queue]["pending"])
    assert page.locator("#preemptions-body").inner_text() == "No preemptions in the last 24h."

    # The wait list says each message once, with the workloads that share it under it.
    page.locator('#waits-body tr[data-queue="team-a"] .chip[data-reason="WaitingForQuota"]').click()
    page.locator("#waitlist-body .wait-group").first.wait_for()
    pending = api.get("/api/v1/workloads", params={"clusterQueue": "team-a",
                                                   "reason": "WaitingForQuota"}).json()["items"]
    messages: dict[str, list[str]] = {}
    for w in pending:
        messages.setdefault(w["message"], []).append(f"{w['namespace']}/{w['name']}")
    groups = page.locator("#waitlist-body .wait-group")
    assert groups.count() == len(messages)
    for i in range(groups.count()):
        text = groups.nth(i).locator(".wait-message").inner_text()
        count, message = text.split("× ", 1)
        assert sorted(groups.nth(i).locator("tr[data-workload]").evaluate_all(
            "rs => rs.map(r => r.dataset.workload)")) == sorted(messages[message])
        assert int(count) == len(messages[message])
    # Names never wrap: one line each, cut with an ellipsis (the whole name in the title).
    wrapped = page.locator(".clip").evaluate_all(
        """es => es.filter(e => {
            if (!e.offsetParent) return false;
            const range = document.createRange();
            range.selectNodeContents(e);
            const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
            return getComputedStyle(e).whiteSpace !== "nowrap" || lines.size > 1;
        }).map(e => e.textContent)"""
    )
    assert wrapped == []

    page.wait_for_timeout(300)
    page.screenshot(path="/tmp/dash-full.png", full_page=True)
    for panel in ("running", "nodemap", "borrowing", "waits"):
        page.locator(f"#{panel}").screenshot(path=f"/tmp/dash-{panel}.png")
    assert not problems, problems


def test_the_grafana_dashboard_queries_only_metrics_berth_exports(server: str) -> None:
    dashboard = json.loads(GRAFANA.read_text())
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    used = set(re.findall(r"\bberth_[a-z_]+", " ".join(exprs)))
    text = httpx.get(f"{server}/metrics").text
    exported = set(re.findall(r"^(berth_[a-z_]+)[{ ]", text, flags=re.MULTILINE))
    # A family without samples yet (no eviction so far) still declares itself.
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count")}
    for name, kind in re.findall(r"^# TYPE (berth_[a-z_]+) (\w+)", text, flags=re.MULTILINE):
        exported |= {name.removesuffix("_total") + s for s in suffixes.get(kind, ("",))}
    assert used, "the dashboard queries no berth_ metric"
    assert used <= exported, f"queried but not exported: {sorted(used - exported)}"
    assert 'berth_pending_workloads{cluster_queue="team-a",reason="WaitingForQuota"} 3.0' in text
    # Nodes by health: gpu-3 is Degraded, the other two Healthy, every state listed.
    nodes = dict(re.findall(r'^berth_nodes\{health="(\w+)"\} (\S+)$', text, flags=re.MULTILINE))
    assert nodes == {"Healthy": "2.0", "Degraded": "1.0", "Cordoned": "0.0",
                     "Repairing": "0.0", "Validating": "0.0"}


def test_the_page_asks_for_a_token_when_the_api_requires_one(db_url: str, browser: Any) -> None:
    with _serving(db_url, tokens=(Grant("s3cret-read", Role.READ),)) as url:
        page = browser.new_page()
        page.goto(url + "/")
        page.locator("#auth").wait_for(state="visible")
        assert page.locator("#queues-body .queue").count() == 0
        page.fill("#auth-token", "s3cret-read")
        page.click("#auth-form button")
        page.wait_for_selector('#queues-body .queue[data-queue="team-a"]')
        page.locator("#auth").wait_for(state="hidden")
        page.reload()  # the token is remembered by this browser
        page.wait_for_selector('#queues-body .queue[data-queue="team-a"]')
        page.locator("#auth").wait_for(state="hidden")


@pytest.mark.parametrize(
    ("path", "status"),
    [
        pytest.param("/static/js/main.js", 200, id="a shipped script"),
        pytest.param("/static/style.css", 200, id="the stylesheet"),
        pytest.param("/static/%2e%2e/app.py", 404, id="nothing outside the folder"),
        pytest.param("/static/nothing.js", 404, id="an asset that does not exist"),
    ],
)
def test_assets_come_only_from_the_static_folder(server: str, path: str, status: int) -> None:
    with httpx.Client() as client:
        response = client.send(client.build_request("GET", server + path))
    assert response.status_code == status


@pytest.mark.parametrize(
    ("path", "served"),
    [
        pytest.param("page.js", True, id="a script inside"),
        pytest.param("../secret.js", False, id="dot segments out of the folder"),
        pytest.param("link.js", False, id="a symlink pointing out of the folder"),
        pytest.param("notes.txt", False, id="a type the dashboard does not serve"),
    ],
)
def test_asset_paths_stay_inside_the_static_folder(tmp_path: Path, path: str, served: bool) -> None:
    root = tmp_path / "static"
    root.mkdir()
    (root / "page.js").write_text("")
    (root / "notes.txt").write_text("")
    (tmp_path / "secret.js").write_text("")
    (root / "link.js").symlink_to(tmp_path / "secret.js")
    assert (asset_path(root, path) is not None) is served
