"""The ledger's values written back as manifests in Berth's own API group (edge).

The shape is Kueue v1beta1's, so ``parse_objects`` reads the output back to an equal value
and Kueue users recognise it. Every setting is written out, defaults included, so what
``berth get -o yaml`` shows is what Berth enforces.
"""

from __future__ import annotations

from collections.abc import Mapping

from quota.core.checks import AdmissionCheck, ProvisioningRequestConfig
from quota.core.metering import PRICE_ANNOTATION, format_prices
from quota.core.model import (
    ClusterQueue,
    Cohort,
    LocalQueue,
    Namespace,
    Node,
    NodeHealth,
    PriorityClass,
    ResourceFlavor,
    ResourceGroup,
    Topology,
)
from quota.core.quantity import format_quantity, format_resources
from quota.manifests.checks import (
    admission_check_spec,
    check_rules_manifest,
    provisioning_config_spec,
)
from quota.manifests.kinds import HEALTH_ANNOTATION, MIN_PRIORITY_ANNOTATION, Model
from quota.manifests.shapes import label_selector_manifest, taint_manifest, toleration_manifest

BERTH_API_VERSION = "berth.dev/v1beta1"


def to_manifest(obj: Model) -> dict[str, object]:
    """A model value as a manifest dict (``berth.dev/v1beta1``, or ``v1`` for core kinds)."""
    if isinstance(obj, ResourceFlavor):
        notes = {PRICE_ANNOTATION: format_prices(obj.prices)} if obj.prices else {}
        if obj.min_priority is not None:
            notes[MIN_PRIORITY_ANNOTATION] = str(obj.min_priority)
        header = _header("ResourceFlavor", obj.name, annotations=notes)
        return header | {"spec": _flavor_spec(obj)}
    if isinstance(obj, ClusterQueue):
        return _header("ClusterQueue", obj.name) | {"spec": _cluster_queue_spec(obj)}
    if isinstance(obj, Cohort):
        spec: dict[str, object] = {}
        if obj.parent is not None:
            spec["parent"] = obj.parent
        spec["fairSharing"] = {"weight": format_quantity(obj.fair_sharing_weight)}
        spec["resourceGroups"] = _resource_groups(obj.resource_groups)
        return _header("Cohort", obj.name) | {"spec": spec}
    if isinstance(obj, LocalQueue):
        out = _header("LocalQueue", obj.name)
        out["metadata"] = {"name": obj.name, "namespace": obj.namespace}
        out["spec"] = {"clusterQueue": obj.cluster_queue, "stopPolicy": obj.stop_policy.value}
        return out
    if isinstance(obj, PriorityClass):
        out = _header("WorkloadPriorityClass", obj.name) | {"value": obj.value}
        if obj.description:
            out["description"] = obj.description
        return out
    if isinstance(obj, Topology):
        levels = [{"nodeLabel": level} for level in obj.levels]
        return _header("Topology", obj.name) | {"spec": {"levels": levels}}
    if isinstance(obj, Namespace):
        return _header("Namespace", obj.name, core=True, labels=obj.labels)
    if isinstance(obj, AdmissionCheck):
        return _header("AdmissionCheck", obj.name) | {"spec": admission_check_spec(obj)}
    if isinstance(obj, ProvisioningRequestConfig):
        spec = provisioning_config_spec(obj)
        return _header("ProvisioningRequestConfig", obj.name) | {"spec": spec}
    return _node(obj)


def _header(
    kind: str,
    name: str,
    *,
    core: bool = False,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, object]:
    metadata: dict[str, object] = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    api_version = "v1" if core else BERTH_API_VERSION
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


def _flavor_spec(flavor: ResourceFlavor) -> dict[str, object]:
    spec: dict[str, object] = {}
    if flavor.node_labels:
        spec["nodeLabels"] = dict(flavor.node_labels)
    if flavor.node_taints:
        spec["nodeTaints"] = [taint_manifest(t) for t in flavor.node_taints]
    if flavor.tolerations:
        spec["tolerations"] = [toleration_manifest(t) for t in flavor.tolerations]
    if flavor.topology_name is not None:
        spec["topologyName"] = flavor.topology_name
    return spec


def _cluster_queue_spec(queue: ClusterQueue) -> dict[str, object]:
    spec: dict[str, object] = {}
    if queue.cohort is not None:
        spec["cohort"] = queue.cohort
    if queue.namespace_selector is not None:
        spec["namespaceSelector"] = label_selector_manifest(queue.namespace_selector)
    preemption = queue.preemption
    borrow: dict[str, object] = {"policy": preemption.borrow_within_cohort.policy.value}
    if preemption.borrow_within_cohort.max_priority_threshold is not None:
        borrow["maxPriorityThreshold"] = preemption.borrow_within_cohort.max_priority_threshold
    spec |= {
        "queueingStrategy": queue.queueing_strategy.value,
        "preemption": {
            "withinClusterQueue": preemption.within_cluster_queue.value,
            "reclaimWithinCohort": preemption.reclaim_within_cohort.value,
            "borrowWithinCohort": borrow,
        },
        "flavorFungibility": {
            "whenCanBorrow": queue.flavor_fungibility.when_can_borrow.value,
            "whenCanPreempt": queue.flavor_fungibility.when_can_preempt.value,
        },
        "stopPolicy": queue.stop_policy.value,
        "fairSharing": {"weight": format_quantity(queue.fair_sharing_weight)},
    }
    spec |= check_rules_manifest(queue.admission_checks)
    spec["resourceGroups"] = _resource_groups(queue.resource_groups)
    return spec


def _resource_groups(groups: tuple[ResourceGroup, ...]) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for group in groups:
        flavors: list[dict[str, object]] = []
        for flavor in group.flavors:
            resources: list[dict[str, object]] = []
            for quota in flavor.resources:
                entry: dict[str, object] = {
                    "name": quota.resource,
                    "nominalQuota": format_quantity(quota.nominal, quota.resource),
                }
                if quota.borrowing_limit is not None:
                    entry["borrowingLimit"] = format_quantity(quota.borrowing_limit, quota.resource)
                if quota.lending_limit is not None:
                    entry["lendingLimit"] = format_quantity(quota.lending_limit, quota.resource)
                resources.append(entry)
            flavors.append({"name": flavor.flavor, "resources": resources})
        out.append({"coveredResources": list(group.covered_resources), "flavors": flavors})
    return out


def _node(node: Node) -> dict[str, object]:
    # Health is Berth's own judgement of a node, so it travels as Berth's annotation.
    health = {} if node.health == NodeHealth.HEALTHY else {HEALTH_ANNOTATION: node.health.value}
    out = _header("Node", node.name, core=True, labels=node.labels, annotations=health)
    spec: dict[str, object] = {}
    if node.taints:
        spec["taints"] = [taint_manifest(t) for t in node.taints]
    if node.unschedulable:
        spec["unschedulable"] = True
    status: dict[str, object] = {
        "capacity": format_resources(dict(node.capacity)),
        "allocatable": format_resources(dict(node.allocatable)),
    }
    if node.conditions:
        status["conditions"] = [
            {"type": c.type, "status": c.status}
            | ({"reason": c.reason} if c.reason else {})
            | ({"message": c.message} if c.message else {})
            for c in node.conditions
        ]
    return out | {"spec": spec, "status": status}
