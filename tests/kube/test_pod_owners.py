"""Whose a pod is, as each kind's adapter reads the labels and ownerReferences its
controller puts on the pods it makes (what the Pod watcher counts, places and fails)."""

from __future__ import annotations

from typing import Any

import pytest

from admission.kube.kinds.kubeflow import KUBEFLOW
from admission.kube.kinds.ray import RAYJOB
from admission.kube.kinds.registry import PodClaim, pod_claim
from admission.kube.pods import PodWatcher


def pod(labels: dict[str, str] | None = None, owner: tuple[str, str, str] | None = None,
        name: str = "p-0") -> dict[str, Any]:  # fmt: skip
    meta: dict[str, Any] = {"name": name, "namespace": "team-a", "labels": labels or {}}
    if owner is not None:
        api, kind, of = owner
        meta["ownerReferences"] = [
            {"apiVersion": api, "kind": kind, "name": of, "controller": True}
        ]
    return {"metadata": meta}


KUBEFLOW_KINDS = frozenset(a.kind for a in KUBEFLOW)


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(pod({"batch.kubernetes.io/job-name": "train", "job-name": "train"}),
                     PodClaim("train", frozenset({"Job"})), id="a Job's pod by its labels"),
        pytest.param(pod(owner=("batch/v1", "Job", "train")),
                     PodClaim("train", frozenset({"Job"})), id="a Job's pod by its owner"),
        pytest.param(pod({"jobset.sigs.k8s.io/jobset-name": "big", "job-name": "big-a-0"},
                         owner=("batch/v1", "Job", "big-a-0")),
                     PodClaim("big", frozenset({"JobSet"})),
                     id="a JobSet's Job's pod is the JobSet's"),
        pytest.param(pod({"training.kubeflow.org/job-name": "tf",
                          "training.kubeflow.org/replica-type": "worker"}),
                     PodClaim("tf", KUBEFLOW_KINDS),
                     id="a Kubeflow job's pod (the label names no kind)"),
        pytest.param(pod({"training.kubeflow.org/job-name": "mpi"},
                         owner=("kubeflow.org/v2beta1", "MPIJob", "mpi")),
                     PodClaim("mpi", KUBEFLOW_KINDS), id="an MPIJob's pod"),
        pytest.param(pod({"ray.io/cluster": "rc", "ray.io/node-type": "worker"}),
                     PodClaim("rc", frozenset({"RayCluster"})), id="a RayCluster's pod"),
        pytest.param(pod({"kueue.x-k8s.io/pod-group-name": "g",
                          "kueue.x-k8s.io/queue-name": "main"}),
                     PodClaim("g", frozenset({"Pod"})), id="a pod group's pod"),
        pytest.param(pod({"kueue.x-k8s.io/queue-name": "main"}, name="solo"),
                     PodClaim("solo", frozenset({"Pod"})), id="a lone queued Pod is its own"),
        pytest.param(pod({"app": "web"}), None, id="a pod of nothing Berth queues"),
    ],
)  # fmt: skip
def test_whose_pod_it_is(obj: dict[str, Any], expected: PodClaim | None) -> None:
    assert pod_claim(obj) == expected


def test_a_rayjobs_pods_are_those_of_the_cluster_it_reports() -> None:
    watcher = PodWatcher(lambda: None, lambda: None, exit_codes=set())
    worker = pod({"ray.io/cluster": "train-x7k2p"})
    assert watcher.claim(worker) == PodClaim("train-x7k2p", frozenset({"RayCluster"}))
    ray_job = {"metadata": {"name": "train", "namespace": "team-a"},
               "status": {"rayClusterName": "train-x7k2p"}}  # fmt: skip
    watcher.note_children(RAYJOB, "MODIFIED", ray_job)
    assert watcher.claim(worker) == PodClaim("train", frozenset({"RayJob"}))
    submitter = pod({"job-name": "train"}, owner=("batch/v1", "Job", "train"))
    assert watcher.claim(submitter) == PodClaim("train", frozenset({"Job"}))  # no pod set
    watcher.note_children(RAYJOB, "DELETED", ray_job)
    assert watcher.claim(worker) == PodClaim("train-x7k2p", frozenset({"RayCluster"}))
