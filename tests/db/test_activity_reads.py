"""The pending-age read on a real ledger: per ClusterQueue, how many wait, the oldest wait
and the 90th percentile, counted as the Prometheus oldest-pending gauge counts them."""

from __future__ import annotations

import pytest
from builders.reads import World

from quota.ledger.reads import activity, metrics

pytestmark = pytest.mark.db

OBJECTS = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: tiny}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: h100
          resources: [{name: nvidia.com/gpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team}
spec: {clusterQueue: tiny}
"""


def test_pending_ages_give_the_oldest_and_the_p90_of_the_waits(db_url: str) -> None:
    w = World(db_url)
    try:
        w.apply(OBJECTS)
        # Ten workloads a minute apart, none of which fits: waits D+540s, D+480s ... D.
        for i in range(10):
            w.submit(f"big-{i}", 2, "team", queue="main")
            w.advance(minutes=1)
        w.cycle()
        with w.sessions() as session:
            [ages] = activity.pending_ages(session)
            oldest = max(o.age_seconds for o in metrics.oldest_pending(session))
    finally:
        w.close()
    assert (ages.cluster_queue, ages.pending) == ("tiny", 10)
    assert ages.oldest_seconds == pytest.approx(oldest)  # one transaction: the same now()
    # percentile_cont(0.9) of ten waits spaced 60s: 0.9 × 9 × 60 = 486s above the youngest.
    assert ages.oldest_seconds - ages.p90_seconds == pytest.approx(54.0)
