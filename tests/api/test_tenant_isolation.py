"""Tenant isolation over HTTP: a tenant token reads every GET operation of the OpenAPI
document and finds no trace of another namespace's work, while the ledger it reads holds
work of that namespace that the routes would otherwise name (quota holders, a StrictFIFO
head, preemption victims and preemptor, node-fault evictions, a device error, usage)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from builders.reads import World, berth_context, serve, serving

from admission.engine.node_faults import DEVICE_ERROR, POD_NODES, DeviceError, pod_nodes_annotation
from admission.intake.nodes import degrade
from api.app import create_app
from api.auth import parse_tokens
from quota.core.kinds import KINDS
from quota.core.model import NodeHealth
from quota.core.node_health import device_error
from quota.ledger import nodes as ledger_nodes

pytestmark = pytest.mark.db

TOKENS = parse_tokens("root-secret-token-1:admin,look-secret-token-2:read,tenant-secret-token-3:read:team-a")
ADMIN = {"authorization": "Bearer root-secret-token-1"}
READER = {"authorization": "Bearer look-secret-token-2"}
TENANT = {"authorization": "Bearer tenant-secret-token-3"}
MINE, OTHER = "team-a", "rival"
# Every trace of the other namespace: its name, and its workloads' (and pods') names.
LEAKS = re.compile(r"rival|their-", re.IGNORECASE)
POD = "their-trainer-x7k2p"

GPU = "nvidia.com/gpu"
_CQ = (
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
    "spec:\n{extra}  namespaceSelector: {{}}\n  resourceGroups:\n"
    f"    - coveredResources: [{GPU}]\n      flavors:\n        - name: {{flavor}}\n"
    f"          resources:\n            - {{{{name: {GPU}, nominalQuota: {{gpus}}}}}}\n"
)
_PREEMPT = "  preemption: {withinClusterQueue: LowerPriority}\n"
QUEUES = {  # ClusterQueue -> (flavor, GPUs, extra spec)
    "shared": ("h100", 8, ""),
    "fifo": ("h100", 4, "  queueingStrategy: StrictFIFO\n"),
    "prio-a": ("h100", 4, _PREEMPT),
    "prio-b": ("h100", 4, _PREEMPT),
    "nodes": ("a10", 8, "  cohort: side\n"),
}
NODES = ("gpu-1", "gpu-2")


def _objects() -> str:
    docs = [
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n"
        "spec: {nodeLabels: {pool: h100}}\n",  # no Node has it: quota alone decides
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a10}\n"
        "spec: {nodeLabels: {pool: a10}}\n",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\n"
        "metadata: {name: high}\nvalue: 1000\n",
    ]
    for name, (flavor, gpus, extra) in QUEUES.items():
        docs.append(_CQ.format(name=name, flavor=flavor, gpus=gpus, extra=extra))
        for namespace in (MINE, OTHER):
            docs.append(
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                f"metadata: {{name: {name}, namespace: {namespace}}}\n"
                f"spec: {{clusterQueue: {name}}}\n"
            )
    for namespace in (MINE, OTHER):
        docs.append(f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {namespace}}}\n")
    for node in NODES:
        docs.append(
            f"apiVersion: v1\nkind: Node\nmetadata: {{name: {node}, labels: {{pool: a10}}}}\n"
            f"status:\n  capacity: {{{GPU}: '16'}}\n  allocatable: {{{GPU}: '16'}}\n"
        )
    return "---\n".join(docs)


def _step(w: World) -> None:
    w.cycle()
    w.advance(minutes=5)


def build(w: World) -> None:
    """Work of both namespaces that names the other's: see each step's comment."""
    w.apply(_objects())
    grace = {"berth.dev/checkpoint-grace": "1h"}
    # Their work holds quota first.
    w.submit("their-hog", 8, OTHER, queue="shared")
    w.submit("their-runner", 3, OTHER, queue="fifo")
    w.submit("their-victim", 4, OTHER, queue="prio-a", annotations=grace)
    w.submit("low-mine", 4, MINE, queue="prio-b")
    w.submit("their-trainer", 2, OTHER, queue="nodes")
    w.submit("on-node", 2, MINE, queue="nodes")
    _step(w)
    # WaitingForQuota: held by their-hog.  StrictFIFO: their head blocks mine.
    w.submit("want-quota", 8, MINE, queue="shared")
    w.submit("their-head", 4, OTHER, queue="fifo")
    w.advance(seconds=1)
    w.submit("fifo-mine", 1, MINE, queue="fifo")
    # Preemption both ways: mine waits for their victim to checkpoint; theirs evicts mine.
    w.submit("urgent", 4, MINE, queue="prio-a", priority="high")
    w.submit("their-preemptor", 4, OTHER, queue="prio-b", priority="high")
    _step(w)
    # A device error on their pod degrades gpu-1; the node is cordoned: both are displaced.
    seen = w.now - timedelta(seconds=1)  # by the pod watcher, before the next cycle
    with w.sessions() as session:
        for name, namespace in (("their-trainer", OTHER), ("on-node", MINE)):
            ledger_nodes.annotate_workload(
                session, namespace, name, POD_NODES, pod_nodes_annotation(["gpu-1"], seen)
            )
        error = DeviceError("gpu-1", POD, "main", 79, seen)
        ledger_nodes.annotate_workload(session, OTHER, "their-trainer", DEVICE_ERROR,
                                       error.to_annotation())  # fmt: skip
        degrade(session, "gpu-1", device_error("gpu-1", f"{OTHER}/{POD}", "main", 79),
                actor="test")  # fmt: skip
        ledger_nodes.set_health(session, "gpu-1", NodeHealth.DEGRADED, NodeHealth.CORDONED,
                                why="3 of 16 devices unhealthy", actor="test")  # fmt: skip
    _step(w)
    _step(w)


@pytest.fixture(scope="module")
def served(pg_server: Any, migrated_template: str) -> Iterator[tuple[World, httpx.Client]]:
    """One ledger for the module (building it runs the loop a few times), served with tokens."""
    url = pg_server.create(template=migrated_template)
    world = World(url)
    try:
        build(world)
        with serve(url, TOKENS) as client:
            yield world, client
    finally:
        world.close()
        pg_server.drop(url)


@pytest.fixture
def world(served: tuple[World, httpx.Client]) -> World:
    return served[0]


@pytest.fixture
def api(served: tuple[World, httpx.Client]) -> httpx.Client:
    return served[1]


# --- the walk over the OpenAPI document ---------------------------------------------------

# GET operations the walk does not call, and why. None today: even those that name no
# workload (/, /healthz, /readyz, /metrics) cost nothing to check, so they are walked too.
# Every GET is called: a path without parameters as it is, a templated one with the fills
# below (a new templated GET route without fills fails the walk until it gets some).
# /static/{path} is left out of the OpenAPI document: the dashboard's files, no data.
SKIPPED: dict[str, str] = {}
# GET operations only an admin token may call, and why: the walk checks that a tenant is
# refused them (403), and that the refusal names nothing either.
VISIBILITY = [f"/apis/visibility.kueue.x-k8s.io/{v}" for v in ("v1beta2", "v1beta1")]
ADMIN_ONLY: dict[str, str] = {
    "/api/v1/audit": "the audit log shows every namespace's objects as they were stored",
}


def _fills(world: World, api: httpx.Client) -> dict[str, list[tuple[str, dict[str, str]]]]:
    """Concrete requests per path template: the tenant's own objects, and shared ones."""
    mine = [r["name"] for r in api.get("/api/v1/workloads", headers=ADMIN,
                                       params={"namespace": MINE, "limit": "500"}).json()["items"]]
    start = (world.start - timedelta(hours=1)).isoformat()
    plurals = [kind.plural for kind in KINDS]
    cluster_scoped = [
        (plural, obj["metadata"]["name"])
        for plural in plurals
        for obj in api.get(f"/api/v1/{plural}", headers=ADMIN).json()["items"]
        if "namespace" not in obj["metadata"] and obj["metadata"]["name"] != OTHER
    ]
    workloads = [f"/api/v1/workloads/{MINE}/{name}" for name in mine]
    every_group = "clusterQueue,cohort,flavor,namespace"
    fills = {
        "/api/v1/workloads": [
            ("/api/v1/workloads", q)
            for q in ({}, {"namespace": MINE}, {"state": "Pending"}, {"reason": "WaitingForQuota"},
                      *({"clusterQueue": cq} for cq in QUEUES))
        ],
        "/api/v1/workloads/{namespace}/{name}": [(p, {}) for p in workloads],
        "/api/v1/workloads/{namespace}/{name}/history": [(p + "/history", {}) for p in workloads],
        "/api/v1/nodes/{name}/history": [(f"/api/v1/nodes/{n}/history", {}) for n in NODES],
        "/api/v1/clusterqueues/{name}": [(f"/api/v1/clusterqueues/{cq}", {}) for cq in QUEUES],
        "/api/v1/cohorts/{name}": [("/api/v1/cohorts/side", {})],
        "/api/v1/usage": [
            ("/api/v1/usage", {"from": start, **q})
            for q in ({}, {"groupBy": "namespace"}, {"groupBy": every_group}, {"groupBy": "cohort"})
        ],
        "/api/v1/borrowing": [("/api/v1/borrowing", {"from": start})],
        "/api/v1/trends": [("/api/v1/trends", q) for q in ({}, {"clusterQueue": "prio-b"})],
        "/api/v1/localqueues/{namespace}/{name}": [
            (f"/api/v1/localqueues/{MINE}/{cq}", {}) for cq in QUEUES
        ],
        "/api/v1/{plural}": [(f"/api/v1/{plural}", {}) for plural in plurals],
        **{
            f"{visibility}/clusterqueues/{{name}}/pendingworkloads": [
                (f"{visibility}/clusterqueues/{cq}/pendingworkloads", {}) for cq in QUEUES
            ]
            for visibility in VISIBILITY
        },
        **{
            f"{visibility}/namespaces/{{namespace}}/localqueues/{{name}}/pendingworkloads": [
                (f"{visibility}/namespaces/{MINE}/localqueues/{cq}/pendingworkloads", {})
                for cq in QUEUES
            ]
            for visibility in VISIBILITY
        },
        "/api/v1/{plural}/{name}": [(f"/api/v1/{p}/{n}", {}) for p, n in cluster_scoped],
    }
    assert all(fills.values()), fills  # every templated route is called at least once
    return fills


