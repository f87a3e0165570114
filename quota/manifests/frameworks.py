"""How each workload kind Berth understands maps to pod sets (PURE, edge of manifests).

One reader per kind, all returning ``Shape`` values: the pod set's name, its pod count, its
``minCount`` where the kind has one, and the path of its pod template inside the object.
``parse_workload`` reads requests from those templates; the Kubernetes adapters
(``admission.kube.kinds``) steer the same templates on admission, so the two can never
disagree on which template is which pod set. Counts follow Kueue's integrations:

- batch/v1 Job: one pod set ``main`` of min(parallelism, completions) pods.
- JobSet: one pod set per replicatedJob, replicas × min(parallelism, completions).
- Kubeflow (PyTorchJob, TFJob, XGBoostJob, PaddleJob, JAXJob, MPIJob): one pod set per
  replica type (named in lower case, in the framework's own order), ``replicas`` pods.
- RayJob, RayCluster: ``head`` (one pod) and one pod set per worker group, ``replicas``
  pods with ``minReplicas`` as the minimum count.
- v1 Pod (a pod group, ``admission.kube.pod_groups``): one pod set ``main`` of the group's
  total count (annotation, default 1: a labelled Pod alone is a group of one), each pod
  asking what the first one asks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from quota.manifests.reader import Field, Sink, dns_label

Path = tuple[str | int, ...]
_INT32_MAX = 2**31 - 1
MIN_PARALLELISM_ANNOTATION = "kueue.x-k8s.io/job-min-parallelism"
POD_GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
POD_GROUP_TOTAL_ANNOTATION = "kueue.x-k8s.io/pod-group-total-count"


class Shape(NamedTuple):
    """One pod set of a workload object: where its template is and how many pods."""

    name: str
    pods: int
    min_count: int | None
    path: Path  # from the object's root to the pod template (metadata + spec)
    template: Field
    # Where a partial admission (fewer pods than ``pods``, at least ``min_count``) writes
    # the admitted count: only pod sets with a minimum have one.
    count_path: Path | None = None


Reader = Callable[[Field, Mapping[str, str], Sink], list[Shape]]


def job_shapes(spec: Field, annotations: Mapping[str, str], sink: Sink) -> list[Shape]:
    count = _pods_of_job(spec)
    min_count = None
    raw = annotations.get(MIN_PARALLELISM_ANNOTATION)
    if raw is not None:
        where = Field(sink, f"metadata.annotations[{MIN_PARALLELISM_ANNOTATION}]", raw)
        if not raw.strip().isdigit():
            where.problem(f"must be a whole number of pods, got {raw!r}")
        elif not 1 <= int(raw) <= count:
            where.problem(f"must be between 1 and the Job's {count} pods, got {int(raw)}")
        else:
            min_count = int(raw)
    template = spec.obj("template", required=True)
    scaled: Path | None = ("spec", "parallelism") if min_count is not None else None
    return [Shape("main", count, min_count, ("spec", "template"), template, scaled)]


def jobset_shapes(spec: Field, annotations: Mapping[str, str], sink: Sink) -> list[Shape]:
    shapes: list[Shape] = []
    for index, item in enumerate(spec.items("replicatedJobs", non_empty=True)):
        item.mapping(required=True)
        name = item.string("name", required=True, check=dns_label) or f"job-{index}"
        _unique(item, name, shapes)
        replicas = item.integer("replicas", minimum=0, maximum=_INT32_MAX)
        job_spec = item.obj("template", required=True).obj("spec", required=True)
        count = (1 if replicas is None else replicas) * _pods_of_job(job_spec)
        template = job_spec.obj("template", required=True)
        path: Path = ("spec", "replicatedJobs", index, "template", "spec", "template")
        shapes.append(Shape(name, max(count, 1), None, path, template))
    return shapes


def replica_specs_reader(field: str, order: tuple[str, ...]) -> Reader:
    """Kubeflow's ``spec.<field>``: replica type → {replicas, template}, in ``order``."""

    def read(spec: Field, annotations: Mapping[str, str], sink: Sink) -> list[Shape]:
        specs = spec.obj(field, required=True)
        given = [str(key) for key in specs.value] if isinstance(specs.value, dict) else []
        if specs.present and isinstance(specs.value, dict) and not given:
            specs.problem("must name at least one replica type")
        ranked = sorted(given, key=lambda t: (order.index(t) if t in order else len(order), t))
        shapes: list[Shape] = []
        for replica_type in ranked:
            item = specs.obj(replica_type, required=True)
            replicas = item.integer("replicas", minimum=0, maximum=_INT32_MAX)
            template = item.obj("template", required=True)
            name = replica_type.lower()
            if (why := dns_label(name)) is not None:
                item.problem(f"replica type {replica_type!r} cannot name a pod set: {why}")
            path: Path = ("spec", field, replica_type, "template")
            count = 1 if replicas is None else replicas
            shapes.append(Shape(name, max(count, 1), None, path, template))
        return shapes

    return read


