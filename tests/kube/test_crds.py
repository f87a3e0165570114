"""deploy/base/crds: every CRD is a valid v1 CRD, served by the fake, and round-trips Berth's parser."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from builders.crds import CRD_DIR
from builders.fakeapi import FakeKubectl

from admission.kube.mirror import BERTH_KINDS, manifest_document
from quota.manifests.documents import parse_objects

EXAMPLES: dict[str, dict[str, Any]] = {
    "ResourceFlavor": {"spec": {"nodeLabels": {"gpu": "h100"}}},
    "ClusterQueue": {
        "spec": {
            "cohort": "research",
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "h100",
                            "resources": [
                                {"name": "nvidia.com/gpu", "nominalQuota": 8, "borrowingLimit": "4"}
                            ],
                        }
                    ],
                }
            ],
        }
    },
    "LocalQueue": {"metadata": {"namespace": "team-a"}, "spec": {"clusterQueue": "team-a"}},
    "Cohort": {"spec": {"parentName": "org"}},
    "WorkloadPriorityClass": {"value": 1000, "description": "production"},
    "Topology": {
        "spec": {"levels": [{"nodeLabel": "rack"}, {"nodeLabel": "kubernetes.io/hostname"}]}
    },
    "AdmissionCheck": {"spec": {"controllerName": "kueue.x-k8s.io/provisioning-request",
                                "parameters": {"apiGroup": "kueue.x-k8s.io",
                                               "kind": "ProvisioningRequestConfig",
                                               "name": "gpus"}}},
    "ProvisioningRequestConfig": {"spec": {
        "provisioningClassName": "check-capacity.autoscaling.x-k8s.io",
        "managedResources": ["nvidia.com/gpu"],
        "retryStrategy": {"backoffLimitCount": 2, "backoffBaseSeconds": 60,
                          "backoffMaxSeconds": 1800}}},
}


def test_each_kind_has_one_crd_file() -> None:
    kinds = {yaml.safe_load(p.read_text())["spec"]["names"]["kind"] for p in CRD_DIR.glob("*.yaml")}
    assert kinds == set(BERTH_KINDS)


@pytest.mark.parametrize("kind", sorted(BERTH_KINDS), ids=lambda k: f"{k} is served and parses")
def test_crd_is_served_and_its_objects_parse(with_crds: FakeKubectl, kind: str) -> None:
    ref = BERTH_KINDS[kind]
    example = EXAMPLES[kind]
    namespace = example.get("metadata", {}).get("namespace")
    base = f"/apis/{ref.api_version}" + (f"/namespaces/{namespace}" if namespace else "")
    if namespace:
        with_crds.namespace(namespace)
    body = {**example, "metadata": {**example.get("metadata", {}), "name": "example"}}
    created = with_crds.create(f"{base}/{ref.plural}", body)
    assert created["kind"] == kind
    (parsed,) = parse_objects([("kubernetes", 0, manifest_document(created))])
    assert parsed.kind == kind and parsed.obj.name == "example"
    status = with_crds.patch(f"{base}/{ref.plural}/example/status", {"status": {"conditions": []}})
    assert status["status"] == {"conditions": []}


def test_crd_files_have_schemas_and_status() -> None:
    for path in CRD_DIR.glob("*.yaml"):
        (version,) = yaml.safe_load(path.read_text())["spec"]["versions"]
        schema = version["schema"]["openAPIV3Schema"]
        assert version["subresources"] == {"status": {}}, path.name
        assert "status" in schema["properties"], path.name
