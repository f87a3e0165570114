"""Kubeflow training jobs: a pod set per replica type, ``spec.runPolicy.suspend``,
conditions Succeeded / Failed. kubeflow.org/v1 PyTorchJob, TFJob, XGBoostJob, PaddleJob,
JAXJob, and kubeflow.org/v2beta1 MPIJob share the shape."""

from __future__ import annotations

from admission.kube.client import ResourceRef
from admission.kube.kinds.adapter import Adapter, conditions_finished

_SUSPEND = ("spec", "runPolicy", "suspend")
_FINISHED = conditions_finished("Succeeded", "Failed")
# The training operator (and the MPI operator) label every pod with its job's name.
JOB_NAME_LABEL = "training.kubeflow.org/job-name"


def _kubeflow(version: str, plural: str, kind: str) -> Adapter:
    ref = ResourceRef("kubeflow.org", version, plural, kind, namespaced=True)
    return Adapter(ref, suspend_path=_SUSPEND, finished=_FINISHED, pod_labels=(JOB_NAME_LABEL,))


PYTORCHJOB = _kubeflow("v1", "pytorchjobs", "PyTorchJob")
TFJOB = _kubeflow("v1", "tfjobs", "TFJob")
XGBOOSTJOB = _kubeflow("v1", "xgboostjobs", "XGBoostJob")
PADDLEJOB = _kubeflow("v1", "paddlejobs", "PaddleJob")
JAXJOB = _kubeflow("v1", "jaxjobs", "JAXJob")
MPIJOB = _kubeflow("v2beta1", "mpijobs", "MPIJob")

KUBEFLOW = (PYTORCHJOB, TFJOB, XGBOOSTJOB, PADDLEJOB, JAXJOB, MPIJOB)
