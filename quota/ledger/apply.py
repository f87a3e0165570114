"""``berth apply`` and ``POST /api/v1/apply``: validated manifests into the ledger, all or nothing.

The caller owns the transaction: parse everything first (any problem → ``InvalidInput``,
nothing written), then upsert every object in one transaction. References to objects that
do not exist (yet) are allowed, as in Kueue, but reported as warnings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quota.core.errors import Problem
from quota.core.model import ClusterQueue, Cohort, LocalQueue, ResourceFlavor
from quota.ledger.repository import Ledger
from quota.manifests.documents import ManifestObject


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    name: str  # "namespace/name" for namespaced kinds
    action: str  # created | configured | unchanged | deleted


@dataclass(frozen=True, slots=True)
class ApplyResult:
    changes: list[Change] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def apply_objects(ledger: Ledger, objects: list[ManifestObject], *, actor: str) -> ApplyResult:
    """Create or replace every object; report dangling references as warnings."""
    changes = [
        Change(item.kind, _name(item), ledger.upsert(item.obj, actor=actor)) for item in objects
    ]
    return ApplyResult(changes=changes, warnings=dangling_references(ledger, objects))


def dangling_references(ledger: Ledger, objects: list[ManifestObject]) -> list[Problem]:
    """References the ledger cannot resolve after this apply: allowed, but worth saying."""
    warnings = []
    for item in objects:
        for field_path, kind, name, consequence in _references(item.obj):
            if ledger.get(kind, name) is None:
                warnings.append(
                    Problem(
                        f"{kind} {name!r} does not exist; {consequence}",
                        source=item.source,
                        document=item.document,
                        obj=f"{item.kind}/{_name(item)}",
                        field=field_path,
                    )
                )
    return warnings


def _references(obj: object) -> list[tuple[str, str, str, str]]:
    if isinstance(obj, LocalQueue):
        return [
            (
                "spec.clusterQueue",
                "ClusterQueue",
                obj.cluster_queue,
                "workloads submitted to this LocalQueue wait with Misconfigured until it exists",
            )
        ]
    refs: list[tuple[str, str, str, str]] = []
    if isinstance(obj, ClusterQueue | Cohort):
        for g, group in enumerate(obj.resource_groups):
            for f, flavor in enumerate(group.flavors):
                refs.append(
                    (
                        f"spec.resourceGroups[{g}].flavors[{f}].name",
                        "ResourceFlavor",
                        flavor.flavor,
                        "the queue stays inactive (Misconfigured) until it exists",
                    )
                )
    if isinstance(obj, Cohort) and obj.parent:
        refs.append(("spec.parentName", "Cohort", obj.parent, "its quota is not shared upward"))
    if isinstance(obj, ResourceFlavor) and obj.topology_name:
        refs.append(
            (
                "spec.topologyName",
                "Topology",
                obj.topology_name,
                "topology-aware workloads cannot be placed in this flavor until it exists",
            )
        )
    return refs


def _name(item: ManifestObject) -> str:
    obj = item.obj
    if isinstance(obj, LocalQueue):
        return obj.key
    return str(getattr(obj, "name", ""))
