"""The fake apiserver against documented Kubernetes API behaviour (the tests of the test tool)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from builders import manifests
from builders.fakeapi import FakeApiServer, FakeKubectl
from builders.fakeapi.patches import JSON_PATCH, MERGE, STRATEGIC, json_patch, merge_patch
from builders.fakeapi.selectors import SelectorError, parse_selector
from kubernetes_asyncio import client as k8s
from kubernetes_asyncio import watch as k8s_watch

JOBS = "/apis/batch/v1/namespaces/team-a/jobs"
NODES = "/api/v1/nodes"


@pytest.fixture
def kubectl(kubectl: FakeKubectl) -> FakeKubectl:
    """The fake cluster with the namespace ``team-a`` the Jobs here live in."""
    kubectl.namespace("team-a")
    return kubectl


def job(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A suspended Job with just ``labels`` (the fake API server reads nothing else)."""
    return manifests.job(name, namespace=None, queue=None, labels=labels, suspend=True)


def watch_lines(kubectl: FakeKubectl, path: str, **params: Any) -> list[dict[str, Any]]:
    query = {"watch": "true", "timeoutSeconds": "1", **params}
    with kubectl.http.stream("GET", path, params=query) as response:
        assert response.status_code == 200
        return [json.loads(line) for line in response.iter_lines() if line]


# -- pure pieces ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        pytest.param({"a": "b"}, {"a": "c"}, {"a": "c"}, id="merge replaces a scalar"),
        pytest.param({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}, id="merge adds a key"),
        pytest.param({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}, id="merge null deletes"),
        pytest.param({"a": [1, 2]}, {"a": [3]}, {"a": [3]}, id="merge replaces lists whole"),
        pytest.param(
            {"a": {"b": "c", "d": "e"}},
            {"a": {"d": None, "f": "g"}},
            {"a": {"b": "c", "f": "g"}},
            id="merge recurses into maps",
        ),
    ],
)
def test_merge_patch_follows_rfc_7386(target: Any, patch: Any, expected: Any) -> None:
    assert merge_patch(target, patch) == expected


@pytest.mark.parametrize(
    ("operations", "expected"),
    [
        pytest.param([{"op": "add", "path": "/b", "value": 1}], {"a": [1], "b": 1}, id="add key"),
        pytest.param([{"op": "add", "path": "/a/-", "value": 2}], {"a": [1, 2]}, id="append"),
        pytest.param([{"op": "replace", "path": "/a", "value": 3}], {"a": 3}, id="replace"),
        pytest.param([{"op": "remove", "path": "/a/0"}], {"a": []}, id="remove item"),
    ],
)
def test_json_patch_follows_rfc_6902(operations: Any, expected: Any) -> None:
    assert json_patch({"a": [1]}, operations) == expected


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        pytest.param("", {}, True, id="empty selector matches all"),
        pytest.param("q", {"q": "x"}, True, id="existence"),
        pytest.param("!q", {"q": "x"}, False, id="non-existence"),
        pytest.param("q=a,r!=b", {"q": "a", "r": "c"}, True, id="equality and inequality"),
        pytest.param("q==a", {"q": "b"}, False, id="double equals"),
        pytest.param("q in (a, b)", {"q": "b"}, True, id="set membership"),
        pytest.param("q notin (a,b),r", {"q": "c", "r": "1"}, True, id="notin with existence"),
        pytest.param("q notin (a,b)", {"q": "a"}, False, id="notin excludes"),
    ],
)
def test_label_selectors(selector: str, labels: dict[str, str], matches: bool) -> None:
    assert parse_selector(selector)(labels) is matches


def test_a_malformed_selector_is_refused() -> None:
    with pytest.raises(SelectorError):
        parse_selector("=x")


# -- discovery and CRUD ---------------------------------------------------------------------


def test_discovery_lists_groups_versions_and_subresources(kubectl: FakeKubectl) -> None:
    assert kubectl.get("/api")["versions"] == ["v1"]
    groups = {g["name"] for g in kubectl.get("/apis")["groups"]}
    assert {"batch", "coordination.k8s.io", "apiextensions.k8s.io"} <= groups
    names = {r["name"] for r in kubectl.get("/apis/batch/v1")["resources"]}
    assert names == {"jobs", "jobs/status"}
    assert kubectl.request("GET", "/apis/nothing.example/v1").status_code == 404


