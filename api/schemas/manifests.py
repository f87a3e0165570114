"""The manifest shapes of ``POST /api/v1/apply`` and ``POST /api/v1/workloads`` as JSON Schema,
and the response models of the routes that take or give manifests.

The bodies are read by ``quota.manifests`` and ``quota.jobs``, not by pydantic, so their
schemas are written here from the readers' own constants (accepted apiVersions and kinds,
name patterns, known keys). The rule for every keyword below: it states something the
reader refuses, so a body that breaks the schema is always refused (422). What the readers
check across fields (resource groups against flavors, quantities against each other, one
pod set name twice, annotations over 256 KiB) JSON Schema cannot say; a body can match the
schema and still be refused with a 422 naming the field, as the operations' descriptions say.
A field set to null counts as absent, as Kubernetes reads it; optional fields allow it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from api.schemas.base import Schema
from api.schemas.errors import ProblemOut
from quota.core.checks import CheckState
from quota.core.model import QueueingStrategy, StopPolicy
from quota.core.quantity import QUANTITY_PATTERN
from quota.core.workload import QUEUE_NAME_LABEL, WorkloadState
from quota.manifests.checks import MERGE_POLICIES
from quota.manifests.documents import API_VERSIONS
from quota.manifests.frameworks import READERS
from quota.manifests.jobs import JOB_API_VERSION, MAX_POD_SETS, WORKLOAD_API_VERSIONS
from quota.manifests.kinds import INT32
from quota.manifests.reader import LABEL_PATTERN, QUALIFIED_PATTERN, SUBDOMAIN_PATTERN

JsonSchema = dict[str, Any]
NO_NUL = r"^[^\x00]*$"  # PostgreSQL cannot store NUL: every reader refuses it
_REF = "#/components/schemas/"


def ref(name: str) -> JsonSchema:
    return {"$ref": _REF + name}


def _nullable(schema: JsonSchema) -> JsonSchema:
    types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
    return {**schema, "type": [*types, "null"]}


NAME: JsonSchema = {"type": "string", "maxLength": 253, "pattern": SUBDOMAIN_PATTERN}
LABEL: JsonSchema = {"type": "string", "maxLength": 63, "pattern": LABEL_PATTERN}
# An optional reference may be "" (the same as absent).
_MAYBE_NAME: JsonSchema = _nullable({**NAME, "pattern": f"^$|{SUBDOMAIN_PATTERN}"})
_MAYBE_LABEL: JsonSchema = _nullable({**LABEL, "pattern": f"^$|{LABEL_PATTERN}"})
# An optional prefix of at most 253 and a name of at most 63 characters.
QUALIFIED: JsonSchema = {"type": "string", "maxLength": 317, "pattern": QUALIFIED_PATTERN}
TEXT: JsonSchema = {"type": "string", "pattern": NO_NUL}
_INT32: JsonSchema = {"type": "integer", "minimum": INT32[0], "maximum": INT32[1]}
_COUNT: JsonSchema = _nullable({"type": "integer", "minimum": 1, "maximum": INT32[1]})
_OBJECT: JsonSchema = {"type": ["object", "null"]}
_LIST: JsonSchema = {"type": ["array", "null"]}
QUANTITY: JsonSchema = {
    "description": 'a Kubernetes quantity: "4", "500m", "16Gi", or a number',
    "anyOf": [{"type": "number", "minimum": 0},
              {"type": "string", "pattern": QUANTITY_PATTERN}],
}
STRING_MAP: JsonSchema = {
    "type": ["object", "null"],
    "propertyNames": {"pattern": NO_NUL},
    "additionalProperties": TEXT,
}
LABELS: JsonSchema = {**STRING_MAP, "propertyNames": QUALIFIED}
QUANTITIES: JsonSchema = {
    "type": ["object", "null"],
    "propertyNames": QUALIFIED,
    "additionalProperties": QUANTITY,
}


def _enum(values: Iterable[str]) -> JsonSchema:
    return {"type": ["string", "null"], "enum": [*values, None]}


def _known(properties: Mapping[str, JsonSchema], *, required: Iterable[str] = ()) -> JsonSchema:
    """A mapping whose keys the reader knows all of: any other key is refused."""
    schema: JsonSchema = {"type": "object", "properties": dict(properties),
                          "additionalProperties": False}  # fmt: skip
    if required := list(required):
        schema["required"] = required
    return schema


def _metadata(namespace: JsonSchema | None = None, *, required: Iterable[str] = ()) -> JsonSchema:
    """An object's metadata: ``namespace`` only where the reader reads one."""
    properties: dict[str, JsonSchema] = {"name": NAME, "labels": LABELS, "annotations": STRING_MAP}
    if namespace is not None:
        properties["namespace"] = namespace
    return {"type": "object", "required": ["name", *required], "properties": properties}


