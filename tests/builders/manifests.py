"""Workload manifests as users write them: ``job``, the one batch/v1 Job builder."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GPU = "nvidia.com/gpu"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
RUNTIME = "berth.dev/runtime"


def job(
    name: str = "train",
    gpus: int = 1,
    *,
    namespace: str | None = "team-a",
    queue: str | None = "main",
    priority: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    runtime: str | None = None,
    pods: int | None = None,
    suspend: bool | None = None,
    spec: Mapping[str, Any] | None = None,
    **pod: Any,
) -> dict[str, Any]:
    """A batch/v1 Job whose pods run one container asking for ``gpus`` GPUs (as a limit).

    ``None`` leaves a field out: ``namespace`` (the API server's or ``default``), ``queue``
    (no queue label: not Berth's to admit), ``pods`` (``parallelism``), ``suspend``.
    ``runtime`` is the ``berth.dev/runtime`` a simulated Job runs for; ``labels`` and
    ``annotations`` are added to what the other arguments set; ``spec``: more Job spec
    fields (``completions``); ``pod``: more pod spec fields (``nodeSelector``,
    ``tolerations``), or ``containers`` instead of the GPU one.
    """
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    metadata["labels"] = {
        **({QUEUE_LABEL: queue} if queue is not None else {}),
        **({PRIORITY_LABEL: priority} if priority is not None else {}),
        **(labels or {}),
    }
    notes = {**(annotations or {}), **({RUNTIME: runtime} if runtime is not None else {})}
    if notes:
        metadata["annotations"] = notes
    container = {"name": "main", "image": "trainer", "resources": {"limits": {GPU: str(gpus)}}}
    job_spec: dict[str, Any] = {}
    if suspend is not None:
        job_spec["suspend"] = suspend
    if pods is not None:
        job_spec["parallelism"] = pods
    job_spec["template"] = {"spec": {"containers": [container], **pod}}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata,
        "spec": {**job_spec, **(spec or {})},
    }
