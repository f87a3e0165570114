"""batch/v1 Job: one pod set ``main``, ``spec.suspend``, conditions Complete / Failed."""

from __future__ import annotations

from admission.kube.client import JOBS
from admission.kube.kinds.adapter import Adapter, conditions_finished

# The Job controller labels every pod it creates with its Job's name (both spellings).
JOB_LABEL = "job-name"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"

JOB = Adapter(
    JOBS,
    suspend_path=("spec", "suspend"),
    finished=conditions_finished("Complete", "Failed"),
    clears_start_time=True,
    pod_labels=(JOB_NAME_LABEL, JOB_LABEL),
)