def _object(
    kind: str, api_versions: Iterable[str], *, properties: Mapping[str, JsonSchema] = {},
    required: Iterable[str] = (), namespaced: bool = False,
) -> JsonSchema:  # fmt: skip
    return {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", *required],
        "properties": {
            "apiVersion": {"type": "string", "enum": sorted(api_versions)},
            "kind": {"type": "string", "const": kind},
            "metadata": _metadata(LABEL, required=["namespace"]) if namespaced else _metadata(),
            **properties,
        },
    }


def _versions_of(kind: str) -> list[str]:
    return [version for version, kinds in API_VERSIONS.items() if kind in kinds]


_NULLABLE_SPEC = {"spec": _OBJECT}
_QUOTA_OBJECTS: dict[str, JsonSchema] = {
    "ResourceFlavor": {
        "spec": _nullable(_known({
            "nodeLabels": LABELS, "nodeTaints": _LIST, "tolerations": _LIST,
            "topologyName": _MAYBE_NAME,
        })),
    },
    "ClusterQueue": {
        "spec": _nullable(_known({
            "resourceGroups": _LIST, "cohort": _MAYBE_NAME, "cohortName": _MAYBE_NAME,
            "queueingStrategy": _enum(QueueingStrategy), "namespaceSelector": _OBJECT,
            "flavorFungibility": _OBJECT, "preemption": _OBJECT,
            "admissionChecks": {"type": ["array", "null"], "items": NAME, "uniqueItems": True},
            "admissionChecksStrategy": _nullable(_known({"admissionChecks": {
                "type": ["array", "null"],
                "items": _known({"name": NAME, "onFlavors": {"type": ["array", "null"],
                                                             "items": NAME}},
                                required=["name"])}})),
            "stopPolicy": _enum(StopPolicy), "fairSharing": _OBJECT,
        })),
    },
    "Cohort": {
        "spec": _nullable(_known({
            "parent": _MAYBE_NAME, "parentName": _MAYBE_NAME, "resourceGroups": _LIST,
            "fairSharing": _OBJECT,
        })),
    },
    "LocalQueue": {
        "spec": _known({"clusterQueue": NAME, "stopPolicy": _enum(StopPolicy)},
                       required=["clusterQueue"]),
    },
    "WorkloadPriorityClass": {"value": _INT32, "description": _nullable(TEXT)},
    "Topology": {
        "spec": _known({
            "levels": {"type": "array", "minItems": 1, "uniqueItems": True,
                       "items": _known({"nodeLabel": QUALIFIED}, required=["nodeLabel"])},
        }, required=["levels"]),
    },
    "Namespace": {},
    "Node": {"spec": _OBJECT, "status": _OBJECT},
    "AdmissionCheck": {
        "spec": _known({
            "controllerName": {"type": "string", "minLength": 1, "maxLength": 253},
            "parameters": _nullable(_known({"apiGroup": TEXT, "kind": TEXT, "name": NAME},
                                           required=["apiGroup", "kind", "name"])),
            "retryDelayMinutes": _nullable({"type": "integer", "minimum": 0}),
        }, required=["controllerName"]),
    },
    "ProvisioningRequestConfig": {
        "spec": _known({
            "provisioningClassName": NAME, "parameters": STRING_MAP,
            "managedResources": {"type": ["array", "null"], "items": QUALIFIED},
            "retryStrategy": _nullable(_known({
                key: _nullable({"type": "integer", "minimum": 0, "maximum": 2**31 - 1})
                for key in ("backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds")})),
            "podSetMergePolicy": _nullable({"type": "string", "enum": list(MERGE_POLICIES)}),
        }, required=["provisioningClassName"]),
    },
}  # fmt: skip
_REQUIRED = {"LocalQueue": ["spec"], "WorkloadPriorityClass": ["value"], "Topology": ["spec"],
             "AdmissionCheck": ["spec"], "ProvisioningRequestConfig": ["spec"]}


