"""Input bounds over real HTTP and a real PostgreSQL: every body-accepting endpoint answers
a 422 (never a 500) for nesting too deep, YAML aliases that expand too far, NUL characters
and oversized annotations, naming the field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from builders.inputs import JSON, YAML, flavor, job, local_queue, node, queue, scenario
from builders.reads import serving

from api.app import create_webhook_app
from quota.manifests.limits import MAX_ANNOTATIONS_BYTES, MAX_DEPTH

pytestmark = pytest.mark.db


def deep_yaml(levels: int = 600) -> str:
    return "a: " + "[" * levels + "]" * levels


def deep_json(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


def alias_bomb() -> str:
    """570 bytes that, expanded, are 9^9 strings under one Node's spec (the issue's bomb,
    placed where each reader walks it)."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    lines.append("objects: [{apiVersion: v1, kind: Node, metadata: {name: n}, spec: {x: *l8}}]")
    lines.append("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nspec: {x: *l8}")
    return "\n".join(lines) + "\n"


@pytest.fixture
def world(api: httpx.Client) -> httpx.Client:
    """A pool with a Node ``n1`` and a pending Job ``ns/j``: every write below would reach
    PostgreSQL if its body were let through."""
    pool = [flavor(), queue(), local_queue(), node()]
    assert api.post("/api/v1/apply", content="\n---\n".join(map(json.dumps, pool)), headers=YAML).status_code == 200
    assert api.post("/api/v1/workloads", json=job()).status_code == 201
    return api


@pytest.fixture(scope="module")
def webhook() -> Iterator[httpx.Client]:
    """The mutating webhook's own app (its listener serves no API route, and the API none
    of its routes)."""
    with serving(create_webhook_app()) as client:
        yield client


def client_for(path: str, world: httpx.Client, webhook: httpx.Client) -> httpx.Client:
    return webhook if path.startswith("/mutate/") else world


# --- nesting depth -------------------------------------------------------------------------

BODY_ENDPOINTS = [
    pytest.param("/api/v1/apply", id="apply"),
    pytest.param("/api/v1/workloads", id="submit"),
    pytest.param("/api/v1/workloads/ns/j/checkpointed", id="checkpointed"),
    pytest.param("/api/v1/nodes/n1/health", id="node health"),
    pytest.param("/api/v1/simulate", id="simulate"),
    pytest.param("/mutate/batch/v1/jobs", id="Kubernetes webhook"),
]


@pytest.mark.parametrize("path", BODY_ENDPOINTS)
@pytest.mark.parametrize(
    ("body", "headers"),
    [
        pytest.param(deep_json(700), JSON, id="JSON 700 deep, which json itself parses"),
        pytest.param(deep_json(5000), JSON, id="JSON 5000 deep, past json's own recursion"),
        pytest.param("[" * 5000, JSON, id="JSON opened 5000 deep and never closed"),
    ],
)
def test_deep_json_is_a_422_on_every_body_endpoint(world: httpx.Client, webhook: httpx.Client, path: str, body: str, headers: dict[str, str]) -> None:
    response = client_for(path, world, webhook).post(path, content=body, headers=headers)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "InvalidInput"
    assert f"nested deeper than {MAX_DEPTH} levels" in error["message"]
    assert world.get("/healthz").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v1/apply", id="apply"),
        pytest.param("/api/v1/workloads", id="submit"),
        pytest.param("/api/v1/simulate", id="simulate"),
    ],
)
def test_deep_yaml_is_a_422_naming_the_line_where_yaml_is_read(world: httpx.Client, path: str) -> None:
    response = world.post(path, content=deep_yaml(), headers=YAML)  # 1.2 KB
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert "line 1, column " in error["message"] and f"nested deeper than {MAX_DEPTH}" in error["message"]
    assert error["field"].startswith("a[0][0]")