def ray_cluster_shapes(cluster: Field, prefix: Path) -> list[Shape]:
    """A RayClusterSpec (``cluster``, at ``prefix``): the head and the worker groups."""
    head = cluster.obj("headGroupSpec", required=True).obj("template", required=True)
    shapes = [Shape("head", 1, None, (*prefix, "headGroupSpec", "template"), head)]
    for index, group in enumerate(cluster.items("workerGroupSpecs")):
        group.mapping(required=True)
        name = group.string("groupName", required=True, check=dns_label) or f"group-{index}"
        if name == "head":
            group.child("groupName").problem("head is the head group's pod set; rename it")
        _unique(group, name, shapes)
        replicas = group.integer("replicas", minimum=0, maximum=_INT32_MAX)
        minimum = group.integer("minReplicas", minimum=0, maximum=_INT32_MAX)
        count = max(1 if replicas is None else replicas, 1)
        if minimum is not None and minimum > count:
            group.child("minReplicas").problem(f"must not exceed replicas ({count}), got {minimum}")
            minimum = None
        template = group.obj("template", required=True)
        path: Path = (*prefix, "workerGroupSpecs", index, "template")
        scaled: Path | None = (*prefix, "workerGroupSpecs", index, "replicas")
        shapes.append(Shape(name, count, minimum or None, path, template,
                            scaled if minimum else None))  # fmt: skip
    return shapes


def ray_job_shapes(spec: Field, annotations: Mapping[str, str], sink: Sink) -> list[Shape]:
    return ray_cluster_shapes(spec.obj("rayClusterSpec", required=True), ("spec", "rayClusterSpec"))


def ray_shapes(spec: Field, annotations: Mapping[str, str], sink: Sink) -> list[Shape]:
    return ray_cluster_shapes(spec, ("spec",))


def pod_shapes(spec: Field, annotations: Mapping[str, str], sink: Sink) -> list[Shape]:
    raw = annotations.get(POD_GROUP_TOTAL_ANNOTATION)
    total = 1
    if raw is not None:
        where = Field(sink, f"metadata.annotations[{POD_GROUP_TOTAL_ANNOTATION}]", raw)
        if not raw.strip().isdigit() or not 1 <= int(raw) <= _INT32_MAX:
            where.problem(f"must be a whole number of pods, at least 1, got {raw!r}")
        else:
            total = int(raw)
    # The pod is its own template: its spec is at the root.
    template = Field(sink, "", {"spec": spec.value}) if spec.present else Field(sink, "")
    template.obj("spec", required=True)
    return [Shape("main", total, None, (), template)]


KUBEFLOW = "kubeflow.org/v1"
# (apiVersion, kind) → its pod sets. Kueue Workloads carry theirs (``jobs._workload_pod_sets``).
READERS: Mapping[tuple[str, str], Reader] = {
    ("batch/v1", "Job"): job_shapes,
    ("jobset.x-k8s.io/v1alpha2", "JobSet"): jobset_shapes,
    (KUBEFLOW, "PyTorchJob"): replica_specs_reader("pytorchReplicaSpecs", ("Master", "Worker")),
    (KUBEFLOW, "TFJob"): replica_specs_reader(
        "tfReplicaSpecs", ("Chief", "Master", "PS", "Worker", "Evaluator")
    ),
    (KUBEFLOW, "XGBoostJob"): replica_specs_reader("xgbReplicaSpecs", ("Master", "Worker")),
    (KUBEFLOW, "PaddleJob"): replica_specs_reader("paddleReplicaSpecs", ("Master", "Worker")),
    (KUBEFLOW, "JAXJob"): replica_specs_reader("jaxReplicaSpecs", ("Worker",)),
    ("kubeflow.org/v2beta1", "MPIJob"): replica_specs_reader(
        "mpiReplicaSpecs", ("Launcher", "Worker")
    ),
    ("ray.io/v1", "RayJob"): ray_job_shapes,
    ("ray.io/v1", "RayCluster"): ray_shapes,
    ("v1", "Pod"): pod_shapes,
}


def shapes_of(obj: Mapping[str, object]) -> list[Shape]:
    """The pod sets of a workload object, problems ignored (the workload parser reports
    them): what the Kubernetes adapters steer. Empty for a kind without a reader."""
    reader = READERS.get((str(obj.get("apiVersion") or "batch/v1"), str(obj.get("kind") or "Job")))
    if reader is None:
        return []
    sink = Sink("", None, [])
    top = Field(sink, "", dict(obj))
    annotations = (obj.get("metadata") or {}).get("annotations") or {}  # type: ignore[attr-defined]
    shapes = reader(top.obj("spec"), annotations if isinstance(annotations, dict) else {}, sink)
    return [s for s in shapes if isinstance(s.template.value, dict)]


def _pods_of_job(spec: Field) -> int:
    """A Job never runs more pods at once than it has completions left (Kueue counts so)."""
    parallelism = spec.integer("parallelism", minimum=1, maximum=_INT32_MAX)
    completions = spec.integer("completions", minimum=1, maximum=_INT32_MAX)
    count = parallelism or 1
    if completions is not None and completions < count:
        count = completions
    return count


def _unique(item: Field, name: str, shapes: list[Shape]) -> None:
    if any(shape.name == name for shape in shapes):
        item.problem(f"pod set {name} is listed twice")
