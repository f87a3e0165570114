"""The demo's first minute, scripted: every situation the README promises, on fixed names.

A random stream shows common situations sooner or later; a script shows each of them within
a minute, whatever the seed, and lets the README name real workloads. On the demo pool
(``pool``), in order:

- 0s: ``llm`` fills its 24 H100s and borrows 8 more from ``inference`` (``llm/pretrain-4``);
  ``vision`` fills its 16 A100s and borrows ``llm``'s idle 8 (``vision/detr-finetune``),
  then its StrictFIFO head ``vision/segformer`` waits for quota and
  ``vision/vit-eval`` waits behind it; jobs that can never run: more GPUs than the quota
  (``llm/giant-64``), one pod larger than any node (``llm/single-pod-24``), a resource no
  flavor offers (``interns/mig-3g``), a queue that does not exist (``interns/playground``).
- 15s: ``llm/finetune-a100`` reclaims ``llm``'s A100s from ``vision``.
- 30s: ``llm/pretrain-prod`` (production) preempts ``llm/pretrain-1`` (it saved a
  checkpoint at 25s: the least work lost), which has a checkpoint grace: it keeps
  running while it saves again, the preemptor waits for it.
- 38s: ``llm/pretrain-1`` reports its checkpoint; it stops and requeues.
- 45s: ``inference/serve-llama`` takes back the H100s ``inference`` lent from
  ``llm/pretrain-2`` (checkpointed at 42s), which reports again at 52s and requeues.

The pool's node ``h100-3`` is degraded from the start (2 of its 8 GPUs bad).
"""

from __future__ import annotations

from typing import Any

from admission.simulate.scenario import RUNTIME_ANNOTATION
from berth.demo.pool import GPU, MIG
from quota.core.checkpoints import CHECKPOINT_GRACE

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
# The local queue of each demo namespace (pool.QUEUES); "playground" exists nowhere.
LOCAL_QUEUE = {"llm": "main", "inference": "serve", "vision": "main", "interns": "main"}

# How long an opening job runs: long enough that the first minute's picture stays put.
_LONG = 150


def job(namespace: str, name: str, resource: str, size: int, *, priority: str = "research",
        runtime: int, pods: int = 1, grace: str | None = None,
        queue: str | None = None) -> dict[str, Any]:
    """A batch/v1 Job of ``pods`` pods, each asking ``size`` of ``resource``, that finishes
    ``runtime`` seconds after it is admitted (``grace``: its checkpoint grace)."""
    annotations = {RUNTIME_ANNOTATION: f"{runtime}s"}
    if grace is not None:
        annotations[CHECKPOINT_GRACE] = grace
    spec: dict[str, Any] = {"template": {"spec": {"containers": [
        {"name": "main", "image": "demo/trainer",
         "resources": {"requests": {resource: str(size)}, "limits": {resource: str(size)}}}
    ]}}}
    if pods > 1:
        spec = {"parallelism": pods, "completions": pods, **spec}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {QUEUE_LABEL: queue or LOCAL_QUEUE[namespace], PRIORITY_LABEL: priority},
            "annotations": annotations,
        },
        "spec": spec,
    }


def _pretrain(index: int) -> dict[str, Any]:
    return job("llm", f"pretrain-{index}", GPU, 8, runtime=_LONG + 10 * index, grace="20s")


# (seconds after the start, a Job) in arrival order
OPENING_JOBS: tuple[tuple[float, dict[str, Any]], ...] = (
    *((0.0, _pretrain(i)) for i in range(1, 5)),
    (0.0, job("inference", "chat-small", GPU, 2, priority="production", runtime=_LONG)),
    (0.0, job("inference", "embed-mig", MIG, 2, priority="production", runtime=_LONG)),
    (0.0, job("vision", "resnet-sweep-1", GPU, 8, runtime=_LONG)),
    (0.0, job("vision", "resnet-sweep-2", GPU, 8, runtime=_LONG)),
    (0.0, job("vision", "detr-finetune", GPU, 8, runtime=_LONG)),
    (0.0, job("vision", "segformer", GPU, 8, runtime=120)),
    (0.0, job("vision", "vit-eval", GPU, 2, runtime=60)),
    (0.0, job("interns", "notebook", GPU, 2, runtime=_LONG)),
    (0.0, job("llm", "giant-64", GPU, 64, runtime=60)),
    (0.0, job("llm", "single-pod-24", GPU, 24, runtime=60)),
    (0.0, job("interns", "mig-3g", "nvidia.com/mig-3g.40gb", 1, runtime=30)),
    (0.0, job("interns", "playground", GPU, 1, runtime=30, queue="playground")),
    (15.0, job("llm", "finetune-a100", GPU, 8, runtime=_LONG)),
    (30.0, job("llm", "pretrain-prod", GPU, 8, priority="production", runtime=_LONG)),
    (45.0, job("inference", "serve-llama", GPU, 8, priority="production", runtime=_LONG)),
)

# (seconds after the start, namespace/name): workloads that report a saved checkpoint. The
# victims are chosen by the least work lost (unsaved time x GPUs), so a checkpoint just
# before each preemption makes its victim the same every run, whatever order the live
# loop admitted the pretraining jobs in; the second report releases it.
OPENING_CHECKPOINTS: tuple[tuple[float, str], ...] = (
    (25.0, "llm/pretrain-1"),
    (38.0, "llm/pretrain-1"),
    (42.0, "llm/pretrain-2"),
    (52.0, "llm/pretrain-2"),
)

# Where the random stream takes over.
OPENING_SECONDS = 60.0
