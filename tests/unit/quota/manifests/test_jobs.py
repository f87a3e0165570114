"""Jobs and Kueue Workloads become workloads with per-pod requests computed as Kubernetes does."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from builders import manifests

from quota.core.errors import InvalidInput, Problem
from quota.core.model import PriorityClass, SelectorRequirement, Toleration
from quota.core.workload import PodSet, Workload
from quota.manifests.jobs import parse_workload

NOW = datetime(2025, 1, 1, tzinfo=UTC)
CLASSES = {"high": PriorityClass("high", 1000)}
GIB = 2**30 * 1000
POD = "spec.template.spec"


# --- builders -------------------------------------------------------------------------------


def container(requests: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    resources = {"requests": requests} if requests is not None else {}
    return {"name": "c", "resources": resources | more.pop("resources", {}), **more}


def pod(*containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"containers": list(containers) or [container({"cpu": "1"})], **spec}


def job(
    pod_spec: dict[str, Any] | None = None,
    *,
    queue: str | None = "lq",
    priority: str | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """The Job ``team-a/train`` queued to ``lq``; its pods as ``pod_spec`` (default: one
    container asking for a CPU); ``spec``: Job spec fields (``parallelism``, ``completions``)."""
    return manifests.job(
        "train", namespace="team-a", queue=queue, priority=priority, annotations=annotations,
        spec=spec, **(pod_spec or pod()),
    )  # fmt: skip


def pod_set(name: str = "main", count: int = 1, **more: Any) -> dict[str, Any]:
    return {"name": name, "count": count, "template": {"spec": pod()}, **more}


def workload(*pod_sets: dict[str, Any], api: str = "v1beta1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"kueue.x-k8s.io/{api}",
        "kind": "Workload",
        "metadata": {"name": "wl", "namespace": "ml"},
        "spec": {"queueName": "lq", "podSets": list(pod_sets) or [pod_set()], **spec},
    }


def parse(doc: object) -> Workload:
    return parse_workload(
        doc, source="jobs.yaml", document=2, created_at=NOW, priority_classes=CLASSES
    )


def problems_of(doc: object) -> list[Problem]:
    with pytest.raises(InvalidInput) as caught:
        parse(doc)
    return caught.value.problems


# --- Jobs -----------------------------------------------------------------------------------


def test_job_becomes_one_pod_set_with_everything_the_scheduler_needs() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                    {"matchExpressions": [{"key": "spare", "operator": "Exists"}]},
                ]
            }
        }
    }
    doc = job(
        pod(
            container({"cpu": "4", "nvidia.com/gpu": "4", "memory": "16Gi"}),
            nodeSelector={"gpu.product": "h100"},
            tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
            affinity=affinity,
        ),
        priority="high",
        annotations={"berth.dev/runtime": "30m"},
        parallelism=2,
    )
    doc["spec"]["template"]["metadata"] = {
        "annotations": {"kueue.x-k8s.io/podset-required-topology": "rack"}
    }
    assert parse(doc) == Workload(
        namespace="team-a",
        name="train",
        queue_name="lq",
        pod_sets=(
            PodSet(
                name="main",
                count=2,
                requests={"cpu": 4000, "nvidia.com/gpu": 4000, "memory": 16 * GIB},
                node_selector={"gpu.product": "h100"},
                affinity_terms=(
                    (SelectorRequirement("zone", "In", ("a",)),),
                    (SelectorRequirement("spare", "Exists"),),
                ),
                tolerations=(Toleration("nvidia.com/gpu", "Exists", "", "NoSchedule"),),
                annotations={"kueue.x-k8s.io/podset-required-topology": "rack"},
            ),
        ),
        created_at=NOW,
        priority=1000,
        priority_class="high",
        labels={"kueue.x-k8s.io/queue-name": "lq", "kueue.x-k8s.io/priority-class": "high"},
        annotations={"berth.dev/runtime": "30m"},
        kind="Job",
    )


_SIDECAR = {"restartPolicy": "Always"}


@pytest.mark.parametrize(
    ("pod_spec", "requests"),
    [
        pytest.param(
            pod(container({"cpu": "1"}), container({"cpu": "500m", "memory": "1Gi"})),
            {"cpu": 1500, "memory": GIB},
            id="containers running together add up",
        ),
        pytest.param(
            pod(container({"cpu": "1"}), initContainers=[container({"cpu": "8"})]),
            {"cpu": 8000},
            id="a bigger init container sets the peak",
        ),
        pytest.param(
            pod(container({"cpu": "4"}), initContainers=[container({"cpu": "2", "memory": "2Gi"})]),
            {"cpu": 4000, "memory": 2 * GIB},
            id="init and main containers peak per resource",
        ),
        pytest.param(
            pod(
                container({"cpu": "2"}),
                initContainers=[container({"cpu": "1"}, **_SIDECAR), container({"cpu": "3"})],
            ),
            {"cpu": 4000},
            id="a sidecar keeps running beside later init containers and the main ones",
        ),
        pytest.param(
            pod(container(resources={"limits": {"nvidia.com/gpu": "2"}})),
            {"nvidia.com/gpu": 2000},
            id="a limit stands in for a missing request",
        ),
        pytest.param(
            pod(container({"cpu": "1"}, resources={"limits": {"cpu": "4"}})),
            {"cpu": 1000},
            id="a request wins over its limit",
        ),
        pytest.param(
            pod(container({"cpu": "1"}), overhead={"cpu": "250m"}),
            {"cpu": 1250},
            id="pod overhead is reserved too",
        ),
        pytest.param(
            pod(container({"cpu": "1", "nvidia.com/gpu": "0"})),
            {"cpu": 1000},
            id="a zero request needs no quota",
        ),
    ],
)
def test_per_pod_requests(pod_spec: dict[str, Any], requests: dict[str, int]) -> None:
    assert parse(job(pod_spec)).pod_sets[0].requests == requests


@pytest.mark.parametrize(
    ("spec", "count"),
    [
        pytest.param({}, 1, id="parallelism defaults to one"),
        pytest.param({"parallelism": 4}, 4, id="parallelism pods at once"),
        pytest.param({"parallelism": 4, "completions": 3}, 3, id="never more than completions"),
        pytest.param({"parallelism": 2, "completions": 10}, 2, id="more completions than pods"),
    ],
)
def test_job_pod_count(spec: dict[str, Any], count: int) -> None:
    assert parse(job(**spec)).pod_sets[0].count == count


def test_min_parallelism_annotation_allows_partial_admission() -> None:
    doc = job(annotations={"kueue.x-k8s.io/job-min-parallelism": "2"}, parallelism=8)
    assert parse(doc).pod_sets[0].min_count == 2


def test_unknown_priority_class_is_recorded_with_priority_zero() -> None:
    parsed = parse(job(priority="urgent"))
    assert (parsed.priority, parsed.priority_class) == (0, "urgent")


def test_job_without_namespace_goes_to_default() -> None:
    doc = job()
    del doc["metadata"]["namespace"]
    assert parse(doc).key == "default/train"


# --- Workloads ----------------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["v1beta1", "v1beta2"])
def test_workload_keeps_its_pod_sets(api: str) -> None:
    parsed = parse(
        workload(pod_set("driver"), pod_set("workers", 8, minCount=4), api=api,
                 priorityClassName="high")
    )  # fmt: skip
    assert parsed.kind == "Workload"
    assert (parsed.key, parsed.queue_name, parsed.priority) == ("ml/wl", "lq", 1000)
    assert [(p.name, p.count, p.min_count) for p in parsed.pod_sets] == [
        ("driver", 1, None),
        ("workers", 8, 4),
    ]


@pytest.mark.parametrize(
    ("spec", "priority", "active"),
    [
        pytest.param({"priority": 7, "priorityClassName": "high"}, 7, True,
                     id="explicit priority wins over the class"),
        pytest.param({"priorityClassName": "high", "active": False}, 1000, False,
                     id="deactivated workload"),
    ],
)  # fmt: skip
def test_workload_priority_and_activity(spec: dict[str, Any], priority: int, active: bool) -> None:
    parsed = parse(workload(**spec))
    assert (parsed.priority, parsed.active) == (priority, active)


# --- mistakes -----------------------------------------------------------------------------------

_NO_QUEUE = job(queue=None)
_MIN_TOO_BIG = job(annotations={"kueue.x-k8s.io/job-min-parallelism": "5"}, parallelism=4)
_MIN_NOT_A_NUMBER = job(annotations={"kueue.x-k8s.io/job-min-parallelism": "half"})
_BAD_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "gpus", "operator": "Gt"}]}]
        }
    }
}
_AFFINITY_VALUES = (
    f"{POD}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
    ".nodeSelectorTerms[0].matchExpressions[0].values"
)
_DEPLOYMENT = {**job(), "apiVersion": "apps/v1", "kind": "Deployment"}

# fmt: off
_ERRORS = [
    pytest.param(_NO_QUEUE, "Job/team-a/train", "metadata.labels",
                 "label kueue.x-k8s.io/queue-name is required",
                 id="job without a queue label"),
    pytest.param(job(pod(container({"cpu": "-2"}))), "Job/team-a/train",
                 f"{POD}.containers[0].resources.requests[cpu]", "must not be negative, got -2",
                 id="negative request"),
    pytest.param(job(pod(container({"nvidia.com/gpu": "two"}))), "Job/team-a/train",
                 f"{POD}.containers[0].resources.requests[nvidia.com/gpu]",
                 "'two' is not a valid quantity",
                 id="request that does not parse"),
    pytest.param(job(pod(initContainers=[container(resources={"limits": {"cpu": "1x"}})])),
                 "Job/team-a/train", f"{POD}.initContainers[0].resources.limits[cpu]",
                 "'1x' is not a valid quantity",
                 id="init container limit that does not parse"),
    pytest.param(job(parallelism=0), "Job/team-a/train", "spec.parallelism",
                 "must be at least 1, got 0",
                 id="job with no pods"),
    pytest.param(_MIN_TOO_BIG, "Job/team-a/train",
                 "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]",
                 "must be between 1 and the Job's 4 pods, got 5",
                 id="minimum parallelism above parallelism"),
    pytest.param(_MIN_NOT_A_NUMBER, "Job/team-a/train",
                 "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]",
                 "must be a whole number of pods, got 'half'",
                 id="minimum parallelism that is not a number"),
    pytest.param(job({"containers": []}), "Job/team-a/train", f"{POD}.containers",
                 "must not be empty",
                 id="pod without containers"),
    pytest.param(job(pod(affinity=_BAD_AFFINITY)), "Job/team-a/train", _AFFINITY_VALUES,
                 "must be one integer when operator is Gt",
                 id="node affinity comparison without a number"),
    pytest.param(job(pod(tolerations=[{"operator": "Equal", "value": "x"}])), "Job/team-a/train",
                 f"{POD}.tolerations[0].operator", "must be Exists when key is empty",
                 id="toleration of every key that names a value"),
    pytest.param(_DEPLOYMENT, "Deployment/team-a/train", "apiVersion",
                 "apps/v1 Deployment is not a workload",
                 id="not a Job or Workload"),
    pytest.param({**job(), "kind": "CronJob"}, "CronJob/team-a/train", "kind",
                 "batch/v1 CronJob is not a workload",
                 id="batch kind other than Job"),
    pytest.param(workload(queueName=None), "Workload/ml/wl", "spec.queueName",
                 "required field missing",
                 id="workload without a queue"),
    pytest.param(workload(pod_set(count=0)), "Workload/ml/wl", "spec.podSets[0].count",
                 "must be at least 1, got 0",
                 id="pod set with no pods"),
    pytest.param(workload(pod_set(count=2, minCount=3)), "Workload/ml/wl",
                 "spec.podSets[0].minCount", "must not exceed count (2), got 3",
                 id="minimum count above count"),
    pytest.param(workload(pod_set("a"), pod_set("a")), "Workload/ml/wl", "spec.podSets[1].name",
                 "pod set a is listed twice",
                 id="two pod sets with one name"),
    pytest.param(workload(podSets=[]), "Workload/ml/wl", "spec.podSets", "must not be empty",
                 id="workload without pod sets"),
]
# fmt: on


@pytest.mark.parametrize(("doc", "where", "field", "message"), _ERRORS)
def test_reports_one_problem_at_the_exact_field(
    doc: dict[str, Any], where: str, field: str, message: str
) -> None:
    (problem,) = problems_of(doc)
    assert (problem.source, problem.document, problem.obj, problem.field) == (
        "jobs.yaml", 2, where, field
    )  # fmt: skip
    assert message in problem.message


def test_collects_every_problem_of_a_job() -> None:
    doc = job(pod(container({"cpu": "-1"}), container({"memory": "lots"})), queue=None)
    assert [p.field for p in problems_of(doc)] == [
        "metadata.labels",
        f"{POD}.containers[0].resources.requests[cpu]",
        f"{POD}.containers[1].resources.requests[memory]",
    ]
