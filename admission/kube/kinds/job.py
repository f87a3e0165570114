"""batch/v1 Job: one pod set ``main``, ``spec.suspend``, conditions Complete / Failed."""

from __future__ import annotations

from admission.kube.client import JOBS
from admission.kube.kinds.adapter import Adapter, conditions_finished

JOB = Adapter(
    JOBS,
    suspend_path=("spec", "suspend"),
    finished=conditions_finished("Complete", "Failed"),
    clears_start_time=True,
)
