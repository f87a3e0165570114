"""Kueue's metric names beside Berth's, scraped over HTTP from a ledger driven the real
way (submit, admission cycles on a settable clock, a reclaim that preempts), with the
values reasoned from that history; and the same read-token rules as every metric."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from builders.reads import World, serve
from prometheus_client.parser import text_string_to_metric_families

from api.auth import parse_tokens

pytestmark = pytest.mark.db

GPU = "nvidia.com/gpu"
_CQ = """apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  {cohort}namespaceSelector: {{}}
  preemption: {{reclaimWithinCohort: Any}}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: h100
          resources:
            - {{name: nvidia.com/gpu, nominalQuota: {gpus}{limit}}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: main, namespace: {name}}}
spec: {{clusterQueue: {name}}}
"""
POOL = "---\n".join(
    [
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n",
        _CQ.format(name="team-a", cohort="cohort: all\n  ", gpus=4, limit=""),
        _CQ.format(name="team-b", cohort="cohort: all\n  ", gpus=4, limit=", borrowingLimit: 2"),
        _CQ.format(name="team-c", cohort="", gpus=2, limit=""),
    ]
)


@pytest.fixture
def world(db_url: str) -> Iterator[World]:
    """T0: team-a admits a1 (4); T0+10m a2 (4, borrowing team-b's 4). T0+1h-30s b1 (4)
    joins team-b; at T0+1h it reclaims its quota: a2, the latest admitted, is preempted and
    requeued, and b1 admitted (it waited 30s). T0+1.5h: a3 (4) joins team-a. T0+2h: a1
    finishes and a2 is admitted again (an hour after its requeue, ahead of a3 by creation);
    a3 waits for quota. Then b2 (1) joins team-b, not evaluated yet."""
    w = World(db_url)
    w.apply(POOL)
    w.submit("a1", 4, "team-a")
    w.cycle()
    w.advance(minutes=10)
    w.submit("a2", 4, "team-a")
    w.cycle()
    w.advance(minutes=49, seconds=30)
    w.submit("b1", 4, "team-b")
    w.advance(seconds=30)
    w.cycle()
    w.advance(minutes=30)
    w.submit("a3", 4, "team-a")
    w.advance(minutes=30)
    w.finish("team-a", "a1")
    w.cycle()
    w.submit("b2", 1, "team-b")
    yield w
    w.close()


Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(client: httpx.Client) -> tuple[dict[str, str], Samples]:
    """The families' types, and every sample by (name, labels)."""
    response = client.get("/metrics")
    assert response.status_code == 200, response.text
    types: dict[str, str] = {}
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        types[family.name] = family.type
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return types, samples


def key(name: str, **labels: str) -> tuple[str, frozenset[tuple[str, str]]]:
    return name, frozenset(labels.items())


def _quota(queue: str, cohort: str = "all") -> dict[str, str]:
    return {"cohort": cohort, "cluster_queue": queue, "flavor": "h100", "resource": GPU}


# Each figure as the world's history makes it (scraped once: one seeded world per test).
EXPECTED = {
    key("kueue_pending_workloads", cluster_queue="team-a", status="inadmissible"): 1,  # a3 waits for quota: inadmissible
    key("kueue_pending_workloads", cluster_queue="team-a", status="active"): 0,  # nothing of team-a is retried as is
    key("kueue_pending_workloads", cluster_queue="team-b", status="active"): 1,  # b2 not evaluated yet: active
    key("kueue_pending_workloads", cluster_queue="team-b", status="inadmissible"): 0,  # both statuses listed, 0 included
    key("kueue_admitted_active_workloads", cluster_queue="team-a"): 1,  # a2 holds team-a's quota again
    key("kueue_admitted_active_workloads", cluster_queue="team-b"): 1,  # b1 holds team-b's quota
    key("kueue_admitted_active_workloads", cluster_queue="team-c"): 0,  # an idle queue admits none
    key("kueue_reserving_active_workloads", cluster_queue="team-a"): 1,  # reserving is admitting in Berth
    key("kueue_admitted_workloads_total", cluster_queue="team-a"): 3,  # a1, a2, a2 again
    key("kueue_admitted_workloads_total", cluster_queue="team-b"): 1,  # b1
    key("kueue_cluster_queue_lending_limit", **_quota("team-a")): float("inf"),  # no lending limit is +Inf
    key("kueue_cluster_queue_resource_usage", **_quota("team-a")): 4,  # team-a uses its nominal 4
    key("kueue_cluster_queue_nominal_quota", **_quota("team-c", cohort="")): 2,  # a queue outside a cohort has cohort label ''
    key("kueue_cluster_queue_borrowing_limit", **_quota("team-b")): 2,  # a set borrowing limit
    key("kueue_cluster_queue_borrowing_limit", **_quota("team-a")): float("inf"),  # no borrowing limit is +Inf
    key("kueue_evicted_workloads_total", cluster_queue="team-a", reason="Preempted"): 1,  # a2 was evicted once
    key("kueue_preempted_workloads_total", preempting_cluster_queue="team-b", reason="InCohortReclamation"): 1,  # b1 reclaimed once
    key("berth_preemptions_total", preempting_cluster_queue="team-b", victim_cluster_queue="team-a", reason="InCohortReclamation"): 1,  # preemptor and victim queues
    key("kueue_admission_wait_time_seconds_count", cluster_queue="team-a"): 3,  # a1, a2, then a2 again: three admissions
    key("kueue_admission_wait_time_seconds_sum", cluster_queue="team-a"): 3600,  # a2's second wait runs from its requeue
    key("kueue_admission_wait_time_seconds_bucket", cluster_queue="team-a", le="2560.0"): 2,  # the first two waited nothing
    key("kueue_admission_wait_time_seconds_bucket", cluster_queue="team-a", le="5120.0"): 3,  # the hour falls in the 5120s bucket
    key("kueue_admission_wait_time_seconds_bucket", cluster_queue="team-b", le="20.0"): 0,  # b1 waited 30s: above 20s
    key("kueue_admission_wait_time_seconds_bucket", cluster_queue="team-b", le="40.0"): 1,  # b1 waited 30s: within 40s
}

FAMILIES = {  # name: (type, label names)
    "kueue_pending_workloads": ("gauge", {"cluster_queue", "status"}),
    "kueue_admitted_active_workloads": ("gauge", {"cluster_queue"}),
    "kueue_reserving_active_workloads": ("gauge", {"cluster_queue"}),
    "kueue_admitted_workloads": ("counter", {"cluster_queue"}),
    "kueue_cluster_queue_lending_limit": ("gauge", {"cohort", "cluster_queue", "flavor", "resource"}),
    "kueue_admission_wait_time_seconds": ("histogram", {"cluster_queue", "le"}),
    "kueue_cluster_queue_resource_usage": ("gauge", {"cohort", "cluster_queue", "flavor", "resource"}),
    "kueue_cluster_queue_nominal_quota": ("gauge", {"cohort", "cluster_queue", "flavor", "resource"}),
    "kueue_cluster_queue_borrowing_limit": ("gauge", {"cohort", "cluster_queue", "flavor", "resource"}),
    "kueue_evicted_workloads": ("counter", {"cluster_queue", "reason"}),
    "kueue_preempted_workloads": ("counter", {"preempting_cluster_queue", "reason"}),
    "berth_preemptions": ("counter", {"preempting_cluster_queue", "victim_cluster_queue", "reason"}),
    "berth_oldest_pending_workload_age_seconds": ("gauge", {"cluster_queue", "reason"}),
}


def test_kueue_figures_follow_the_history(world: World) -> None:
    with serve(world.url) as client:
        _, samples = scrape(client)
    assert {k: samples.get(k) for k in EXPECTED} == EXPECTED


def test_types_and_label_sets(world: World) -> None:
    with serve(world.url) as client:
        types, samples = scrape(client)
    found: dict[str, tuple[str | None, set[frozenset[str]]]] = {}
    for family in FAMILIES:
        names = {family, f"{family}_total", f"{family}_bucket", f"{family}_count", f"{family}_sum"}
        labels = {frozenset(k for k, _ in ls) for name, ls in samples if name in names}
        found[family] = (types.get(family), labels)
    expected = {}
    for family, (kind, labels) in FAMILIES.items():
        # A histogram's _count and _sum samples carry its labels but ``le``.
        sets = {frozenset(labels)} | ({frozenset(labels - {"le"})} if kind == "histogram" else set())
        expected[family] = (kind, sets)
    assert found == expected


def test_oldest_pending_age_runs_from_joining_the_queue(world: World) -> None:
    """a3 joined team-a at T0+1.5h, b2 team-b at T0+2h (the world's clock is hours behind
    the database's): their ages are now minus that, bounded by the time around the scrape."""
    joined = {"team-a": world.start + timedelta(hours=1.5), "team-b": world.start + timedelta(hours=2)}
    reason = {"team-a": "WaitingForQuota", "team-b": "PendingEvaluation"}
    with serve(world.url) as client:
        before = datetime.now(UTC)
        _, samples = scrape(client)
        after = datetime.now(UTC)
    for queue, at in joined.items():
        age = samples[key("berth_oldest_pending_workload_age_seconds", cluster_queue=queue, reason=reason[queue])]
        assert (before - at).total_seconds() - 1 <= age <= (after - at).total_seconds() + 1


def test_counters_survive_a_restart(world: World) -> None:
    """Totals are counted from the ledger: a new server over the same ledger (a new app and
    registry, as after a restart or on another replica) reports the same counts."""
    counters = ("kueue_preempted_workloads_total", "kueue_evicted_workloads_total", "berth_preemptions_total")
    seen = []
    for _ in range(2):
        with serve(world.url) as client:
            _, samples = scrape(client)
        seen.append({k: v for k, v in samples.items() if k[0] in counters})
    assert seen[0] == seen[1] and sum(seen[0].values()) == 3


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        pytest.param({}, 401, id="without a token: refused"),
        pytest.param({"authorization": "Bearer look-secret-token-2"}, 200, id="a read token scrapes"),
        pytest.param({"authorization": "Bearer tenant-secret-token-3"}, 200, id="a tenant scrapes: counts, no workload named"),
    ],
)
def test_kueue_metrics_need_a_token_as_every_metric(world: World, headers: dict[str, str], status: int) -> None:
    tokens = parse_tokens("root-secret-token-1:admin,look-secret-token-2:read,tenant-secret-token-3:read:team-a")
    with serve(world.url, tokens) as client:
        response = client.get("/metrics", headers=headers)
    assert response.status_code == status
    assert ("kueue_pending_workloads{" in response.text) == (status == 200)
    # The preemption figures name queues only, never the workloads (b1 preempted a2).
    assert [w for w in ("team-b/b1", "team-a/a2", '"b1"', '"a2"') if w in response.text] == []
