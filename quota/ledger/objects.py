"""How each object kind maps to its table row, and how quota (resource groups) is stored.

Row dictionaries hold exactly the stored column values (JSON-able, quantities as ints); the
same dictionary is written to the table and, with its version, to the audit log.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, delete, insert, select
from sqlalchemy.orm import Session

from quota.core.checks import (
    AdmissionCheck,
    ParametersRef,
    ProvisioningRequestConfig,
    RetryStrategy,
)
from quota.core.metering import from_prices_json, prices_json
from quota.core.model import (
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    LocalQueue,
    Namespace,
    Node,
    NodeHealth,
    PriorityClass,
    QueueingStrategy,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    StopPolicy,
    Topology,
)
from quota.ledger import codec
from quota.ledger.schema import (
    AdmissionCheckRow,
    Base,
    ClusterQueueRow,
    CohortRow,
    LocalQueueRow,
    NamespaceRow,
    NodeRow,
    PriorityClassRow,
    ProvisioningRequestConfigRow,
    QuotaRow,
    ResourceFlavorRow,
    ResourceGroupRow,
    TopologyRow,
)
from quota.manifests.checks import provisioning_config_spec
from quota.manifests.kinds import Model

# The ledger stores what manifests describe: one list of kinds, kept by quota.manifests.
LedgerObject = Model
Row = dict[str, Any]
Groups = tuple[ResourceGroup, ...]


def table_of(row_class: type[Base]) -> Table:
    return Base.metadata.tables[row_class.__tablename__]


@dataclass(frozen=True, slots=True)
class KindSpec:
    """One object kind: its table, key columns and row mapping."""

    kind: str
    model: type[Any]
    table: Table
    to_row: Callable[[Any], Row]
    from_row: Callable[[Mapping[Any, Any], Groups], Any]
    namespaced: bool = False
    has_groups: bool = False  # quota lives in resource_groups/quotas, owned by this object

    @property
    def key_columns(self) -> tuple[str, ...]:
        return ("namespace", "name") if self.namespaced else ("name",)


def _flavor_row(flavor: ResourceFlavor) -> Row:
    return {
        "name": flavor.name,
        "node_labels": dict(flavor.node_labels),
        "node_taints": [codec.taint_json(t) for t in flavor.node_taints],
        "tolerations": [codec.toleration_json(t) for t in flavor.tolerations],
        "topology_name": flavor.topology_name,
        "prices": prices_json(flavor.prices),
        "min_priority": flavor.min_priority,
    }


def _flavor(row: Mapping[Any, Any], _: Groups) -> ResourceFlavor:
    return ResourceFlavor(
        name=row["name"],
        node_labels=dict(row["node_labels"]),
        node_taints=tuple(codec.from_taint(t) for t in row["node_taints"]),
        tolerations=tuple(codec.from_toleration(t) for t in row["tolerations"]),
        topology_name=row["topology_name"],
        prices=from_prices_json(row["prices"]),
        min_priority=row["min_priority"],
    )


def _cohort_row(cohort: Cohort) -> Row:
    return {
        "name": cohort.name,
        "parent": cohort.parent,
        "fair_sharing_weight": cohort.fair_sharing_weight,
    }


def _cohort(row: Mapping[Any, Any], groups: Groups) -> Cohort:
    return Cohort(
        name=row["name"],
        parent=row["parent"],
        resource_groups=groups,
        fair_sharing_weight=row["fair_sharing_weight"],
    )


def _queue_row(queue: ClusterQueue) -> Row:
    return {
        "name": queue.name,
        "cohort": queue.cohort,
        "queueing_strategy": str(queue.queueing_strategy),
        "preemption": codec.preemption_json(queue.preemption),
        "flavor_fungibility": codec.fungibility_json(queue.flavor_fungibility),
        "stop_policy": str(queue.stop_policy),
        "namespace_selector": codec.selector_json(queue.namespace_selector),
        "fair_sharing_weight": queue.fair_sharing_weight,
        "admission_checks": codec.check_rules_json(queue.admission_checks),
    }


def _queue(row: Mapping[Any, Any], groups: Groups) -> ClusterQueue:
    return ClusterQueue(
        name=row["name"],
        resource_groups=groups,
        cohort=row["cohort"],
        namespace_selector=codec.from_selector(row["namespace_selector"]),
        queueing_strategy=QueueingStrategy(row["queueing_strategy"]),
        preemption=codec.from_preemption(row["preemption"]),
        flavor_fungibility=codec.from_fungibility(row["flavor_fungibility"]),
        stop_policy=StopPolicy(row["stop_policy"]),
        fair_sharing_weight=row["fair_sharing_weight"],
        admission_checks=codec.from_check_rules(row["admission_checks"]),
    )


def _local_queue_row(queue: LocalQueue) -> Row:
    return {
        "namespace": queue.namespace,
        "name": queue.name,
        "cluster_queue": queue.cluster_queue,
        "stop_policy": str(queue.stop_policy),
    }


def _local_queue(row: Mapping[Any, Any], _: Groups) -> LocalQueue:
    return LocalQueue(
        namespace=row["namespace"],
        name=row["name"],
        cluster_queue=row["cluster_queue"],
        stop_policy=StopPolicy(row["stop_policy"]),
    )


def _priority_row(priority: PriorityClass) -> Row:
    return {"name": priority.name, "value": priority.value, "description": priority.description}


def _priority(row: Mapping[Any, Any], _: Groups) -> PriorityClass:
    return PriorityClass(name=row["name"], value=row["value"], description=row["description"])


def _namespace_row(namespace: Namespace) -> Row:
    return {"name": namespace.name, "labels": dict(namespace.labels)}


def _namespace(row: Mapping[Any, Any], _: Groups) -> Namespace:
    return Namespace(name=row["name"], labels=dict(row["labels"]))


def _topology_row(topology: Topology) -> Row:
    return {"name": topology.name, "levels": list(topology.levels)}


def _topology(row: Mapping[Any, Any], _: Groups) -> Topology:
    return Topology(name=row["name"], levels=tuple(row["levels"]))


def _node_row(node: Node) -> Row:
    return {
        "name": node.name,
        "labels": dict(node.labels),
        "taints": [codec.taint_json(t) for t in node.taints],
        "capacity": codec.int_map(node.capacity),
        "allocatable": codec.int_map(node.allocatable),
        "unschedulable": node.unschedulable,
        "conditions": [codec.condition_json(c) for c in node.conditions],
        "health": str(node.health),
    }


def _node(row: Mapping[Any, Any], _: Groups) -> Node:
    return Node(
        name=row["name"],
        labels=dict(row["labels"]),
        taints=tuple(codec.from_taint(t) for t in row["taints"]),
        capacity=dict(row["capacity"]),
        allocatable=dict(row["allocatable"]),
        unschedulable=row["unschedulable"],
        conditions=tuple(codec.from_condition(c) for c in row["conditions"]),
        health=NodeHealth(row["health"]),
    )


def _check_row(check: AdmissionCheck) -> Row:
    ref = check.parameters
    parameters = None if ref is None else {"apiGroup": ref.api_group, "kind": ref.kind,
                                           "name": ref.name}
    return {"name": check.name, "controller_name": check.controller_name,
            "parameters": parameters}


def _check(row: Mapping[Any, Any], _: Groups) -> AdmissionCheck:
    ref = row["parameters"]
    parameters = None if ref is None else ParametersRef(ref["apiGroup"], ref["kind"], ref["name"])
    return AdmissionCheck(row["name"], row["controller_name"], parameters)


def _config_row(config: ProvisioningRequestConfig) -> Row:
    return {"name": config.name, "spec": provisioning_config_spec(config)}


def _config(row: Mapping[Any, Any], _: Groups) -> ProvisioningRequestConfig:
    spec = row["spec"]
    retry = spec["retryStrategy"]
    return ProvisioningRequestConfig(
        name=row["name"],
        provisioning_class_name=spec["provisioningClassName"],
        parameters=dict(spec.get("parameters", {})),
        managed_resources=tuple(spec.get("managedResources", ())),
        retry_strategy=RetryStrategy(retry["backoffLimitCount"], retry["backoffBaseSeconds"],
                                     retry["backoffMaxSeconds"]),
        pod_set_merge_policy=spec.get("podSetMergePolicy"),
    )


KINDS: dict[str, KindSpec] = {
    spec.kind: spec
    for spec in (
        KindSpec(
            "ResourceFlavor", ResourceFlavor, table_of(ResourceFlavorRow), _flavor_row, _flavor
        ),
        KindSpec(
            "ClusterQueue",
            ClusterQueue,
            table_of(ClusterQueueRow),
            _queue_row,
            _queue,
            has_groups=True,
        ),
        KindSpec("Cohort", Cohort, table_of(CohortRow), _cohort_row, _cohort, has_groups=True),
        KindSpec(
            "LocalQueue",
            LocalQueue,
            table_of(LocalQueueRow),
            _local_queue_row,
            _local_queue,
            namespaced=True,
        ),
        KindSpec(
            "WorkloadPriorityClass",
            PriorityClass,
            table_of(PriorityClassRow),
            _priority_row,
            _priority,
        ),
        KindSpec("Namespace", Namespace, table_of(NamespaceRow), _namespace_row, _namespace),
        KindSpec("Topology", Topology, table_of(TopologyRow), _topology_row, _topology),
        KindSpec("Node", Node, table_of(NodeRow), _node_row, _node),
        KindSpec("AdmissionCheck", AdmissionCheck, table_of(AdmissionCheckRow), _check_row,
                 _check),
        KindSpec("ProvisioningRequestConfig", ProvisioningRequestConfig,
                 table_of(ProvisioningRequestConfigRow), _config_row, _config),
    )
}
_BY_MODEL = {spec.model: spec for spec in KINDS.values()}


def spec_of(obj: object) -> KindSpec | None:
    """The kind of a model object, or ``None`` when the ledger does not store its type."""
    return _BY_MODEL.get(type(obj))


_GROUPS = table_of(ResourceGroupRow)
_QUOTAS = table_of(QuotaRow)


def groups_json(groups: Groups) -> list[Row]:
    """Resource groups as stored, for the audit log."""
    return [
        {
            "covered_resources": list(group.covered_resources),
            "flavors": [
                {
                    "flavor": flavor.flavor,
                    "resources": [
                        {
                            "resource": quota.resource,
                            "nominal": quota.nominal,
                            "borrowing_limit": quota.borrowing_limit,
                            "lending_limit": quota.lending_limit,
                        }
                        for quota in flavor.resources
                    ],
                }
                for flavor in group.flavors
            ],
        }
        for group in groups
    ]


def write_groups(session: Session, owner_kind: str, owner_name: str, groups: Groups) -> None:
    """Replace the owner's resource groups and quotas, keeping every position."""
    delete_groups(session, owner_kind, owner_name)
    if not groups:
        return
    owner = {"owner_kind": owner_kind, "owner_name": owner_name}
    session.execute(
        insert(_GROUPS),
        [
            {**owner, "position": g, "covered_resources": list(group.covered_resources)}
            for g, group in enumerate(groups)
        ],
    )
    quotas = [
        {
            **owner,
            "group_position": g,
            "flavor_position": f,
            "resource_position": r,
            "flavor": flavor.flavor,
            "resource": quota.resource,
            "nominal": quota.nominal,
            "borrowing_limit": quota.borrowing_limit,
            "lending_limit": quota.lending_limit,
        }
        for g, group in enumerate(groups)
        for f, flavor in enumerate(group.flavors)
        for r, quota in enumerate(flavor.resources)
    ]
    if quotas:
        session.execute(insert(_QUOTAS), quotas)