def _leaks(world: World, api: httpx.Client) -> list[str]:
    """What the tenant's GET requests reveal of the other namespace, and the GET routes the
    walk cannot call (a templated path without fills)."""
    fills = _fills(world, api)
    found = []
    for path, operations in api.get("/openapi.json").json()["paths"].items():
        if "get" not in operations or path in SKIPPED:
            continue
        if path not in fills and "{" in path:
            found.append(f"{path}: not walked (add fills for it)")
        for concrete, params in fills.get(path, [(path, {})]):
            response = api.get(concrete, params=params, headers=TENANT)
            refused = path in ADMIN_ONLY
            assert response.status_code == (403 if refused else 200), (concrete, params, response.text)
            named = sorted(set(LEAKS.findall(response.text)))
            if named:
                found.append(f"{concrete} {params}: {named}")
    return found


def test_a_tenant_finds_no_trace_of_another_namespace_in_any_get_route(
    world: World, api: httpx.Client
) -> None:
    assert not (leaks := _leaks(world, api)), "\n".join(leaks)


def test_the_walk_fails_for_a_new_get_route_that_leaks(world: World) -> None:
    app = create_app(berth_context(world.engine, TOKENS))

    @app.get("/debug/holders")
    def holders() -> list[str]:
        return [f"{OTHER}/their-hog"]

    @app.get("/debug/holders/{name}")
    def holder(name: str) -> str:
        return name

    with serving(app) as client:
        leaks = _leaks(world, client)
    assert leaks == [
        "/debug/holders {}: ['rival', 'their-']",
        "/debug/holders/{name}: not walked (add fills for it)",
    ]


