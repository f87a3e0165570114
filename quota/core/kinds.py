"""The object kinds of the ledger and the names users may call them by (PURE)."""

from __future__ import annotations

from dataclasses import dataclass

from quota.core.errors import NotFound


@dataclass(frozen=True, slots=True)
class Kind:
    name: str  # the manifest kind, e.g. "ClusterQueue"
    plural: str  # the REST path segment and `berth get` name, e.g. "clusterqueues"
    namespaced: bool = False


KINDS = (
    Kind("ResourceFlavor", "resourceflavors"),
    Kind("ClusterQueue", "clusterqueues"),
    Kind("Cohort", "cohorts"),
    Kind("LocalQueue", "localqueues", namespaced=True),
    Kind("WorkloadPriorityClass", "priorityclasses"),
    Kind("Namespace", "namespaces"),
    Kind("Topology", "topologies"),
    Kind("Node", "nodes"),
    Kind("AdmissionCheck", "admissionchecks"),
    Kind("ProvisioningRequestConfig", "provisioningrequestconfigs"),
)

_ALIASES = {
    "rf": "ResourceFlavor",
    "flavor": "ResourceFlavor",
    "flavors": "ResourceFlavor",
    "cq": "ClusterQueue",
    "lq": "LocalQueue",
    "queue": "LocalQueue",
    "queues": "LocalQueue",
    "wpc": "WorkloadPriorityClass",
    "workloadpriorityclasses": "WorkloadPriorityClass",
    "priorityclass": "WorkloadPriorityClass",
    "ns": "Namespace",
    "no": "Node",
    "ac": "AdmissionCheck",
    "checks": "AdmissionCheck",
    "prc": "ProvisioningRequestConfig",
}


def resolve_kind(text: str) -> Kind:
    """Find a kind by manifest name, plural, singular or short alias (case-insensitive)."""
    wanted = text.lower()
    wanted = _ALIASES.get(wanted, wanted).lower()
    for kind in KINDS:
        if wanted in (kind.name.lower(), kind.plural, kind.plural.removesuffix("s")):
            return kind
        if kind.plural.endswith("ies") and wanted == kind.plural[:-3] + "y":
            return kind
    choices = ", ".join(kind.plural for kind in KINDS)
    raise NotFound(f"unknown kind {text!r}; expected one of: {choices}", field="kind")
