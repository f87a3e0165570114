"""EDGE: Berth in a Kubernetes cluster: watch workload objects (Jobs, JobSets, Kubeflow and
Ray jobs), CRDs and Nodes, suspend and resume the workloads. Only ``client``,
``runtime`` and ``kubeconfig`` import kubernetes_asyncio; the rest works on dicts.

In reading order:

- ``mode``: whether ``berth serve`` runs in Kubernetes mode (without importing the client).
- ``client``, ``errors``: the one door to the API server, and its errors as Berth's.
- ``informer``: list, then watch one resource for ever.
- ``kinds`` (package): one adapter per workload kind, a table entry each.
- ``jobs``, ``pods``, ``mirror``, ``reclaim``: the watchers (``jobs``: one per workload
  kind); they call ``admission.intake``.
- ``readiness``: how many of a workload's pods are Ready (waitForPodsReady), recorded by
  the Pod watcher.
- ``pod_groups``: plain Pods gathered into groups, and what admission and eviction do to
  their pods.
- ``templates`` (PURE), ``actuator``: what Berth changes on a workload object, and the
  loop's actuation port carried out on them.
- ``webhook`` (PURE): the mutating webhook's decision.
- ``events``, ``status``: Events and CRD status written back.
- ``provisioning``: the built-in ``kueue.x-k8s.io/provisioning-request`` admission check:
  ProvisioningRequests and PodTemplates for quota reservations, their conditions as check
  states.
- ``taints``: Berth's taint on the Nodes it takes out of the pool, following their health.
- ``lease``, ``failure_log``: leadership by a coordination.k8s.io Lease; its failures logged
  once per cause per minute.
- ``front_proxy``, ``access_review``: the aggregated visibility API's authentication (the
  cluster's front-proxy settings, who a request is from) and delegated authorization
  (SubjectAccessReview).
- ``runtime``: Kubernetes mode put together for ``berth serve``.
- ``kubeconfig``: a user's kubeconfig read as kubectl reads it (for ``kubectl berth``).
"""