@pytest.mark.parametrize(
    "who", ["admin", "read token of every namespace", "auth off"]
)
def test_callers_of_every_namespace_see_the_other_namespaces_work(
    world: World, api: httpx.Client, who: str
) -> None:
    """The same routes name the other tenant's work to them (so the walk could fail)."""
    if who == "auth off":
        with serve(world.url) as open_api:
            named = _named(open_api, {})
    else:
        named = _named(api, ADMIN if who == "admin" else READER)
    assert named == dict.fromkeys(named, True)


def _named(api: httpx.Client, headers: dict[str, str]) -> dict[str, bool]:
    return {
        path: bool(LEAKS.search(api.get(path, params=params, headers=headers).text))
        for path, params in [
            (f"/api/v1/workloads/{MINE}/want-quota", {}),  # holders
            (f"/api/v1/workloads/{MINE}/fifo-mine", {}),  # the StrictFIFO head
            (f"/api/v1/workloads/{MINE}/urgent", {}),  # victims
            (f"/api/v1/workloads/{MINE}/low-mine/history", {}),  # the preemptor
            ("/api/v1/nodes/gpu-1/history", {}),  # displaced, device error
            ("/api/v1/usage", {"groupBy": "namespace"}),
            ("/api/v1/localqueues", {}),
            ("/api/v1/namespaces", {}),
        ]
    }


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(f"/api/v1/localqueues/{OTHER}/shared", id="their LocalQueue"),
        pytest.param(f"/api/v1/localqueues/{OTHER}/absent", id="a LocalQueue they might have"),
        pytest.param(f"/api/v1/namespaces/{OTHER}", id="their Namespace"),
        pytest.param(f"/api/v1/workloads/{OTHER}/their-hog", id="their workload"),
        pytest.param(f"/api/v1/workloads?namespace={OTHER}", id="their workloads listed"),
    ],
)
def test_a_tenant_asking_for_another_namespace_is_refused(api: httpx.Client, path: str) -> None:
    response = api.get(path, headers=TENANT)
    assert (response.status_code, response.json()["error"]["code"]) == (403, "Forbidden")
    assert api.get(path, headers=ADMIN).status_code in (200, 404)


