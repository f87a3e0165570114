"""EDGE (dicts only): one workload adapter per Kubernetes kind, each a table entry.

An adapter says which API resource a kind is, where it is suspended, how its controller
reports the end, and whether the API server guards its start time; its pod sets (names,
counts, template paths) come from ``quota.manifests.frameworks``, the one owner of that
mapping. ``admission.kube.templates`` steers and restores every pod template it lists.

- ``adapter``: the ``Adapter`` value and the condition reader the frameworks share.
- ``job``: batch/v1 Job.
- ``jobset``: jobset.x-k8s.io JobSet.
- ``kubeflow``: kubeflow.org PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob.
- ``ray``: ray.io RayJob and RayCluster.
- ``pod``: v1 Pods and pod groups, held back by a scheduling gate.
- ``registry``: every adapter, found by kind, by object or by API resource.
"""
