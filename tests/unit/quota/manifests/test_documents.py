"""Kueue manifests parse into the ledger's values; every mistake is named by object and field."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from builders.paths import EXAMPLES
from builders.strategies import model_objects
from hypothesis import HealthCheck, given, settings

from quota.core.errors import InvalidInput, Problem
from quota.core.model import (
    ClusterQueue,
    Cohort,
    LabelSelector,
    LocalQueue,
    Node,
    NodeHealth,
    PriorityClass,
    ResourceFlavor,
    ResourceQuota,
    Taint,
    Toleration,
    Topology,
    WhenCanBorrow,
    WhenCanPreempt,
)
from quota.manifests.documents import (
    BERTH_API_VERSION,
    ManifestObject,
    find_kind,
    load_documents,
    parse_objects,
    to_manifest,
)

KUEUE = "kueue.x-k8s.io/v1beta1"
GPU_POOL = EXAMPLES / "gpu-pool.yaml"
GIB = 2**30 * 1000
QUOTA_0 = "spec.resourceGroups[0].flavors[0].resources[0]"


# --- builders -------------------------------------------------------------------------------


def quota(name: str = "cpu", nominal: object = "10", **limits: object) -> dict[str, Any]:
    return {"name": name, "nominalQuota": nominal, **limits}


def group(covered: list[str], flavor: str = "default", *quotas: dict[str, Any]) -> dict[str, Any]:
    resources = list(quotas) or [quota(name) for name in covered]
    return {"coveredResources": covered, "flavors": [{"name": flavor, "resources": resources}]}


def cluster_queue(name: str = "team-a", **spec: Any) -> dict[str, Any]:
    spec.setdefault("namespaceSelector", {})
    spec.setdefault("resourceGroups", [group(["cpu"])])
    return {"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def cohort(name: str = "org", api_version: str = KUEUE, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def local_queue(namespace: str | None = "llm", **spec: Any) -> dict[str, Any]:
    metadata = {"name": "main"} | ({"namespace": namespace} if namespace else {})
    spec.setdefault("clusterQueue", "team-a")
    return {"apiVersion": KUEUE, "kind": "LocalQueue", "metadata": metadata, "spec": spec}


def obj(kind: str, name: str = "x", api_version: str = KUEUE, **body: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **body}


def node(**status: Any) -> dict[str, Any]:
    return obj("Node", "gpu-01", "v1", status=status)


def parse(*docs: object, source: str = "test.yaml") -> list[ManifestObject]:
    return parse_objects((source, index, doc) for index, doc in enumerate(docs))


def parse_one(doc: object) -> Any:
    (item,) = parse(doc)
    return item.obj


def problems_of(*docs: object) -> list[Problem]:
    with pytest.raises(InvalidInput) as caught:
        parse(*docs)
    return caught.value.problems


# --- every mistake, one problem, exact place ----------------------------------------------------


def case(doc: object, where: str, field: str, message: str, *, id: str) -> Any:
    return pytest.param(doc, where, field, message, id=id)


CQ = "ClusterQueue/team-a"
LENDS_6_OF_4 = group(["cpu"], "a", quota("cpu", 4, lendingLimit=6))
TYPO = group(["cpu"], "a", quota("cpu", 4, borowingLimit=6))
BAD_TOLERATION = {"tolerations": [{"key": "a", "operator": "Exists", "value": "b"}]}
BORROW_LOWER = {"policy": "LowerPriority"}
SICK = {"name": "gpu-01", "annotations": {"berth.dev/health": "Sick"}}
FLOOR_HIGH = {"name": "h100", "annotations": {"berth.dev/min-priority": "high"}}

# fmt: off
_ERRORS = [
    case(cluster_queue(resourceGroups=[group(["cpu"], "default", quota("cpu", -5))]),
         CQ, f"{QUOTA_0}.nominalQuota", "must not be negative, got -5",
         id="negative nominal quota"),
    case(cluster_queue(resourceGroups=[group(["cpu"], "default", quota("cpu", "12x"))]),
         CQ, f"{QUOTA_0}.nominalQuota", "'12x' is not a valid quantity (e.g. 4, 500m, 16Gi)",
         id="quantity that does not parse"),
    case(cluster_queue(resourceGroups=[group(["cpu"], "f", quota("cpu"), quota("nvidia.com/gpu"))]),
         CQ, "spec.resourceGroups[0].flavors[0].resources[1].name",
         "resource nvidia.com/gpu is not in coveredResources [cpu]",
         id="flavor quota for a resource the group does not cover"),
    case(cluster_queue(resourceGroups=[group(["cpu", "memory"], "f", quota("cpu"))]),
         CQ, "spec.resourceGroups[0].flavors[0].resources",
         "missing quota for covered resource memory",
         id="flavor that leaves a covered resource out"),
    case(cluster_queue(resourceGroups=[group(["cpu"], "a"), group(["cpu"], "b")]),
         CQ, "spec.resourceGroups[1].coveredResources[0]",
         "resource cpu is already covered by resourceGroups[0]",
         id="resource covered by two groups"),
    case(cluster_queue(resourceGroups=[group(["cpu"], "a"), group(["memory"], "a")]),
         CQ, "spec.resourceGroups[1].flavors[0].name",
         "flavor a already appears in resourceGroups[0]",
         id="flavor in two groups"),
    case(cluster_queue(resourceGroups=[group(["cpu", "cpu"], "a", quota("cpu"))]),
         CQ, "spec.resourceGroups[0].coveredResources[1]", "cpu is listed twice",
         id="resource covered twice by one group"),
    case(cluster_queue(resourceGroups=[group(["cpu"], "a", quota("cpu"), quota("cpu"))]),
         CQ, "spec.resourceGroups[0].flavors[0].resources[1].name",
         "resource cpu is listed twice in this flavor",
         id="resource quota given twice for one flavor"),
    case(cluster_queue(resourceGroups=[group(["cpu"], "a", quota("cpu", 4, borrowingLimit=2))]),
         CQ, f"{QUOTA_0}.borrowingLimit", "needs spec.cohort to be set",
         id="borrowing limit without a cohort"),
    case(cluster_queue(resourceGroups=[group(["cpu"], "a", quota("cpu", 4, lendingLimit=2))]),
         CQ, f"{QUOTA_0}.lendingLimit", "needs spec.cohort to be set",
         id="lending limit without a cohort"),
    case(cluster_queue(cohort="org", resourceGroups=[LENDS_6_OF_4]),
         CQ, f"{QUOTA_0}.lendingLimit", "must not exceed nominalQuota (6 > 4)",
         id="lending more than the nominal quota"),
    case(cluster_queue(cohort="org", resourceGroups=[TYPO]),
         CQ, f"{QUOTA_0}.borowingLimit", "did you mean 'borrowingLimit'?",
         id="misspelt field is refused, not ignored"),
    case(cluster_queue(admissionScope={"admissionMode": "UsageBasedAdmissionFairSharing"}),
         CQ, "spec.admissionScope", "not supported by Berth",
         id="Kueue field Berth does not implement"),
    case(cluster_queue(admissionChecks=["prov"],
                       admissionChecksStrategy={"admissionChecks": [{"name": "other"}]}),
         CQ, "spec.admissionChecksStrategy", "either spec.admissionChecks or",
         id="checks listed both ways at once"),
    case(cluster_queue(admissionChecksStrategy={"admissionChecks": [{"onFlavors": ["a"]}]}),
         CQ, "spec.admissionChecksStrategy.admissionChecks[0].name", "required field missing",
         id="strategy check without a name"),
    case(cluster_queue(admissionChecksStrategy={"admissionChecks": [{"name": "p"},
                                                                    {"name": "p"}]}),
         CQ, "spec.admissionChecksStrategy.admissionChecks[1].name", "p is listed twice",
         id="strategy check listed twice"),
    case(cluster_queue(queueingStrategy="FIFO"),
         CQ, "spec.queueingStrategy", "must be one of BestEffortFIFO, StrictFIFO; got 'FIFO'",
         id="queueing strategy spelt wrong"),
    case(cluster_queue(preemption={"withinClusterQueue": "lowerPriority"}),
         CQ, "spec.preemption.withinClusterQueue",
         "must be one of Never, LowerPriority, LowerOrNewerEqualPriority; got 'lowerPriority'",
         id="enum values are case sensitive"),
    case(cluster_queue(flavorFungibility={"whenCanPreempt": "Borrow"}),
         CQ, "spec.flavorFungibility.whenCanPreempt",
         "must be one of Preempt, MayStopSearch, TryNextFlavor; got 'Borrow'",
         id="fungibility alias of the other field"),
    case(cluster_queue(stopPolicy="Drain"),
         CQ, "spec.stopPolicy", "must be one of None, Hold, HoldAndDrain",
         id="unknown stop policy"),
    case(cluster_queue(cohort="org", preemption={"borrowWithinCohort": BORROW_LOWER}),
         CQ, "spec.preemption.borrowWithinCohort.policy",
         "needs reclaimWithinCohort other than Never",
         id="borrowing preemption without reclaim"),
    case(cluster_queue(fairSharing={"weight": "-1"}),
         CQ, "spec.fairSharing.weight", "must not be negative, got -1",
         id="negative fair sharing weight"),
    case(cluster_queue(cohort="a", cohortName="b"),
         CQ, "spec.cohortName", "disagrees with cohort",
         id="v1beta1 and v1beta2 cohort spellings that disagree"),
    case(cluster_queue(namespaceSelector={"matchExpressions": [{"key": "team", "operator": "Is"}]}),
         CQ, "spec.namespaceSelector.matchExpressions[0].operator",
         "must be one of In, NotIn, Exists, DoesNotExist; got 'Is'",
         id="namespace selector with an unknown operator"),
    case(cohort(resourceGroups=[group(["cpu"], "a", quota("cpu", 4, borrowingLimit=1))]),
         "Cohort/org", f"{QUOTA_0}.borrowingLimit", "needs spec.parent to be set",
         id="root cohort with a borrowing limit"),
    case(obj("Foo"),
         "Foo/x", "kind",
         "unknown kind Foo for apiVersion kueue.x-k8s.io/v1beta1; expected one of ResourceFlavor,",
         id="unknown kind"),
    case(obj("ClusterQueue", api_version="kueue.x-k8s.io/v1alpha1"),
         "ClusterQueue/x", "kind", "expected one of Cohort, Topology",
         id="kind that its apiVersion does not serve"),
    case(obj("ClusterQueue", api_version="kueue.x-k8s.io/v2"),
         "ClusterQueue/x", "apiVersion", "unknown apiVersion kueue.x-k8s.io/v2",
         id="unknown apiVersion"),
    case({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train"}},
         "Job/train", "kind", "is a workload, not a quota object",
         id="Job applied as a quota object"),
    case({"kind": "ClusterQueue", "metadata": {"name": "x"}},
         "ClusterQueue/x", "apiVersion", "required field missing",
         id="missing apiVersion"),
    case({"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {}},
         "ResourceFlavor", "metadata.name", "required field missing",
         id="object without a name"),
    case(obj("ResourceFlavor", "H100_80GB"),
         "ResourceFlavor/H100_80GB", "metadata.name", "is not a valid name",
         id="name that is not DNS-1123"),
    case("just text",
         "", "", "an object must be a mapping with apiVersion and kind, got a string",
         id="document that is not a mapping"),
    case(obj("ResourceFlavor", spec={"nodeLabels": {"gpu": True}}),
         "ResourceFlavor/x", "spec.nodeLabels[gpu]",
         "must be a string, got a boolean (true) (quote it)",
         id="unquoted YAML boolean as a label value"),
    case(obj("ResourceFlavor", spec={"nodeTaints": [{"key": "gpu", "effect": "NoRun"}]}),
         "ResourceFlavor/x", "spec.nodeTaints[0].effect",
         "must be one of NoSchedule, PreferNoSchedule, NoExecute; got 'NoRun'",
         id="taint with an unknown effect"),
    case(obj("ResourceFlavor", spec=BAD_TOLERATION),
         "ResourceFlavor/x", "spec.tolerations[0].value", "must be empty when operator is Exists",
         id="toleration that both matches any value and names one"),
    case(local_queue(namespace=None),
         "LocalQueue/main", "metadata.namespace", "required field missing",
         id="local queue without a namespace"),
    case({**local_queue(), "spec": {"stopPolicy": "Hold"}},
         "LocalQueue/llm/main", "spec.clusterQueue", "required field missing",
         id="local queue naming no cluster queue"),
    case(obj("WorkloadPriorityClass", "high"),
         "WorkloadPriorityClass/high", "value", "required field missing",
         id="priority class without a value"),
    case(obj("WorkloadPriorityClass", "high", value="1000"),
         "WorkloadPriorityClass/high", "value", "must be an integer, got a string ('1000')",
         id="priority value written as a string"),
    case(obj("Topology", "dc", spec={"levels": []}),
         "Topology/dc", "spec.levels", "must not be empty",
         id="topology without levels"),
    case(obj("Topology", "dc", spec={"levels": [{"nodeLabel": "rack"}, {"nodeLabel": "rack"}]}),
         "Topology/dc", "spec.levels[1].nodeLabel", "level rack is listed twice",
         id="topology level repeated"),
    case(node(capacity={"nvidia.com/gpu": "-8"}),
         "Node/gpu-01", "status.capacity[nvidia.com/gpu]", "must not be negative, got -8",
         id="node with negative capacity"),
    case(node(capacity={"nvidia.com/gpu": "8"}, allocatable={"nvidia.com/gpu": "9"}),
         "Node/gpu-01", "status.allocatable[nvidia.com/gpu]", "must not exceed capacity (9 > 8)",
         id="node allocating more than it has"),
    case(node(conditions=[{"type": "Ready", "status": "Yes"}]),
         "Node/gpu-01", "status.conditions[0].status", "must be one of True, False, Unknown",
         id="node condition status that is not True, False or Unknown"),
    case({**node(), "metadata": SICK},
         "Node/gpu-01", "metadata.annotations[berth.dev/health]", "must be one of Healthy,",
         id="node health annotation Berth does not know"),
    case({**obj("ResourceFlavor", "h100"), "metadata": FLOOR_HIGH},
         "ResourceFlavor/h100", "metadata.annotations[berth.dev/min-priority]",
         "must be a whole number (a workload priority), got 'high'",
         id="min-priority that is not a number"),
]
# fmt: on


@pytest.mark.parametrize(("doc", "where", "field", "message"), _ERRORS)
def test_reports_one_problem_at_the_exact_field(
    doc: object, where: str, field: str, message: str
) -> None:
    (problem,) = problems_of(doc)
    assert (problem.source, problem.document, problem.obj, problem.field) == (
        "test.yaml",
        0,
        where,
        field,
    )
    assert message in problem.message


def test_collects_every_problem_of_every_document() -> None:
    problems = problems_of(
        cluster_queue(stopPolicy="Drain", queueingStrategy="FIFO"),
        obj("ResourceFlavor", "fine"),
        local_queue(namespace=None),
    )
    assert [(p.document, p.field) for p in problems] == [
        (0, "spec.queueingStrategy"),
        (0, "spec.stopPolicy"),
        (2, "metadata.namespace"),
    ]


@pytest.mark.parametrize(
    ("second_source", "where"),
    [
        pytest.param("test.yaml", "first in document 0", id="twice in one file"),
        pytest.param("other.yaml", "first in test.yaml document 0", id="in two files"),
    ],
)
def test_same_object_twice_names_both_documents(second_source: str, where: str) -> None:
    docs = [("test.yaml", 0, cluster_queue()), (second_source, 3, cluster_queue(cohort="x"))]
    with pytest.raises(InvalidInput) as caught:
        parse_objects(docs)
    (problem,) = caught.value.problems
    assert problem.obj == "ClusterQueue/team-a"
    assert problem.document == 3
    assert f"defined twice: {where}, again in document 3" in problem.message


def test_local_queues_with_one_name_in_two_namespaces_are_different_objects() -> None:
    keys = [item.key for item in parse(local_queue("llm"), local_queue("inference"))]
    assert keys == ["LocalQueue/llm/main", "LocalQueue/inference/main"]


# --- the example pool -------------------------------------------------------------------------


def test_parses_the_gpu_pool_example_with_its_real_numbers() -> None:
    text = GPU_POOL.read_text()
    items = parse_objects(("gpu-pool.yaml", i, d) for i, d in load_documents(text, "gpu-pool.yaml"))
    by_key = {item.key: item for item in items}
    assert list(by_key) == [
        "ResourceFlavor/h100-80gb", "ResourceFlavor/a100-40gb", "ResourceFlavor/mig-1g-10gb",
        "WorkloadPriorityClass/production", "WorkloadPriorityClass/research",
        "ClusterQueue/llm-training", "ClusterQueue/inference",
        "LocalQueue/llm/main", "LocalQueue/inference/serve",
    ]  # fmt: skip
    assert [item.document for item in items] == list(range(9))
    training = by_key["ClusterQueue/llm-training"].obj
    assert isinstance(training, ClusterQueue)
    h100, a100 = training.resource_groups[0].flavors
    assert h100.resources == (
        ResourceQuota("cpu", 384_000),
        ResourceQuota("memory", 3 * 2**40 * 1000),
        ResourceQuota("nvidia.com/gpu", 32_000, borrowing_limit=16_000),
    )
    assert a100.resources[1] == ResourceQuota("memory", 1536 * GIB)
    assert training.cohort == "ml-platform"
    assert training.namespace_selector == LabelSelector()
    assert str(training.preemption.reclaim_within_cohort) == "Any"
    inference = by_key["ClusterQueue/inference"].obj
    assert isinstance(inference, ClusterQueue)
    assert inference.resource_groups[0].flavors[0].resources[2].lending_limit == 4_000
    assert inference.resource_groups[1].flavors[0].resources == (
        ResourceQuota("nvidia.com/mig-1g.10gb", 28_000),
    )
    assert by_key["WorkloadPriorityClass/production"].obj == PriorityClass("production", 10_000)
    assert by_key["LocalQueue/llm/main"].obj == LocalQueue("llm", "main", "llm-training")
    assert by_key["ResourceFlavor/h100-80gb"].obj == ResourceFlavor(
        "h100-80gb", node_labels={"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}
    )


# --- spellings, defaults, shapes ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        pytest.param(cluster_queue(cohortName="org"), "org", id="v1beta2 cohortName"),
        pytest.param(
            cluster_queue(cohort="org", cohortName="org"), "org", id="both spellings agreeing"
        ),
        pytest.param(cluster_queue(cohort=""), None, id="empty cohort is no cohort"),
    ],
)
def test_cluster_queue_cohort_spellings(doc: dict[str, Any], expected: str | None) -> None:
    assert parse_one(doc).cohort == expected


@pytest.mark.parametrize(
    ("doc", "parent"),
    [
        pytest.param(
            cohort(api_version="kueue.x-k8s.io/v1alpha1", parent="root"),
            "root",
            id="v1alpha1 parent",
        ),
        pytest.param(
            cohort(api_version="kueue.x-k8s.io/v1beta2", parentName="root"),
            "root",
            id="v1beta2 parentName",
        ),
        pytest.param(cohort(api_version=BERTH_API_VERSION), None, id="Berth's own group, a root"),
    ],
)
def test_cohort_parent_spellings(doc: dict[str, Any], parent: str | None) -> None:
    value = parse_one(doc)
    assert isinstance(value, Cohort)
    assert value.parent == parent


@pytest.mark.parametrize(
    ("fungibility", "borrow", "preempt"),
    [
        pytest.param(
            {}, WhenCanBorrow.MAY_STOP_SEARCH, WhenCanPreempt.TRY_NEXT_FLAVOR, id="Kueue defaults"
        ),
        pytest.param(
            {"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"},
            WhenCanBorrow.MAY_STOP_SEARCH,
            WhenCanPreempt.MAY_STOP_SEARCH,
            id="v1beta1 Borrow and Preempt mean stop searching",
        ),
        pytest.param(
            {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "MayStopSearch"},
            WhenCanBorrow.TRY_NEXT_FLAVOR,
            WhenCanPreempt.MAY_STOP_SEARCH,
            id="v1beta2 spellings",
        ),
    ],
)
def test_flavor_fungibility_spellings(
    fungibility: dict[str, str], borrow: WhenCanBorrow, preempt: WhenCanPreempt
) -> None:
    value = parse_one(cluster_queue(flavorFungibility=fungibility)).flavor_fungibility
    assert (value.when_can_borrow, value.when_can_preempt) == (borrow, preempt)


@pytest.mark.parametrize(
    ("spec", "selector"),
    [
        pytest.param({"namespaceSelector": None}, None, id="absent selects no namespace"),
        pytest.param({}, LabelSelector(), id="empty selects every namespace"),
        pytest.param(
            {"namespaceSelector": {"matchLabels": {"team": "ml"}}},
            LabelSelector(match_labels={"team": "ml"}),
            id="by label",
        ),
    ],
)
def test_namespace_selector(spec: dict[str, Any], selector: LabelSelector | None) -> None:
    assert parse_one(cluster_queue(**spec)).namespace_selector == selector


def test_fair_sharing_weight_is_a_quantity_in_milli_units() -> None:
    assert parse_one(cluster_queue(fairSharing={"weight": "1500m"})).fair_sharing_weight == 1500
    assert parse_one(cluster_queue()).fair_sharing_weight == 1000


def test_resource_flavor_min_priority_annotation() -> None:
    doc = obj("ResourceFlavor", "h100")
    doc["metadata"]["annotations"] = {"berth.dev/min-priority": " 1000 "}
    flavor = parse_one(doc)
    assert flavor.min_priority == 1000
    assert to_manifest(flavor)["metadata"] == {
        "name": "h100", "annotations": {"berth.dev/min-priority": "1000"}}
    assert parse_one(obj("ResourceFlavor", "h100")).min_priority is None


def test_resource_flavor_taints_tolerations_and_topology() -> None:
    flavor = parse_one(
        obj("ResourceFlavor", "spot", spec={
            "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
            "tolerations": [{"operator": "Exists"}],
            "topologyName": "dc",
        })
    )  # fmt: skip
    assert flavor == ResourceFlavor(
        "spot",
        node_taints=(Taint("spot", "true", "NoSchedule"),),
        tolerations=(Toleration(operator="Exists"),),
        topology_name="dc",
    )


@pytest.mark.parametrize(
    ("status", "allocatable"),
    [
        pytest.param(
            {"capacity": {"nvidia.com/gpu": "8"}},
            {"nvidia.com/gpu": 8000},
            id="allocatable defaults to capacity",
        ),
        pytest.param(
            {"capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": 5}},
            {"nvidia.com/gpu": 5000},
            id="three devices unhealthy",
        ),
    ],
)
def test_node_capacity(status: dict[str, Any], allocatable: dict[str, int]) -> None:
    value = parse_one(node(**status))
    assert isinstance(value, Node)
    assert value.capacity == {"nvidia.com/gpu": 8000}
    assert value.allocatable == allocatable


def test_node_taints_conditions_and_health() -> None:
    doc = node(conditions=[{"type": "Ready", "status": "False", "reason": "KubeletDown"}])
    doc["metadata"]["annotations"] = {"berth.dev/health": "Repairing"}
    doc["spec"] = {"unschedulable": True, "taints": [{"key": "bad", "effect": "NoExecute"}]}
    value = parse_one(doc)
    assert isinstance(value, Node)
    assert (value.ready, value.unschedulable, value.health) == (False, True, NodeHealth.REPAIRING)
    assert value.taints == (Taint("bad", "", "NoExecute"),)


def test_topology_levels_outermost_first() -> None:
    levels = [{"nodeLabel": "block"}, {"nodeLabel": "kubernetes.io/hostname"}]
    doc = obj("Topology", "dc", "kueue.x-k8s.io/v1alpha1", spec={"levels": levels})
    assert parse_one(doc) == Topology("dc", ("block", "kubernetes.io/hostname"))


# --- documents ---------------------------------------------------------------------------------


def test_empty_documents_are_skipped_but_counted() -> None:
    text = "---\n# nothing here\n---\nkind: A\n---\n---\nkind: B\n"
    assert load_documents(text, "f.yaml") == [(1, {"kind": "A"}), (3, {"kind": "B"})]


def test_a_list_expands_into_its_items_under_its_own_index() -> None:
    listed = {"apiVersion": "v1", "kind": "List", "items": [obj("Cohort", "a"), obj("Cohort", "b")]}
    text = yaml.safe_dump_all([obj("Cohort", "first"), listed])
    docs = load_documents(text, "f.yaml")
    assert [(index, doc["metadata"]["name"]) for index, doc in docs] == [  # type: ignore[index]
        (0, "first"), (1, "a"), (1, "b"),
    ]  # fmt: skip


def test_a_list_without_items_is_a_problem() -> None:
    (problem,) = problems_of({"apiVersion": "v1", "kind": "List", "items": {"a": 1}})
    assert (problem.obj, problem.field) == ("List", "items")


def test_json_is_accepted() -> None:
    docs = load_documents(
        '{"apiVersion": "v1", "kind": "Namespace",\n\t"metadata": {"name": "a"}}', "-"
    )
    assert [item.key for item in parse_objects(("-", i, d) for i, d in docs)] == ["Namespace/a"]


@pytest.mark.parametrize(
    ("text", "document", "where"),
    [
        pytest.param(
            "kind: A\n---\nkind: B\nspec: [1\n---\nkind: C\n",
            1,
            "line 5, column 1",
            id="unclosed flow list",
        ),
        pytest.param(
            "kind: A\nmetadata:\n  name: a: b\n",
            0,
            "line 3, column 10",
            id="colon inside a plain value",
        ),
        pytest.param(
            "kind: A\n---\nkind: B\nkind: C\n",
            1,
            "line 4, column 1: duplicate key 'kind'",
            id="key given twice",
        ),
    ],
)
def test_yaml_syntax_error_names_source_document_and_line(
    text: str, document: int, where: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        load_documents(text, "pool.yaml")
    (problem,) = caught.value.problems
    assert (problem.source, problem.document) == ("pool.yaml", document)
    assert where in problem.message


@pytest.mark.parametrize(
    ("word", "kind"),
    [
        pytest.param("ClusterQueue", "ClusterQueue", id="kind name"),
        pytest.param("priorityclasses", "WorkloadPriorityClass", id="plural in URLs"),
        pytest.param("cq", "ClusterQueue", id="short alias"),
        pytest.param("jobs", None, id="not a ledger kind"),
    ],
)
def test_find_kind(word: str, kind: str | None) -> None:
    found = find_kind(word)
    assert (found.name if found else None) == kind


# --- writing back ------------------------------------------------------------------------------


def test_to_manifest_writes_berths_group_with_kubernetes_quantities() -> None:
    value = parse_one(
        cluster_queue(resourceGroups=[group(["memory"], "f", quota("memory", "3Ti"))])
    )
    manifest = to_manifest(value)
    assert manifest["apiVersion"] == BERTH_API_VERSION
    assert manifest["spec"]["resourceGroups"][0]["flavors"][0]["resources"] == [  # type: ignore[index]
        {"name": "memory", "nominalQuota": "3Ti"}
    ]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(model_objects())
def test_round_trip_through_yaml_is_identity(value: Any) -> None:
    text = yaml.safe_dump(to_manifest(value), sort_keys=False)
    (item,) = parse_objects(("rt", i, d) for i, d in load_documents(text, "rt"))
    assert item.obj == value
