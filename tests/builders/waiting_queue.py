"""A queue with one workload running and two waiting for its quota, seeded over REST: what
the CLI tests of ``berth why``/``top``/``get`` and ``kubectl berth`` read."""

from __future__ import annotations

import time

import httpx

from builders.manifests import job

GPU = "nvidia.com/gpu"
POOL = f"""\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {{name: h100}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: team-a}}
spec:
  namespaceSelector: {{}}
  resourceGroups:
    - coveredResources: [{GPU}]
      flavors: [{{name: h100, resources: [{{name: {GPU}, nominalQuota: 4}}]}}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {{name: main, namespace: team-a}}
spec: {{clusterQueue: team-a}}
"""


def seed_waiting_queue(http: httpx.Client) -> None:
    """ClusterQueue team-a (4 GPUs): ``runs`` (4) admitted, ``waits`` (2) and
    ``also-waits`` (1) pending for quota, once the admission loop has looked at them."""
    assert http.post("/api/v1/apply", content=POOL).status_code == 200
    # FIFO by submission time: each is answered before the next is sent, and creation
    # stamps have microseconds, so no pause is needed to order them.
    for name, gpus in (("runs", 4), ("waits", 2), ("also-waits", 1)):
        assert http.post("/api/v1/workloads", json=job(name, gpus)).status_code == 201
    deadline = time.monotonic() + 30
    while http.get("/api/v1/workloads/team-a/also-waits").json()["reason"] != "WaitingForQuota":
        assert time.monotonic() < deadline, "the admission loop did not evaluate the queue"
        time.sleep(0.1)