def delete_groups(session: Session, owner_kind: str, owner_name: str) -> None:
    # Quotas go with their group (ON DELETE CASCADE).
    session.execute(
        delete(_GROUPS).where(
            _GROUPS.c.owner_kind == owner_kind, _GROUPS.c.owner_name == owner_name
        )
    )


def read_groups(
    session: Session, owner_kind: str, names: Sequence[str] | None = None
) -> dict[str, Groups]:
    """Resource groups per owner name (every owner of the kind when ``names`` is None)."""
    group_query = select(_GROUPS).where(_GROUPS.c.owner_kind == owner_kind)
    quota_query = select(_QUOTAS).where(_QUOTAS.c.owner_kind == owner_kind)
    if names is not None:
        group_query = group_query.where(_GROUPS.c.owner_name.in_(names))
        quota_query = quota_query.where(_QUOTAS.c.owner_name.in_(names))
    group_rows = session.execute(
        group_query.order_by(_GROUPS.c.owner_name, _GROUPS.c.position)
    ).mappings()
    quota_rows = session.execute(
        quota_query.order_by(
            _QUOTAS.c.owner_name,
            _QUOTAS.c.group_position,
            _QUOTAS.c.flavor_position,
            _QUOTAS.c.resource_position,
        )
    ).mappings()
    # owner -> group position -> flavor position -> (flavor, quotas in order)
    flavors: dict[str, dict[int, dict[int, tuple[str, list[ResourceQuota]]]]] = {}
    for q in quota_rows:
        by_flavor = flavors.setdefault(q["owner_name"], {}).setdefault(q["group_position"], {})
        _, quotas = by_flavor.setdefault(q["flavor_position"], (q["flavor"], []))
        quotas.append(
            ResourceQuota(
                resource=q["resource"],
                nominal=q["nominal"],
                borrowing_limit=q["borrowing_limit"],
                lending_limit=q["lending_limit"],
            )
        )
    result: dict[str, list[ResourceGroup]] = {}
    for g in group_rows:
        group_flavors = flavors.get(g["owner_name"], {}).get(g["position"], {})
        result.setdefault(g["owner_name"], []).append(
            ResourceGroup(
                covered_resources=tuple(g["covered_resources"]),
                flavors=tuple(
                    FlavorQuotas(flavor=name, resources=tuple(quotas))
                    for _, (name, quotas) in sorted(group_flavors.items())
                ),
            )
        )
    return {owner: tuple(groups) for owner, groups in result.items()}