def test_create_sets_server_fields_and_refuses_a_duplicate(kubectl: FakeKubectl) -> None:
    created = kubectl.create(JOBS, job("a"))
    meta = created["metadata"]
    assert (meta["namespace"], meta["generation"]) == ("team-a", 1)
    assert meta["uid"] and meta["creationTimestamp"] and int(meta["resourceVersion"]) > 1
    again = kubectl.request("POST", JOBS, json=job("a"))
    assert (again.status_code, again.json()["reason"]) == (409, "AlreadyExists")
    missing = kubectl.request("GET", f"{JOBS}/nope")
    assert missing.status_code == 404
    assert missing.json()["kind"] == "Status" and missing.json()["reason"] == "NotFound"


def test_list_carries_a_resource_version_and_filters_by_label(kubectl: FakeKubectl) -> None:
    kubectl.create(JOBS, job("a", {"queue": "q1"}))
    kubectl.create(JOBS, job("b", {"queue": "q2"}))
    listed = kubectl.request("GET", JOBS, params={"labelSelector": "queue=q1"}).json()
    assert listed["kind"] == "JobList" and int(listed["metadata"]["resourceVersion"]) >= 3
    assert [item["metadata"]["name"] for item in listed["items"]] == ["a"]
    everywhere = kubectl.get("/apis/batch/v1/jobs")
    assert len(everywhere["items"]) == 2


def test_put_with_a_stale_resource_version_conflicts(kubectl: FakeKubectl) -> None:
    created = kubectl.create(JOBS, job("a"))
    updated = {**created, "metadata": {**created["metadata"], "labels": {"x": "1"}}}
    first = kubectl.request("PUT", f"{JOBS}/a", json=updated)
    assert first.status_code == 200
    assert first.json()["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    stale = kubectl.request("PUT", f"{JOBS}/a", json=updated)
    assert (stale.status_code, stale.json()["reason"]) == (409, "Conflict")


@pytest.mark.parametrize(
    ("content_type", "patch"),
    [
        pytest.param(MERGE, {"spec": {"suspend": False}}, id="merge patch"),
        pytest.param(STRATEGIC, {"spec": {"suspend": False}}, id="strategic merge patch"),
        pytest.param(
            JSON_PATCH,
            [{"op": "replace", "path": "/spec/suspend", "value": False}],
            id="json patch",
        ),
    ],
)
def test_patch_formats_chosen_by_content_type(
    kubectl: FakeKubectl, content_type: str, patch: Any
) -> None:
    kubectl.create(JOBS, job("a"))
    patched = kubectl.patch(f"{JOBS}/a", patch, content_type)
    assert patched["spec"]["suspend"] is False
    assert patched["metadata"]["generation"] == 2  # a spec change bumps the generation


def test_a_patch_of_unknown_media_type_is_refused(kubectl: FakeKubectl) -> None:
    kubectl.create(JOBS, job("a"))
    response = kubectl.request(
        "PATCH", f"{JOBS}/a", content=b"{}", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 415


def test_status_is_a_subresource(kubectl: FakeKubectl) -> None:
    kubectl.create(JOBS, job("a"))
    ignored = kubectl.patch(
        f"{JOBS}/a", {"status": {"active": 1}, "metadata": {"labels": {"l": "v"}}}
    )
    assert "status" not in ignored and ignored["metadata"]["labels"] == {"l": "v"}
    done = {"conditions": [{"type": "Complete", "status": "True"}]}
    patched = kubectl.patch(f"{JOBS}/a/status", {"status": done, "spec": {"suspend": False}})
    assert patched["status"] == done and patched["spec"]["suspend"] is True
    assert patched["metadata"]["generation"] == 1


def test_a_no_op_patch_keeps_the_resource_version(kubectl: FakeKubectl) -> None:
    created = kubectl.create(JOBS, job("a"))
    same = kubectl.patch(f"{JOBS}/a", {"spec": {"suspend": True}})
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


# -- watch ----------------------------------------------------------------------------------


def test_watch_replays_changes_after_a_resource_version(kubectl: FakeKubectl) -> None:
    start = kubectl.get(JOBS)["metadata"]["resourceVersion"]
    kubectl.create(JOBS, job("a"))
    kubectl.patch(f"{JOBS}/a", {"metadata": {"labels": {"x": "y"}}})
    kubectl.delete(f"{JOBS}/a")
    events = watch_lines(kubectl, JOBS, resourceVersion=start)
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] > int(start)


def test_watch_without_a_version_starts_with_the_current_state(kubectl: FakeKubectl) -> None:
    kubectl.create(JOBS, job("a"))
    events = watch_lines(kubectl, JOBS)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "a")]


