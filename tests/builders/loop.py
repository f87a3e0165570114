"""Builders for loop tests: quota manifests and ledger reads in plain SQL (Job manifests:
``builders.manifests.job``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from admission.intake.workloads import finish_workload, submit_workload
from admission.loop.actuation import Actuation
from admission.loop.loop import AdmissionLoop
from builders.manifests import GPU
from quota.core.workload import Workload
from quota.ledger.apply import apply_objects
from quota.ledger.readiness import record_readiness
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts


def pool(*queues: tuple[str, int], cohort: str | None = None, preempt: bool = False) -> str:
    """One flavor ``gpu``; a ClusterQueue per (name, GPUs) with a LocalQueue ``main`` in the
    namespace of the same name."""
    docs = [
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: gpu}\n",
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\n"
        "metadata: {name: high}\nvalue: 1000\n",
    ]
    for name, gpus in queues:
        extra = f"  cohort: {cohort}\n" if cohort else ""
        if preempt:
            extra += "  preemption: {withinClusterQueue: LowerPriority, reclaimWithinCohort: Any}\n"
        docs.append(
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {{name: {name}}}\n"
            f"spec:\n{extra}  namespaceSelector: {{}}\n  resourceGroups:\n"
            f"    - coveredResources: [{GPU}]\n      flavors:\n        - name: gpu\n"
            f"          resources:\n            - {{name: {GPU}, nominalQuota: {gpus}}}\n"
        )
        docs.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
            f"metadata: {{name: main, namespace: {name}}}\nspec: {{clusterQueue: {name}}}\n"
        )
    return "---\n".join(docs)


@dataclass
class Ledgered:
    """A test database: its URL and a transaction-per-call session scope."""

    url: str
    sessions: Callable[[], AbstractContextManager[Session]]

    def apply(self, text: str) -> None:
        with self.sessions() as session:
            apply_objects(Ledger(session), parse_texts([("test", text)]), actor="test")

    def submit(self, doc: dict[str, Any]) -> Workload:
        with self.sessions() as session:
            return submit_workload(Ledger(session), doc, now=datetime.now(UTC), actor="test")

    def feed_step(self, creates: Iterable[dict[str, Any]], pods_ready: Iterable[str],
                  now: datetime) -> None:
        """A scenario step's events into the ledger, as ``berth simulate`` takes them: each
        created workload a microsecond after the one before, then the pods reported Ready."""
        with self.sessions() as session:
            for index, doc in enumerate(creates):
                submit_workload(Ledger(session), doc, now=now + timedelta(microseconds=index),
                                actor="test")
            for key in pods_ready:
                namespace, name = key.split("/")
                record_readiness(session, namespace, name, ready=True, now=now)

    def finish(self, namespace: str, name: str) -> Workload:
        with self.sessions() as session:
            return finish_workload(
                Ledger(session), namespace, name, now=datetime.now(UTC), actor="test"
            )

    def rows(self, query: str, **params: Any) -> list[dict[str, Any]]:
        with self.sessions() as session:
            return [dict(r) for r in session.execute(sa.text(query), params).mappings()]

    def workload(self, name: str) -> dict[str, Any]:
        found = self.rows(
            "SELECT * FROM workloads WHERE name = :name AND state <> 'Finished'", name=name
        ) or self.rows(
            "SELECT * FROM workloads WHERE name = :name ORDER BY id DESC LIMIT 1", name=name
        )
        return found[0]

    def timeline(self, name: str) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT r.code, r.until FROM wait_reasons r JOIN workloads w ON w.id = r.workload_id "
            "WHERE w.name = :name ORDER BY r.id",
            name=name,
        )

    def events(self, name: str) -> list[str]:
        return [
            r["type"]
            for r in self.rows(
                "SELECT e.type FROM workload_events e JOIN workloads w ON w.id = e.workload_id "
                "WHERE w.name = :name ORDER BY e.id",
                name=name,
            )
        ]

    def usage(self, name: str) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT u.amount, u.ended_at FROM usage_intervals u JOIN workloads w "
            "ON w.id = u.workload_id WHERE w.name = :name ORDER BY u.id",
            name=name,
        )

    def execute(self, query: str, **params: Any) -> None:
        with self.sessions() as session:
            session.execute(sa.text(query), params)


class RecordingActuator:
    """The edge, recorded: every batch the loop hands over, in order."""

    def __init__(self) -> None:
        self.batches: list[list[Actuation]] = []

    async def actuate(self, actions: Sequence[Actuation]) -> None:
        self.batches.append(list(actions))

    @property
    def actions(self) -> list[Actuation]:
        return [a for batch in self.batches for a in batch]

    def clear(self) -> None:
        self.batches.clear()


async def settle(loop: AdmissionLoop) -> None:
    """Cycles at the current instant until one neither admits, evicts nor requeues."""
    for _ in range(20):
        summary = await loop.cycle()
        if not summary.retried and not (summary.admitted or summary.evicted or summary.requeued):
            return
    raise AssertionError("the loop did not settle")
