"""Standalone: ``POST /api/v1/workloads`` takes every kind the Kubernetes adapters queue,
with the pod sets they read."""

from __future__ import annotations

import httpx
import pytest
from builders import frameworks
from builders.reads import pool

from admission.kube.kinds.adapter import Adapter
from admission.kube.kinds.registry import ADAPTERS


@pytest.mark.parametrize("adapter", [pytest.param(a, id=a.kind) for a in ADAPTERS])
def test_a_framework_object_is_submitted_as_a_workload(api: httpx.Client, adapter: Adapter) -> None:
    assert api.post("/api/v1/apply", content=pool(("team-a", 16))).status_code == 200
    doc = frameworks.workload(adapter, "train")
    doc["metadata"]["namespace"] = "team-a"
    answer = api.post("/api/v1/workloads", json=doc)
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert body["kind"] == adapter.kind
    wanted = [shape.name for shape in adapter.pod_sets(doc)]
    assert [p["name"] for p in body["podSets"]] == wanted
