"""jobset.x-k8s.io/v1alpha2 JobSet: a pod set per replicatedJob, ``spec.suspend``
(the JobSet controller suspends its child Jobs), conditions Completed / Failed."""

from __future__ import annotations

from admission.kube.client import ResourceRef
from admission.kube.kinds.adapter import Adapter, conditions_finished

JOBSETS = ResourceRef("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", namespaced=True)

JOBSET = Adapter(
    JOBSETS,
    suspend_path=("spec", "suspend"),
    finished=conditions_finished("Completed", "Failed"),
)
