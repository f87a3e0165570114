"""Standalone submission and completion of workloads (and the Kubernetes side's, too).

``submit_workload`` records a Job or Workload manifest as a pending workload with its first
verdict (``PendingEvaluation``) and timeline row; ``finish_workload`` releases what it
held. Both run in the caller's transaction; the ledger's triggers wake the loop on commit.
A manifest with ``metadata.generateName`` and no name gets one as the API server gives it:
the prefix and five random characters.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from admission.engine.stored_form import primary_of, verdict_of
from admission.engine.types import PendingStatus
from quota.core.cycle_writes import NO_VERDICT
from quota.core.errors import Conflict, NotFound
from quota.core.metering import IntervalEnd
from quota.core.model import PriorityClass
from quota.core.workload import Workload, WorkloadState
from quota.ledger import lifecycle
from quota.ledger.repository import Ledger
from quota.ledger.workloads import add_pending
from quota.manifests.jobs import parse_workload

_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"  # the API server's: no vowels, no look-alikes


def named(doc: object) -> object:
    """``doc`` with ``metadata.name`` made from ``metadata.generateName`` when only that is
    given (as ``kubectl create`` of Kueue's examples gets); any other document as it is."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("metadata"), Mapping):
        return doc
    metadata = doc["metadata"]
    prefix = metadata.get("generateName")
    if metadata.get("name") or not isinstance(prefix, str) or not prefix:
        return doc
    suffix = "".join(secrets.choice(_SUFFIX) for _ in range(5))
    return {**doc, "metadata": {**metadata, "name": prefix + suffix}}


def submit_workload(ledger: Ledger, doc: object, *, now: datetime, actor: str) -> Workload:
    """Record a batch/v1 Job or Kueue Workload manifest as a new pending workload.

    ``InvalidInput`` names the field; ``Conflict`` when an unfinished workload has the name.
    """
    classes = {
        o.name: o for o in ledger.list("WorkloadPriorityClass") if isinstance(o, PriorityClass)
    }
    workload = parse_workload(
        named(doc), source="request", document=0, created_at=now, priority_classes=classes
    )
    if not workload.active:
        workload = replace(workload, state=WorkloadState.DEACTIVATED)
    existing = ledger.get_workload(workload.namespace, workload.name)
    if existing is not None and existing.state is not WorkloadState.FINISHED:
        raise Conflict(
            f"Workload {workload.key} already exists and is {existing.state}; finish it "
            "before submitting another with that name",
            field="metadata.name",
        )
    workload_id = ledger.add_workload(workload, actor=actor)
    first = primary_of(NO_VERDICT, workload.key)
    status = PendingStatus(workload.key, None, (first,))
    lifecycle.set_first_verdict(
        ledger.session, workload_id, verdict_of(status), first.to_dict(), now
    )
    return workload


def submit_workloads(
    ledger: Ledger, docs: Sequence[tuple[object, datetime]], *, actor: str
) -> list[Workload]:
    """``submit_workload`` for many (manifest, created at) at once, all or none: one
    transaction's few statements instead of a handful of round trips each."""
    classes = {
        o.name: o for o in ledger.list("WorkloadPriorityClass") if isinstance(o, PriorityClass)
    }
    entries = []
    for document, (doc, created) in enumerate(docs):
        workload = parse_workload(
            named(doc), source="request", document=document, created_at=created,
            priority_classes=classes,
        )  # fmt: skip
        if not workload.active:
            workload = replace(workload, state=WorkloadState.DEACTIVATED)
        first = primary_of(NO_VERDICT, workload.key)
        verdict = verdict_of(PendingStatus(workload.key, None, (first,)))
        entries.append((workload, verdict, first.to_dict()))
    add_pending(ledger.session, entries, actor=actor)
    return [workload for workload, _, _ in entries]


def finish_workload(
    ledger: Ledger,
    namespace: str,
    name: str,
    *,
    now: datetime,
    actor: str,
    end: IntervalEnd = IntervalEnd.FINISHED,
) -> Workload:
    """Mark the workload finished: quota released, timeline closed, usage ended as ``end``
    (Finished, Failed, Deleted). Idempotent; ``NotFound`` when no workload has that name."""
    finished = lifecycle.finish(ledger.session, namespace, name, now=now, actor=actor, end=end)
    if finished is None:
        raise NotFound(f"Workload {namespace}/{name} not found", field="name")
    return finished
