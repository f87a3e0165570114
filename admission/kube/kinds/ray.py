"""ray.io/v1 RayJob and RayCluster: ``head`` plus a pod set per worker group,
``spec.suspend``.

A RayJob is over when ``status.jobDeploymentStatus`` is Complete or Failed; it succeeded
only if ``status.jobStatus`` is SUCCEEDED (as Kueue reads it). A RayCluster runs until it
is deleted, so it never finishes by itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from admission.kube.client import ResourceRef
from admission.kube.kinds.adapter import COMPLETE, FAILED, Adapter


def ray_job_finished(obj: Mapping[str, Any]) -> str | None:
    status = obj.get("status") or {}
    if status.get("jobDeploymentStatus") not in ("Complete", "Failed"):
        return None
    return COMPLETE if status.get("jobStatus") == "SUCCEEDED" else FAILED


def never_finished(obj: Mapping[str, Any]) -> str | None:
    return None


RAYJOB = Adapter(
    ResourceRef("ray.io", "v1", "rayjobs", "RayJob", namespaced=True),
    suspend_path=("spec", "suspend"),
    finished=ray_job_finished,
)
RAYCLUSTER = Adapter(
    ResourceRef("ray.io", "v1", "rayclusters", "RayCluster", namespaced=True),
    suspend_path=("spec", "suspend"),
    finished=never_finished,
)
