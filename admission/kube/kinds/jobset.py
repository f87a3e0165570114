"""jobset.x-k8s.io/v1alpha2 JobSet: a pod set per replicatedJob, ``spec.suspend``
(the JobSet controller suspends its child Jobs), conditions Completed / Failed."""

from __future__ import annotations

from admission.kube.client import ResourceRef
from admission.kube.kinds.adapter import Adapter, conditions_finished

JOBSETS = ResourceRef("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", namespaced=True)

# The JobSet controller labels its Jobs, and so their pods, with the JobSet's name.
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"

JOBSET = Adapter(
    JOBSETS,
    suspend_path=("spec", "suspend"),
    finished=conditions_finished("Completed", "Failed"),
    pod_labels=(JOBSET_NAME_LABEL,),
)