@pytest.mark.parametrize("plural", ["localqueues", "namespaces"])
def test_a_tenant_lists_only_its_own_namespaces_objects(api: httpx.Client, plural: str) -> None:
    def namespaces(headers: dict[str, str]) -> set[str]:
        items = api.get(f"/api/v1/{plural}", headers=headers).json()["items"]
        return {i["metadata"].get("namespace", i["metadata"]["name"]) for i in items}

    assert (namespaces(TENANT), namespaces(ADMIN)) == ({MINE}, {MINE, OTHER})


def _usage(api: httpx.Client, world: World, headers: dict[str, str], group_by: str) -> list[Any]:
    params = {"from": (world.start - timedelta(hours=1)).isoformat(), "to": world.now.isoformat(),
              "groupBy": group_by}
    response = api.get("/api/v1/usage", params=params, headers=headers)
    assert response.status_code == 200, response.text
    items: list[Any] = response.json()["items"]
    return items


@pytest.mark.parametrize(
    "group_by",
    ["namespace", "clusterQueue", "clusterQueue,flavor", "cohort", "flavor,namespace"],
)
def test_a_tenants_usage_counts_only_its_namespaces_workloads(
    world: World, api: httpx.Client, group_by: str
) -> None:
    """Whatever it is grouped by: what the admin's report says of the tenant's namespace."""
    groups = group_by.split(",")
    by_namespace = _usage(api, world, ADMIN, ",".join([*groups, "namespace"]) if
                          "namespace" not in groups else group_by)
    assert {i["group"]["namespace"] for i in by_namespace} == {MINE, OTHER}
    expected = [
        {**i, "group": {k: v for k, v in i["group"].items() if k in groups}}
        for i in by_namespace
        if i["group"]["namespace"] == MINE
    ]
    assert _usage(api, world, TENANT, group_by) == expected