def test_watch_sends_bookmarks_when_asked(kubectl: FakeKubectl) -> None:
    rv = kubectl.get(JOBS)["metadata"]["resourceVersion"]
    events = watch_lines(kubectl, JOBS, resourceVersion=rv, allowWatchBookmarks="true")
    assert events and all(e["type"] == "BOOKMARK" for e in events)
    assert events[-1]["object"]["metadata"]["resourceVersion"] == rv
    assert watch_lines(kubectl, JOBS, resourceVersion=rv) == []


def test_watch_from_a_compacted_version_is_gone(kubectl: FakeKubectl) -> None:
    rv = kubectl.create(JOBS, job("a"))["metadata"]["resourceVersion"]
    kubectl.create(JOBS, job("b"))
    kubectl.compact()
    events = watch_lines(kubectl, JOBS, resourceVersion=rv)
    assert [e["type"] for e in events] == ["ERROR"]
    assert (events[0]["object"]["code"], events[0]["object"]["reason"]) == (410, "Expired")


def test_watch_with_a_selector_sees_objects_enter_and_leave(kubectl: FakeKubectl) -> None:
    rv = kubectl.get(JOBS)["metadata"]["resourceVersion"]
    kubectl.create(JOBS, job("a"))
    kubectl.patch(f"{JOBS}/a", {"metadata": {"labels": {"q": "1"}}})
    kubectl.patch(f"{JOBS}/a", {"metadata": {"labels": {"q": None}}})
    events = watch_lines(kubectl, JOBS, resourceVersion=rv, labelSelector="q")
    assert [e["type"] for e in events] == ["ADDED", "DELETED"]


# -- custom resources -----------------------------------------------------------------------


def crd(plural: str = "widgets", schema: bool = True) -> dict[str, Any]:
    version: dict[str, Any] = {
        "name": "v1",
        "served": True,
        "storage": True,
        "subresources": {"status": {}},
    }
    if schema:
        version["schema"] = {"openAPIV3Schema": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.example.dev"},
        "spec": {
            "group": "example.dev",
            "scope": "Cluster",
            "names": {"plural": plural, "kind": "Widget", "singular": "widget"},
            "versions": [version],
        },
    }


CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def test_a_registered_crd_is_served_with_its_status_subresource(kubectl: FakeKubectl) -> None:
    created = kubectl.create(CRDS, crd())
    assert {c["type"] for c in created["status"]["conditions"]} >= {"Established"}
    widget = kubectl.create("/apis/example.dev/v1/widgets", {"metadata": {"name": "w"}, "spec": {}})
    assert widget["kind"] == "Widget" and widget["apiVersion"] == "example.dev/v1"
    status = kubectl.patch("/apis/example.dev/v1/widgets/w/status", {"status": {"ok": True}})
    assert status["status"] == {"ok": True}
    kubectl.delete(f"{CRDS}/widgets.example.dev")
    assert kubectl.request("GET", "/apis/example.dev/v1/widgets").status_code == 404


def test_a_crd_without_a_schema_is_invalid(kubectl: FakeKubectl) -> None:
    response = kubectl.request("POST", CRDS, json=crd(schema=False))
    assert (response.status_code, response.json()["reason"]) == (422, "Invalid")


# -- the real client against it -------------------------------------------------------------


async def test_kubernetes_asyncio_lists_and_watches_the_fake(fake_api: FakeApiServer) -> None:
    config = k8s.Configuration()
    config.host = fake_api.url
    async with k8s.ApiClient(configuration=config) as api:
        core = k8s.CoreV1Api(api)
        await core.create_node({"metadata": {"name": "n1", "labels": {"gpu": "h100"}}})
        nodes = await core.list_node(label_selector="gpu=h100")
        assert [n.metadata.name for n in nodes.items] == ["n1"]
        seen = []
        stream = k8s_watch.Watch().stream(
            core.list_node, resource_version="1", timeout_seconds=1, allow_watch_bookmarks=True
        )
        async with stream as events:
            async for event in events:
                seen.append(event["type"])
        assert seen[0] == "ADDED" and set(seen[1:]) <= {"BOOKMARK"}
        with pytest.raises(k8s.ApiException) as caught:
            await core.read_node("missing")
        assert caught.value.status == 404