# --- NUL -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        pytest.param("/api/v1/apply", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": {"team": "a\0"}}}, "metadata.labels.team", id="a label"),
        pytest.param("/api/v1/workloads", job("k", annotations={"note": "a\0"}), "metadata.annotations.note", id="an annotation"),
        pytest.param("/api/v1/workloads", job("k", annotations={"no\0te": "a"}), "metadata.annotations[no\\0te]", id="an annotation's key"),
        pytest.param("/api/v1/apply", flavor(nodeLabels={"gpu": "h100\0"}), "spec.nodeLabels.gpu", id="a flavor's nodeLabel"),
        pytest.param("/api/v1/apply", flavor(tolerations=[{"key": "gpu\0", "operator": "Exists"}]), "spec.tolerations[0].key", id="a flavor's toleration"),
        pytest.param("/api/v1/workloads", job("k", tolerations=[{"key": "gpu", "operator": "Equal", "value": "\0"}]), "spec.template.spec.tolerations[0].value", id="a Job's toleration"),
        pytest.param("/api/v1/workloads/ns/j/checkpointed", {"location": "s3://ckpt/\0"}, "location", id="a checkpoint location"),
        pytest.param("/api/v1/nodes/n1/health", {"state": "Cordoned", "why": "XID\0"}, "why", id="a health move's why"),
        pytest.param("/api/v1/simulate", scenario({"at": "0s", "create": [job(annotations={"a": "\0"})]}), "steps[0].create[0].metadata.annotations.a", id="a scenario's Job"),
        pytest.param("/mutate/batch/v1/jobs", {"request": {"uid": "u", "operation": "CREATE", "object": job(annotations={"a": "\0"})}}, "request.object.metadata.annotations.a", id="the webhook's Job"),
    ],
)
def test_nul_is_a_422_naming_the_field(world: httpx.Client, webhook: httpx.Client, path: str, body: Any, field: str) -> None:
    response = client_for(path, world, webhook).post(path, content=json.dumps(body), headers=JSON)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("InvalidInput", field)
    assert "must not contain NUL characters" in error["message"]


def test_a_lone_surrogate_is_refused_like_nul_naming_the_field(world: httpx.Client) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": {"team": "x"}}}
    body = json.dumps(namespace).replace('"x"', '"\\ud800"')  # half a surrogate pair: not text
    response = world.post("/api/v1/apply", content=body, headers=JSON)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == "metadata.labels.team"


@pytest.mark.parametrize("path", ["/api/v1/nodes/n1/health",
                                  "/api/v1/workloads/ns/j/admission-checks/capacity"])
def test_a_json_body_that_is_not_text_is_a_422_naming_the_body(world: httpx.Client, path: str) -> None:
    response = world.post(path, content=b"\x0b8*\xff", headers=JSON)
    assert response.status_code == 422, response.text  # FastAPI's own answer is a 400
    assert response.json()["error"]["code"] in ("InvalidRequest", "InvalidInput")


# --- annotations ---------------------------------------------------------------------------


def big_annotations(total: int) -> dict[str, str]:
    return {"berth.dev/note": "x" * (total - len("berth.dev/note"))}


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        pytest.param("/api/v1/apply", {**flavor(), "metadata": {"name": "h100", "annotations": big_annotations(857 * 1024)}}, 200, id="an 857 KiB map on a ResourceFlavor"),
        pytest.param("/api/v1/apply", node(annotations=big_annotations(MAX_ANNOTATIONS_BYTES + 1)), 200, id="a Node one byte over"),
        pytest.param("/api/v1/workloads", job("k", annotations=big_annotations(MAX_ANNOTATIONS_BYTES + 1)), 201, id="a submitted Job one byte over"),
    ],
)
def test_annotations_over_256_kib_are_a_422_and_at_256_kib_accepted(world: httpx.Client, path: str, body: dict[str, Any], status: int) -> None:
    response = world.post(path, json=body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["field"] == "metadata.annotations"
    assert f"at most {MAX_ANNOTATIONS_BYTES}" in error["message"]
    body["metadata"]["annotations"] = big_annotations(MAX_ANNOTATIONS_BYTES)
    assert world.post(path, json=body).status_code == status


# --- aliases -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        pytest.param("/api/v1/simulate", id="simulate (12 minutes of CPU before)"),
        pytest.param("/api/v1/apply", id="apply"),
        pytest.param("/api/v1/workloads", id="submit"),
    ],
)
def test_an_alias_bomb_is_refused_by_the_alias_bound(world: httpx.Client, path: str) -> None:
    response = world.post(path, content=alias_bomb(), headers=YAML)
    assert response.status_code == 422, response.text
    assert "YAML aliases expand to more than" in response.json()["error"]["message"]




# --- numbers and names past what the parsers take --------------------------------------------


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        pytest.param('{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x", "namespace": "ns"}, "spec": {"parallelism": ' + "9" * 5000 + "}}", JSON, id="a 5,000-digit JSON integer"),
        pytest.param("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x, namespace: ns}\nspec: {parallelism: " + "9" * 5000 + "}\n", YAML, id="a 5,000-digit YAML integer"),
    ],
)
def test_an_integer_past_the_digit_limit_is_a_422(world: httpx.Client, body: str, headers: dict[str, str]) -> None:
    response = world.post("/api/v1/workloads", content=body, headers=headers)
    assert response.status_code == 422, response.text
    assert "more than 4300 digits" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("ns\n", id="a trailing newline"),
        pytest.param("ns\nother", id="a newline inside"),
    ],
)
def test_a_name_with_a_newline_is_refused_naming_the_field(world: httpx.Client, name: str) -> None:
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    response = world.post("/api/v1/apply", content=json.dumps(namespace), headers=JSON)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"] == "metadata.name"
