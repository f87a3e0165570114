"""A workload reclaimed again and again: a borrower in ClusterQueue ``spare`` (no quota of
its own) runs on ``owner``'s 4 GPUs; each preemptor submitted to ``owner`` reclaims them,
runs 10 minutes and finishes, and the borrower runs again. ``team-a`` and ``rival`` both
have LocalQueues of both ClusterQueues, so a tenant sees one of the preemptors hidden."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import httpx

from api.auth import parse_tokens
from builders.reads import World, serve

# An admin, and a tenant of team-a (who must not see rival's names).
TOKENS = parse_tokens("root-secret-token-1:admin,tenant-secret-token-3:read:team-a")

GPU = "nvidia.com/gpu"
BORROWER = ("team-a", "borrower")
# (preemptor's namespace, name): team-a reclaims twice, rival once in between.
PREEMPTORS = (("team-a", "boss-1"), ("rival", "boss-2"), ("team-a", "boss-3"))


def objects() -> str:
    def cq(name: str, gpus: int, extra: str) -> str:
        return (
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
            f"spec:\n  cohort: all\n{extra}  namespaceSelector: {{}}\n  resourceGroups:\n"
            f"    - coveredResources: [{GPU}]\n      flavors:\n        - name: h100\n"
            f"          resources:\n            - {{name: {GPU}, nominalQuota: {gpus}}}\n"
        )

    docs = [
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: h100}\n",
        cq("spare", 0, ""),  # owns nothing: whatever runs here borrows
        cq("owner", 4, "  preemption: {reclaimWithinCohort: Any}\n"),
    ]
    for namespace in ("team-a", "rival"):
        docs.append(f"apiVersion: v1\nkind: Namespace\nmetadata: {{name: {namespace}}}\n")
        for queue in ("spare", "owner"):
            docs.append(
                "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                f"metadata: {{name: {queue}, namespace: {namespace}}}\n"
                f"spec: {{clusterQueue: {queue}}}\n"
            )
    return "---\n".join(docs)


def reclaim_thrice(w: World) -> None:
    """Apply the objects, run the borrower, and reclaim it once per ``PREEMPTORS``: each
    reclaim evicts it at t, it is evaluated WaitingForQuota at the next cycle (t+30s) and
    readmitted when its preemptor finishes (t+11m30s)."""
    w.apply(objects())
    w.submit(BORROWER[1], 4, BORROWER[0], queue="spare")
    w.cycle()
    for namespace, name in PREEMPTORS:
        w.advance(minutes=20)
        w.submit(name, 4, namespace, queue="owner")
        for _ in range(3):  # evict; admit the preemptor
            w.cycle()
            w.advance(seconds=30)
        w.advance(minutes=10)
        w.finish(namespace, name)
        w.cycle()  # the borrower runs again


@contextlib.contextmanager
def served_reclaims(pg_server: Any, template: str) -> Iterator[httpx.Client]:
    """A fresh ledger where ``reclaim_thrice`` ran, served with ``TOKENS``; dropped after."""
    url = pg_server.create(template=template)
    w = World(url)
    try:
        reclaim_thrice(w)
        with serve(url, TOKENS) as client:
            yield client
    finally:
        w.close()
        pg_server.drop(url)
