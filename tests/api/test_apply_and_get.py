"""POST /api/v1/apply and the GET endpoints, over real HTTP and a real PostgreSQL."""

from __future__ import annotations

import httpx
import pytest
from builders.paths import EXAMPLES

TWO_TEAMS = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {gpu: h100}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: lab
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: team-a}
"""


def _gpu_quota(manifest: dict) -> dict:  # type: ignore[type-arg]
    return manifest["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]  # type: ignore[no-any-return]


def test_applied_objects_are_served_with_their_quota(api: httpx.Client) -> None:
    response = api.post("/api/v1/apply", content=TWO_TEAMS, headers={"content-type": "application/yaml"})
    assert response.status_code == 200, response.text
    actions = {(c["kind"], c["name"]): c["action"] for c in response.json()["changes"]}
    assert actions == {
        ("ResourceFlavor", "h100"): "created",
        ("ClusterQueue", "team-a"): "created",
        ("LocalQueue", "team-a/main"): "created",
    }
    queue = api.get("/api/v1/clusterqueues/team-a").json()
    assert queue["spec"]["cohort"] == "lab"
    assert _gpu_quota(queue) == {"name": "nvidia.com/gpu", "nominalQuota": "8", "borrowingLimit": "4"}
    listed = api.get("/api/v1/clusterqueues").json()["items"]
    assert [q["metadata"]["name"] for q in listed] == ["team-a"]
    local = api.get("/api/v1/localqueues/team-a/main").json()
    assert local["spec"]["clusterQueue"] == "team-a"


def test_applying_the_same_manifest_twice_changes_nothing(api: httpx.Client) -> None:
    api.post("/api/v1/apply", content=TWO_TEAMS)
    again = api.post("/api/v1/apply", content=TWO_TEAMS).json()
    assert {c["action"] for c in again["changes"]} == {"unchanged"}


def test_json_body_is_accepted(api: httpx.Client) -> None:
    body = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "WorkloadPriorityClass",
            "metadata": {"name": "high"}, "value": 1000}
    assert api.post("/api/v1/apply", json=body).status_code == 200
    assert api.get("/api/v1/priorityclasses/high").json()["value"] == 1000


def test_invalid_manifest_is_rejected_with_the_field_and_nothing_is_written(api: httpx.Client) -> None:
    bad = TWO_TEAMS.replace("nominalQuota: 8", "nominalQuota: -5")
    response = api.post("/api/v1/apply", content=bad)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "InvalidInput"
    assert error["field"] == "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"
    assert "ClusterQueue/team-a" in error["message"]
    # The valid flavor in the same request was not written either: all or nothing.
    assert api.get("/api/v1/resourceflavors").json()["items"] == []


def test_missing_cluster_queue_is_allowed_but_flagged(api: httpx.Client) -> None:
    orphan = ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
              "metadata: {name: q, namespace: ns}\nspec: {clusterQueue: nowhere}\n")
    body = api.post("/api/v1/apply", content=orphan).json()
    assert body["changes"][0]["action"] == "created"
    [warning] = body["warnings"]
    assert warning["field"] == "spec.clusterQueue"
    assert "nowhere" in warning["message"]


@pytest.mark.parametrize(
    ("path", "status"),
    [
        pytest.param("/api/v1/clusterqueues/absent", 404, id="unknown object is 404"),
        pytest.param("/api/v1/widgets", 404, id="unknown kind is 404"),
        pytest.param("/api/v1/localqueues/ns/absent", 404, id="unknown local queue is 404"),
    ],
)
def test_errors_have_the_documented_shape(api: httpx.Client, path: str, status: int) -> None:
    response = api.get(path)
    assert response.status_code == status
    assert set(response.json()["error"]) >= {"code", "message"}


def test_health_and_readiness(api: httpx.Client) -> None:
    assert api.get("/healthz").json() == {"status": "ok"}
    assert api.get("/readyz").status_code == 200


def test_sample_gpu_pool_applies(api: httpx.Client) -> None:
    text = (EXAMPLES / "gpu-pool.yaml").read_text()
    response = api.post("/api/v1/apply", content=text)
    assert response.status_code == 200, response.text
    names = {q["metadata"]["name"] for q in api.get("/api/v1/clusterqueues").json()["items"]}
    assert names == {"llm-training", "inference"}