def _pod_set_template() -> JsonSchema:
    pod = {
        "type": "object",
        "required": ["containers"],
        "properties": {
            "containers": {"type": "array", "minItems": 1, "items": ref("Container")},
            "initContainers": {"type": ["array", "null"], "items": ref("Container")},
            "nodeSelector": LABELS,
            "overhead": QUANTITIES,
        },
    }
    return {
        "type": "object",
        "required": ["spec"],
        "properties": {"metadata": _nullable({"type": "object", "properties": {
            "annotations": STRING_MAP}}), "spec": pod},
    }  # fmt: skip


_WORKLOAD_METADATA = _metadata(_MAYBE_LABEL)
COMPONENTS: dict[str, JsonSchema] = {
    **{
        kind: _object(kind, _versions_of(kind), properties=properties,
                      required=_REQUIRED.get(kind, ()), namespaced=kind == "LocalQueue")
        for kind, properties in _QUOTA_OBJECTS.items()
    },
    "QuotaObject": {
        "description": "a Kueue quota object, a Namespace or a Node (the shapes of "
        "berth apply); its metadata.name a DNS-1123 subdomain",
        "anyOf": [ref(kind) for kind in _QUOTA_OBJECTS],
    },
    "ObjectList": {
        "type": "object",
        "required": ["kind", "items"],
        "properties": {
            "kind": {"type": "string", "const": "List"},
            "items": {"type": "array", "items": ref("QuotaObject")},
        },
    },
    "ApplyBody": {
        "description": "one object, a kind: List of them, or a list of them (in YAML also "
        "several documents separated by ---); at least one object in all",
        "anyOf": [
            ref("QuotaObject"),
            {"allOf": [ref("ObjectList"), {"properties": {"items": {"minItems": 1}}}]},
            {"type": "array", "minItems": 1, "items": ref("QuotaObject")},
        ],
    },
    "Container": {
        "type": "object",
        "properties": {
            "resources": _nullable({"type": "object", "properties": {
                "requests": QUANTITIES, "limits": QUANTITIES}}),
        },
    },
    "Job": {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"type": "string", "const": JOB_API_VERSION},
            "kind": {"type": "string", "const": "Job"},
            "metadata": {
                **_WORKLOAD_METADATA,
                "required": ["name", "labels"],
                "properties": {
                    **_WORKLOAD_METADATA["properties"],
                    "labels": {**LABELS, "type": "object", "required": [QUEUE_NAME_LABEL],
                               "properties": {QUEUE_NAME_LABEL: NAME}},
                },
            },
            "spec": {
                "type": "object",
                "required": ["template"],
                "properties": {"parallelism": _COUNT, "completions": _COUNT,
                               "template": _pod_set_template()},
            },
        },
    },
    "Workload": {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"type": "string", "enum": list(WORKLOAD_API_VERSIONS)},
            "kind": {"type": "string", "const": "Workload"},
            "metadata": _WORKLOAD_METADATA,
            "spec": {
                "type": "object",
                "required": ["queueName", "podSets"],
                "properties": {
                    "queueName": NAME,
                    "priorityClassName": _MAYBE_NAME,
                    "priority": _nullable(_INT32),
                    "active": {"type": ["boolean", "null"]},
                    "podSets": {
                        "type": "array", "minItems": 1, "maxItems": MAX_POD_SETS,
                        "items": {
                            "type": "object",
                            "required": ["template"],
                            "properties": {"name": _MAYBE_LABEL, "count": _COUNT,
                                           "minCount": _COUNT, "template": _pod_set_template()},
                        },
                    },
                },
            },
        },
    },
    "FrameworkWorkload": {
        "description": "a JobSet, Kubeflow training job (PyTorchJob, TFJob, XGBoostJob, "
        "PaddleJob, JAXJob, MPIJob), RayJob or RayCluster: a pod set per replicatedJob, "
        "replica type or head/worker group, read as Berth's Kubernetes adapters read it",
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "properties": {
            "apiVersion": {"type": "string", "enum": sorted(
                {v for v, k in READERS if (v, k) != (JOB_API_VERSION, "Job")})},
            "kind": {"type": "string", "enum": sorted(
                k for v, k in READERS if (v, k) != (JOB_API_VERSION, "Job"))},
            "metadata": {
                **_WORKLOAD_METADATA,
                "required": ["name", "labels"],
                "properties": {
                    **_WORKLOAD_METADATA["properties"],
                    "labels": {**LABELS, "type": "object", "required": [QUEUE_NAME_LABEL],
                               "properties": {QUEUE_NAME_LABEL: NAME}},
                },
            },
            "spec": {"type": "object"},
        },
    },
    "WorkloadManifest": {
        "description": "a batch/v1 Job (one pod set, main), a framework's workload object "
        "or a Kueue Workload",
        "anyOf": [ref("Job"), ref("FrameworkWorkload"), ref("Workload")],
    },
}  # fmt: skip


