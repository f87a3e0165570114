"""Kueue's visibility API served by Berth (``/apis/visibility.kueue.x-k8s.io/...``): Kueue's
PendingWorkloadsSummary shape, the engine's positions, limit/offset as Kueue takes them, a
Kubernetes Status for an unknown queue, and a tenant seeing only its namespaces."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from builders.reads import World, pool, serve

from admission.kube.templates import JOB_UID
from api.auth import Grant, Role
from api.tenancy import HIDDEN

pytestmark = pytest.mark.db

GROUP = "visibility.kueue.x-k8s.io"
# Kueue's JSON field names, from its Go types in apis/visibility/v1beta2/types.go (the same
# in v1beta1/types.go): PendingWorkloadsSummary{TypeMeta, ObjectMeta, Items} and
# PendingWorkload{ObjectMeta, Priority, LocalQueueName, PositionInClusterQueue,
# PositionInLocalQueue}; the metadata Kueue fills in pkg/visibility/storage/utils.go
# (newPendingWorkload: Name, Namespace, OwnerReferences, CreationTimestamp), and
# metav1.OwnerReference's required fields.
SUMMARY_FIELDS = {"kind", "apiVersion", "metadata", "items"}
ITEM_FIELDS = {"metadata", "priority", "localQueueName", "positionInClusterQueue",
               "positionInLocalQueue"}  # fmt: skip
ITEM_METADATA_FIELDS = {"name", "namespace", "creationTimestamp", "ownerReferences"}
OWNER_REFERENCE_FIELDS = {"apiVersion", "kind", "name", "uid"}
# What Berth adds, where every Kubernetes client keeps it: ObjectMeta's annotations.
BERTH_METADATA_FIELDS = {"annotations"}

ADMIN = Grant("admin-token-0123456789abcdef", Role.ADMIN)
TENANT_A = Grant("tenant-a-token-0123456789abc", Role.READ, frozenset({"team-a"}))
TENANT_B = Grant("tenant-b-token-0123456789abc", Role.READ, frozenset({"team-b"}))
_OTHER_QUEUE = (
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {name: other, namespace: team-b}\nspec: {clusterQueue: team-a}\n"
)


@pytest.fixture(scope="module")
def shared_db(pg_server: Any, migrated_template: str) -> Iterator[str]:
    """One database for the module: every test here only reads."""
    url = pg_server.create(template=migrated_template)
    try:
        yield url
    finally:
        pg_server.drop(url)


@pytest.fixture(scope="module")
def world(shared_db: str) -> Iterator[World]:
    """ClusterQueue team-a (4 GPUs, no cohort, StrictFIFO) runs team-b's ``big`` (LocalQueue ``other``
    of namespace team-b points at it); waiting, in submission order:
    team-a/a1, team-b/b1 (LocalQueue ``other``), team-a/a2, team-b/b2, team-a/a3."""
    w = World(shared_db)
    team_a = "kind: ClusterQueue\nmetadata: {name: team-a}\nspec:\n"
    queues = pool(("team-a", 4), ("team-b", 4), cohort=None)
    w.apply(queues.replace(team_a, team_a + "  queueingStrategy: StrictFIFO\n") + _OTHER_QUEUE)
    w.submit("big", 4, "team-b", queue="other")
    w.cycle()
    for name, namespace, queue in (("a1", "team-a", "main"), ("b1", "team-b", "other"),
                                   ("a2", "team-a", "main"), ("b2", "team-b", "other"),
                                   ("a3", "team-a", "main")):  # fmt: skip
        w.advance(minutes=1)
        w.submit(name, 2, namespace, queue=queue, annotations={JOB_UID: f"uid-{name}"})
    w.cycle()
    yield w
    w.close()


@pytest.fixture(scope="module")
def api(world: World) -> Iterator[httpx.Client]:
    with serve(world.url, tokens=[ADMIN, TENANT_A, TENANT_B]) as client:
        client.headers["Authorization"] = f"Bearer {ADMIN.token}"
        yield client


def _cq(version: str = "v1beta2", cq: str = "team-a") -> str:
    return f"/apis/{GROUP}/{version}/clusterqueues/{cq}/pendingworkloads"


def _lq(namespace: str, name: str, version: str = "v1beta2") -> str:
    return f"/apis/{GROUP}/{version}/namespaces/{namespace}/localqueues/{name}/pendingworkloads"


def _get(api: httpx.Client, path: str, token: Grant = ADMIN, **params: Any) -> Any:
    response = api.get(path, params=params, headers={"Authorization": f"Bearer {token.token}"})
    assert response.status_code == 200, response.text
    return response.json()


def _names(body: Any) -> list[str]:
    return [i["metadata"]["name"] for i in body["items"]]


@pytest.mark.parametrize("version", ["v1beta2", "v1beta1"])
def test_the_answer_has_exactly_kueues_fields(api: httpx.Client, version: str) -> None:
    for body in (_get(api, _cq(version)), _get(api, _lq("team-a", "main", version))):
        assert set(body) == SUMMARY_FIELDS
        assert (body["kind"], body["apiVersion"]) == ("PendingWorkloadsSummary", f"{GROUP}/{version}")
        assert body["items"]
        for item in body["items"]:
            assert set(item) == ITEM_FIELDS
            assert set(item["metadata"]) == ITEM_METADATA_FIELDS | BERTH_METADATA_FIELDS
            (owner,) = item["metadata"]["ownerReferences"]
            assert set(owner) == OWNER_REFERENCE_FIELDS
            assert owner == {"apiVersion": "batch/v1", "kind": "Job",
                             "name": item["metadata"]["name"],
                             "uid": f"uid-{item['metadata']['name']}"}  # fmt: skip
            assert item["metadata"]["creationTimestamp"].endswith("Z")
            assert isinstance(item["priority"], int)


def test_each_item_carries_berths_wait_reason_as_annotations(api: httpx.Client) -> None:
    a1 = _get(api, _cq())["items"][0]
    rest = _get(api, "/api/v1/workloads/team-a/a1")
    assert a1["metadata"]["annotations"] == {
        "berth.dev/wait-reason": "WaitingForQuota", "berth.dev/wait-message": rest["message"],
    }  # fmt: skip
    assert rest["message"]


def test_positions_are_the_ones_get_workloads_gives(api: httpx.Client) -> None:
    rest = api.get("/api/v1/workloads", params={"clusterQueue": "team-a", "state": "Pending"})
    expected = {(w["namespace"], w["name"]): w["position"] - 1 for w in rest.json()["items"]}
    body = _get(api, _cq())
    shown = {(i["metadata"]["namespace"], i["metadata"]["name"]): i["positionInClusterQueue"]
             for i in body["items"]}  # fmt: skip
    assert shown == expected
    assert _names(body) == ["a1", "b1", "a2", "b2", "a3"]
    assert [i["positionInLocalQueue"] for i in body["items"]] == [0, 0, 1, 1, 2]
    assert [i["localQueueName"] for i in body["items"]] == ["main", "other"] * 2 + ["main"]


@pytest.mark.parametrize(
    ("path", "params", "names", "in_cq", "in_lq"),
    [
        pytest.param(_cq(), {}, ["a1", "b1", "a2", "b2", "a3"], [0, 1, 2, 3, 4], [0, 0, 1, 1, 2],
                     id="a ClusterQueue lists every pending workload in its order"),
        pytest.param(_cq(), {"offset": 1, "limit": 2}, ["b1", "a2"], [1, 2], [0, 1],
                     id="offset and limit take a slice with the real positions"),
        pytest.param(_cq(), {"limit": 0}, ["a1", "b1", "a2", "b2", "a3"], [0, 1, 2, 3, 4],
                     [0, 0, 1, 1, 2], id="limit 0 means Kueue's default 1000"),
        pytest.param(_cq(), {"limit": -1}, [], [], [], id="a negative limit lists nothing"),
        pytest.param(_cq(), {"offset": -5, "limit": 1}, ["a1"], [0], [0],
                     id="a negative offset is 0"),
        pytest.param(_cq(), {"offset": 9}, [], [], [], id="an offset past the end lists nothing"),
        pytest.param(_lq("team-a", "main"), {}, ["a1", "a2", "a3"], [0, 2, 4], [0, 1, 2],
                     id="a LocalQueue lists its own, placed in the ClusterQueue too"),
        pytest.param(_lq("team-b", "other"), {"offset": 1}, ["b2"], [3], [1],
                     id="a LocalQueue's offset counts in the LocalQueue"),
        pytest.param(_lq("team-b", "main"), {}, [], [], [],
                     id="a LocalQueue with nothing pending lists nothing"),
    ],
)  # fmt: skip
def test_limit_and_offset(
    api: httpx.Client, path: str, params: dict[str, int], names: list[str],
    in_cq: list[int], in_lq: list[int],
) -> None:  # fmt: skip
    body = _get(api, path, **params)
    assert _names(body) == names
    assert [i["positionInClusterQueue"] for i in body["items"]] == in_cq
    assert [i["positionInLocalQueue"] for i in body["items"]] == in_lq


@pytest.mark.parametrize(
    ("path", "kind", "name"),
    [
        pytest.param(_cq(cq="nope"), "clusterqueue", "nope", id="unknown ClusterQueue"),
        pytest.param(_lq("team-a", "nope"), "localqueue", "nope", id="unknown LocalQueue"),
        pytest.param(_lq("team-z", "main", "v1beta1"), "localqueue", "main",
                     id="a LocalQueue of an unknown namespace"),
    ],
)  # fmt: skip
def test_unknown_queue_is_a_kubernetes_not_found_status(
    api: httpx.Client, path: str, kind: str, name: str
) -> None:
    response = api.get(path)
    assert response.status_code == 404
    assert response.json() == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'{kind}.{GROUP} "{name}" not found', "reason": "NotFound",
        "details": {"name": name, "group": GROUP, "kind": kind}, "code": 404,
    }  # fmt: skip


def test_a_tenant_sees_only_its_namespaces_with_the_real_positions(api: httpx.Client) -> None:
    body = _get(api, _cq(), token=TENANT_A)
    assert _names(body) == ["a1", "a2", "a3"]
    assert [i["positionInClusterQueue"] for i in body["items"]] == [0, 2, 4]
    assert [i["positionInLocalQueue"] for i in body["items"]] == [0, 1, 2]
    assert _names(_get(api, _cq(), token=TENANT_A, offset=1, limit=1)) == ["a2"]


def test_a_tenants_wait_message_hides_other_namespaces_work(api: httpx.Client) -> None:
    def message(token: Grant) -> str:
        b1 = _get(api, _lq("team-b", "other"), token=token)["items"][0]
        return str(b1["metadata"]["annotations"]["berth.dev/wait-message"])

    # b1 waits behind the StrictFIFO head team-a/a1: team-b's tenant is not told whose.
    assert "head team-a/a1;" in message(ADMIN)
    assert f"head {HIDDEN};" in message(TENANT_B)


def test_a_tenant_may_not_list_another_namespaces_local_queue(api: httpx.Client) -> None:
    response = api.get(_lq("team-b", "other"), headers={"Authorization": f"Bearer {TENANT_A.token}"})
    assert response.status_code == 403
    assert response.json()["kind"] == "Status"
    assert response.json()["reason"] == "Forbidden"


def test_a_request_without_a_token_is_refused(api: httpx.Client) -> None:
    assert api.get(_cq(), headers={"Authorization": ""}).status_code == 401
