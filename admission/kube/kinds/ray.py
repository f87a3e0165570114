"""ray.io/v1 RayJob and RayCluster: ``head`` plus a pod set per worker group,
``spec.suspend``.

The pods of a RayCluster carry its name (``ray.io/cluster``); a RayJob's pods are those of
the RayCluster it runs on, named in ``status.rayClusterName``.

A RayJob is over when ``status.jobDeploymentStatus`` is Complete or Failed; it succeeded
only if ``status.jobStatus`` is SUCCEEDED (as Kueue reads it). A RayCluster runs until it
is deleted, so it never finishes by itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from admission.kube.client import ResourceRef
from admission.kube.kinds.adapter import COMPLETE, FAILED, Adapter

# KubeRay labels every pod of a RayCluster with the cluster's name.
CLUSTER_LABEL = "ray.io/cluster"


def ray_job_finished(obj: Mapping[str, Any]) -> str | None:
    status = obj.get("status") or {}
    if status.get("jobDeploymentStatus") not in ("Complete", "Failed"):
        return None
    return COMPLETE if status.get("jobStatus") == "SUCCEEDED" else FAILED


def ray_cluster_of(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """The RayCluster a RayJob runs on, as KubeRay reports it."""
    name = (obj.get("status") or {}).get("rayClusterName")
    return (str(name),) if name else ()


def never_finished(obj: Mapping[str, Any]) -> str | None:
    return None


RAYJOB = Adapter(
    ResourceRef("ray.io", "v1", "rayjobs", "RayJob", namespaced=True),
    suspend_path=("spec", "suspend"),
    finished=ray_job_finished,
    children=ray_cluster_of,
)
RAYCLUSTER = Adapter(
    ResourceRef("ray.io", "v1", "rayclusters", "RayCluster", namespaced=True),
    suspend_path=("spec", "suspend"),
    finished=never_finished,
    pod_labels=(CLUSTER_LABEL,),
)
