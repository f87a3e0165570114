"""Workloads from batch/v1 Job, framework (JobSet, Kubeflow, Ray) and Kueue Workload
manifests (edge).

A Job becomes one pod set ``main``, a framework object the pod sets ``frameworks`` reads
from it; a Kueue ``Workload`` brings its own pod sets. Per-pod
requests follow Kubernetes: containers add up, init containers run one at a time (sidecars,
``restartPolicy: Always``, keep running), limits stand in for missing requests, and pod
overhead is added. Every problem is collected, as for quota manifests.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from quota.core.checkpoints import checkpoint_problem
from quota.core.errors import InvalidInput, Problem
from quota.core.model import PriorityClass
from quota.core.workload import PRIORITY_CLASS_LABEL, QUEUE_NAME_LABEL, PodSet, Workload
from quota.manifests.frameworks import READERS
from quota.manifests.reader import Field, Sink, describe, dns_label, dns_name, qualified_name
from quota.manifests.shapes import read_affinity_terms, read_tolerations

JOB_API_VERSION = "batch/v1"
WORKLOAD_API_VERSIONS = ("kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2")
MAX_POD_SETS = 8  # Kueue's limit
_INT32_MAX = 2**31 - 1


def parse_workload(
    doc: object,
    *,
    source: str,
    document: int,
    created_at: datetime,
    priority_classes: Mapping[str, PriorityClass] | None = None,
) -> Workload:
    """A Job or Workload manifest → ``Workload``; ``InvalidInput`` lists every problem."""
    problems: list[Problem] = []
    sink = Sink(source, document, problems)
    if not isinstance(doc, dict):
        sink.add("", f"a workload must be a mapping (a Job or Workload), got {describe(doc)}")
        raise InvalidInput(problems)
    top = Field(sink, "", doc)
    sink.obj = workload_label(doc)
    api_version = top.string("apiVersion", required=True)
    kind = top.string("kind", required=True)
    if api_version is None or kind is None:
        raise InvalidInput(problems)
    reader = READERS.get((api_version, kind))
    if reader is None and not (kind == "Workload" and api_version in WORKLOAD_API_VERSIONS):
        versions = {version for version, _ in READERS} | set(WORKLOAD_API_VERSIONS)
        field = "kind" if api_version in versions else "apiVersion"
        known = ", ".join(f"{version} {name}" for version, name in READERS)
        top.child(field).problem(
            f"{api_version} {kind} is not a workload; expected one of {known}, or a "
            f"Workload of {' or '.join(WORKLOAD_API_VERSIONS)}"
        )
        raise InvalidInput(problems)
    metadata = top.obj("metadata", required=True)
    name = metadata.string("name", required=True, check=dns_name) or ""
    # As kubectl does without a context namespace.
    namespace = metadata.string("namespace", check=dns_label) or "default"
    labels = metadata.string_map("labels", check_keys=qualified_name)
    annotations = metadata.annotation_map()
    found = checkpoint_problem(annotations)
    if found is not None:
        Field(sink, f"metadata.annotations[{found[0]}]").problem(found[1])
    spec = top.obj("spec", required=True)
    classes = priority_classes or {}
    if reader is not None:
        queue = labels.get(QUEUE_NAME_LABEL)
        if queue is None:
            metadata.child("labels").problem(
                f"label {QUEUE_NAME_LABEL} is required: it names the LocalQueue the {kind} "
                "waits in"
            )
        elif (why := dns_name(queue)) is not None:
            Field(sink, f"metadata.labels[{QUEUE_NAME_LABEL}]").problem(why)
        priority_class = labels.get(PRIORITY_CLASS_LABEL)
        priority = _priority(priority_class, classes)
        shapes = reader(spec, annotations, sink)
        if len(shapes) > MAX_POD_SETS:
            spec.problem(f"must have at most {MAX_POD_SETS} pod sets, got {len(shapes)}")
        pod_sets: tuple[PodSet, ...] = tuple(
            _pod_set(s.name, s.pods, s.min_count, s.template) for s in shapes
        )
        active = True
    else:
        queue = spec.string("queueName", required=True, check=dns_name)
        priority_class = spec.string("priorityClassName", check=dns_name) or None
        explicit = spec.integer("priority", minimum=-(2**31), maximum=_INT32_MAX)
        priority = explicit if explicit is not None else _priority(priority_class, classes)
        pod_sets = _workload_pod_sets(spec)
        active = spec.boolean("active") is not False
    if problems:
        raise InvalidInput(problems)
    return Workload(
        namespace=namespace,
        name=name,
        queue_name=queue or "",
        pod_sets=pod_sets,
        created_at=created_at,
        priority=priority,
        priority_class=priority_class,
        active=active,
        labels=labels,
        annotations=annotations,
        kind=kind,
    )


def _priority(name: str | None, classes: Mapping[str, PriorityClass]) -> int:
    """The class's value; an unknown class counts as 0 (the engine flags it, not the parser)."""
    known = classes.get(name) if name is not None else None
    return known.value if known is not None else 0


