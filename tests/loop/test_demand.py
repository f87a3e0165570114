"""The autoscaler's signal: ``GET /api/v1/demand`` and the ``berth_capacity_demand`` /
``berth_quota_blocked_demand`` gauges keep work more nodes would start apart from work
they would not."""

from __future__ import annotations

import asyncio

import httpx
from builders.loop import Ledgered
from builders.manifests import job

from admission.loop.loop import AdmissionLoop

# Flavor gpu has one node of 4 GPUs; team-a may use 8 of them, team-b 2.
POOL = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: gpu}
spec: {nodeLabels: {pool: gpu}}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {pool: gpu}}
status: {capacity: {nvidia.com/gpu: "4"}, allocatable: {nvidia.com/gpu: "4"}}
""" + "".join(f"""---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: {team}}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{{name: gpu, resources: [{{name: nvidia.com/gpu, nominalQuota: {gpus}}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: main, namespace: {team}}}
spec: {{clusterQueue: {team}}}
""" for team, gpus in (("team-a", 8), ("team-b", 2)))


async def test_capacity_demand_is_kept_apart_from_quota_blocked_demand(
    ledgered: Ledgered, loop: AdmissionLoop, api: httpx.Client
) -> None:
    ledgered.apply(POOL)
    ledgered.submit(job("running", 4))  # fills the node
    ledgered.submit(job("needs-nodes", 4))  # team-a's quota admits it; no node can hold it
    ledgered.submit(job("over-quota", 4, namespace="team-b"))  # team-b may use only 2
    await loop.begin()
    await loop.cycle()
    await loop.cycle()

    found = (await asyncio.to_thread(api.get, "/api/v1/demand")).json()

    assert found["capacity"] == [{"flavor": "gpu", "resource": "nvidia.com/gpu", "level": None,
                                  "amount": "4", "workloads": 1,
                                  "reasons": {"InsufficientCapacity": 1}}]
    assert found["quotaBlocked"] == [{"flavor": "gpu", "resource": "nvidia.com/gpu",
                                      "level": None, "amount": "4", "workloads": 1,
                                      "reasons": {"ExceedsMaxQuota": 1}}]
    metrics = (await asyncio.to_thread(api.get, "/metrics")).text
    assert 'berth_capacity_demand{flavor="gpu",level="",resource="nvidia.com/gpu"} 4.0' in metrics
    assert ('berth_quota_blocked_demand{flavor="gpu",level="",resource="nvidia.com/gpu"} 4.0'
            in metrics)
