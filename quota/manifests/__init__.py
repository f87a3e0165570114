"""PURE, text in: manifests to core values and back; every problem collected.

In reading order:

- ``limits``: bounds on untrusted text (nesting, aliases, NUL, annotation size) and the
  bounded YAML/JSON loaders every reader uses.
- ``reader``: typed reads of fields by path that collect problems instead of raising.
- ``shapes``: Kubernetes core shapes (taints, tolerations, selectors, affinity).
- ``kinds``: one reader per Kueue kind (ResourceFlavor, ClusterQueue, ...), Namespace, Node.
- ``checks``: AdmissionCheck, ProvisioningRequestConfig and a ClusterQueue's checks.
- ``frameworks``: each workload kind's pod sets (Job, JobSet, Kubeflow, Ray): names,
  counts, the paths of their templates.
- ``jobs``: workloads from Job, framework and Kueue Workload manifests.
- ``writer``: core values written back as manifests in Berth's own API group.
- ``documents``: multi-document texts to objects (``parse_texts``), and back.
"""