def manifest_body(schema: str, description: str) -> dict[str, Any]:
    """The ``requestBody`` of a route that reads a manifest text itself, YAML or JSON."""
    content = {"schema": ref(schema)}
    return {
        "required": True,
        "description": description,
        "content": {"application/yaml": content, "application/json": content},
    }


class ChangeOut(Schema):
    kind: str
    name: str = Field(description="name, or namespace/name for a LocalQueue")
    action: str = Field(description="created | configured | unchanged")
    before: dict[str, Any] | None = Field(
        None, description="dry runs only: the object as stored, null when it does not exist"
    )
    after: dict[str, Any] | None = Field(
        None, description="dry runs only: the object as this apply would store it"
    )


class ApplyResultOut(Schema):
    dry_run: bool = Field(False, description="true: nothing was written (?dryRun=All)")
    changes: list[ChangeOut]
    warnings: list[ProblemOut] = Field(
        description="references to objects that do not exist yet (allowed, as in Kueue)"
    )


class ObjectMeta(Schema):
    model_config = ConfigDict(extra="allow")
    name: str
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


class ManifestOut(Schema):
    """A stored object as a manifest in Berth's own API group (``berth get -o yaml``)."""

    model_config = ConfigDict(extra="allow")
    api_version: str
    kind: str
    metadata: ObjectMeta


class ManifestList(Schema):
    kind: str
    items: list[ManifestOut]


class PodSetWrite(Schema):
    name: str
    count: int
    min_count: int | None
    requests: dict[str, str] = Field(description="per pod, Kubernetes quantity strings")


class PodSetAssignmentOut(Schema):
    model_config = ConfigDict(extra="allow")
    name: str
    count: int
    flavors: dict[str, str] = Field(description="resource → flavor")
    usage: dict[str, str] = Field(description="resource → quantity held, all pods")


class AdmissionWrite(Schema):
    model_config = ConfigDict(extra="allow")
    cluster_queue: str
    pod_set_assignments: list[PodSetAssignmentOut]


class CheckStateOut(Schema):
    """One admission check's state on a workload reserving quota."""

    name: str
    state: CheckState
    message: str


class WorkloadOut(Schema):
    """A workload as the write routes answer it."""

    namespace: str
    name: str
    kind: str
    queue_name: str
    priority: int
    priority_class_name: str | None
    state: WorkloadState
    active: bool
    created_at: datetime
    admitted_at: datetime | None
    eviction_count: int
    pod_sets: list[PodSetWrite]
    admission: AdmissionWrite | None
    admission_checks: list[CheckStateOut] = Field(default_factory=list)