def workload_label(doc: Mapping[object, object]) -> str:
    """``Kind/namespace/name`` of a workload manifest, from whatever of it the document has."""
    kind = doc.get("kind") if isinstance(doc.get("kind"), str) else "Workload"
    metadata = doc.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    namespace = meta.get("namespace") if isinstance(meta.get("namespace"), str) else "default"
    name = meta.get("name")
    return f"{kind}/{namespace}/{name}" if isinstance(name, str) and name else f"{kind}"


def _workload_pod_sets(spec: Field) -> tuple[PodSet, ...]:
    items = spec.items("podSets", non_empty=True)
    if len(items) > MAX_POD_SETS:
        spec.child("podSets").problem(
            f"must have at most {MAX_POD_SETS} pod sets, got {len(items)}"
        )
    pod_sets: list[PodSet] = []
    for item in items:
        item.mapping(required=True)
        name = item.string("name", check=dns_label) or "main"
        if any(p.name == name for p in pod_sets):
            item.child("name").problem(f"pod set {name} is listed twice")
        count = item.integer("count", minimum=1, maximum=_INT32_MAX)
        min_count = item.integer("minCount", minimum=1, maximum=_INT32_MAX)
        if count is not None and min_count is not None and min_count > count:
            item.child("minCount").problem(f"must not exceed count ({count}), got {min_count}")
        template = item.obj("template", required=True)
        pod_sets.append(_pod_set(name, count or 1, min_count, template))
    return tuple(pod_sets)


def _pod_set(name: str, count: int, min_count: int | None, template: Field) -> PodSet:
    metadata = template.obj("metadata")
    pod = template.obj("spec", required=True)
    return PodSet(
        name=name,
        count=count,
        requests=_pod_requests(pod),
        min_count=min_count,
        node_selector=pod.string_map("nodeSelector", check_keys=qualified_name),
        affinity_terms=read_affinity_terms(pod),
        tolerations=read_tolerations(pod, "tolerations"),
        annotations=metadata.annotation_map(),
    )


def _pod_requests(pod: Field) -> dict[str, int]:
    """What one pod reserves, computed the way the Kubernetes scheduler does."""
    total: dict[str, int] = {}
    for container in pod.items("containers", non_empty=True):
        _add(total, _container_requests(container))
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for container in pod.items("initContainers"):
        requests = _container_requests(container)
        if container.has("restartPolicy") and container.string("restartPolicy") == "Always":
            _add(sidecars, requests)  # a sidecar keeps running beside what starts after it
            _peak(init_peak, sidecars)
        else:
            running = dict(sidecars)
            _add(running, requests)
            _peak(init_peak, running)
    _add(total, sidecars)
    _peak(total, init_peak)
    _add(total, pod.quantity_map("overhead"))
    return {resource: amount for resource, amount in total.items() if amount > 0}


def _container_requests(container: Field) -> dict[str, int]:
    container.mapping(required=True)
    resources = container.obj("resources")
    # Kubernetes takes a limit as the request when only the limit is given (typical for GPUs).
    requests = resources.quantity_map("limits")
    requests.update(resources.quantity_map("requests"))
    return requests


def _add(into: dict[str, int], more: Mapping[str, int]) -> None:
    for resource, amount in more.items():
        into[resource] = into.get(resource, 0) + amount


def _peak(into: dict[str, int], other: Mapping[str, int]) -> None:
    for resource, amount in other.items():
        into[resource] = max(into.get(resource, 0), amount)
