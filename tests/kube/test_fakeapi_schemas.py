"""The fake apiserver checks a custom resource against its CRD's schema on every write, as
a real one does: fields the schema does not name are pruned (but under
``x-kubernetes-preserve-unknown-fields``), a null the schema does not allow is dropped, and
a value of the wrong type is refused with 422 Invalid naming the field, changing nothing."""

from __future__ import annotations

from typing import Any

import pytest
from builders.fakeapi import FakeKubectl

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GADGETS = "/apis/example.dev/v1/namespaces/default/gadgets"
SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "suspend": {"type": "boolean"},
                "owner": {"type": "string", "nullable": True},
                "size": {"x-kubernetes-int-or-string": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "groups": {"type": "array", "items": {
                    "type": "object", "properties": {"name": {"type": "string"}}}},
            },
        },
        "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
    },
}  # fmt: skip


@pytest.fixture
def gadgets(kubectl: FakeKubectl) -> FakeKubectl:
    kubectl.create(CRDS, {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.dev"},
        "spec": {"group": "example.dev", "scope": "Namespaced",
                 "names": {"plural": "gadgets", "kind": "Gadget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": SCHEMA},
                               "subresources": {"status": {}}}]},
    })  # fmt: skip
    return kubectl


def gadget(spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "example.dev/v1", "kind": "Gadget", "metadata": {"name": "g"},
            "spec": spec}  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "stored"),
    [
        pytest.param({"replicas": 2, "colour": "red"}, {"replicas": 2},
                     id="a field the schema does not name is pruned"),
        pytest.param({"groups": [{"name": "a", "extra": 1}]}, {"groups": [{"name": "a"}]},
                     id="pruned inside a list's objects too"),
        pytest.param({"template": {"anything": {"goes": [1]}}},
                     {"template": {"anything": {"goes": [1]}}},
                     id="kept under x-kubernetes-preserve-unknown-fields"),
        pytest.param({"labels": {"a": "b"}}, {"labels": {"a": "b"}},
                     id="a map's keys are its additionalProperties"),
        pytest.param({"replicas": None, "owner": None}, {"owner": None},
                     id="a null is dropped unless nullable"),
        pytest.param({"size": "10Gi"}, {"size": "10Gi"}, id="int-or-string takes a string"),
    ],
)  # fmt: skip
def test_a_custom_resource_is_pruned_by_its_schema(
    gadgets: FakeKubectl, spec: dict[str, Any], stored: dict[str, Any]
) -> None:
    assert gadgets.create(GADGETS, gadget(spec))["spec"] == stored
    assert gadgets.get(f"{GADGETS}/g")["spec"] == stored


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        pytest.param({"replicas": "two"}, "spec.replicas", id="a string for an integer"),
        pytest.param({"replicas": 1.5}, "spec.replicas", id="a fraction for an integer"),
        pytest.param({"suspend": "yes"}, "spec.suspend", id="a string for a boolean"),
        pytest.param({"labels": {"a": 1}}, "spec.labels.a", id="a number in a string map"),
        pytest.param({"groups": {"name": "a"}}, "spec.groups", id="an object for a list"),
        pytest.param({"size": True}, "spec.size", id="a boolean for int-or-string"),
    ],
)  # fmt: skip
def test_a_wrong_type_is_refused_naming_the_field(
    gadgets: FakeKubectl, spec: dict[str, Any], field: str
) -> None:
    refused = gadgets.request("POST", GADGETS, json=gadget(spec))
    assert (refused.status_code, refused.json()["reason"]) == (422, "Invalid")
    assert f"{field}: Invalid value" in refused.json()["message"]
    assert gadgets.request("GET", f"{GADGETS}/g").status_code == 404


def test_updates_and_status_writes_are_checked_too(gadgets: FakeKubectl) -> None:
    gadgets.create(GADGETS, gadget({"replicas": 1}))
    refused = gadgets.request("PATCH", f"{GADGETS}/g", json={"spec": {"replicas": "many"}},
                              headers={"Content-Type": "application/merge-patch+json"})
    assert refused.status_code == 422
    assert gadgets.get(f"{GADGETS}/g")["spec"] == {"replicas": 1}
    gadgets.patch(f"{GADGETS}/g/status", {"status": {"phase": "Running", "secret": "x"}})
    assert gadgets.get(f"{GADGETS}/g")["status"] == {"phase": "Running"}
