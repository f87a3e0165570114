"""Kueue-compatible YAML/JSON manifests ↔ the ledger's frozen values (edge).

``load_documents`` splits text into documents, ``parse_objects`` turns them into
``quota.model`` values and ``to_manifest`` writes a value back in Berth's own API group.
Bad input never stops at the first mistake: every problem, named by source, document,
object and exact field path, is collected into one ``InvalidInput``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from quota.core.errors import InvalidInput, NotFound, Problem
from quota.core.kinds import KINDS, Kind, resolve_kind
from quota.core.model import LocalQueue
from quota.manifests.frameworks import READERS as FRAMEWORK_KINDS
from quota.manifests.kinds import READERS, Meta, Model
from quota.manifests.limits import read_documents
from quota.manifests.reader import Field, Sink, describe, dns_label, dns_name, qualified_name
from quota.manifests.writer import BERTH_API_VERSION, to_manifest

__all__ = [
    "API_VERSIONS",
    "BERTH_API_VERSION",
    "KINDS",
    "Kind",
    "ManifestObject",
    "Model",
    "find_kind",
    "is_workload",
    "load_documents",
    "parse_objects",
    "to_manifest",
]

_KUEUE_KINDS = (
    "ResourceFlavor", "ClusterQueue", "LocalQueue", "Cohort", "WorkloadPriorityClass", "Topology",
    "AdmissionCheck", "ProvisioningRequestConfig",
)  # fmt: skip
API_VERSIONS: Mapping[str, tuple[str, ...]] = {
    "kueue.x-k8s.io/v1beta1": _KUEUE_KINDS,
    "kueue.x-k8s.io/v1beta2": _KUEUE_KINDS,
    "kueue.x-k8s.io/v1alpha1": ("Cohort", "Topology"),
    BERTH_API_VERSION: _KUEUE_KINDS,
    "v1": ("Namespace", "Node"),
}
_WORKLOAD_KINDS = frozenset(
    {
        *FRAMEWORK_KINDS,  # batch/v1 Job, JobSet, the Kubeflow jobs, RayJob, RayCluster
        ("kueue.x-k8s.io/v1beta1", "Workload"),
        ("kueue.x-k8s.io/v1beta2", "Workload"),
    }
)


def is_workload(doc: object) -> bool:
    """Whether a document is a workload (a Job, a framework's job, a Kueue Workload), not a
    quota object."""
    return isinstance(doc, dict) and (doc.get("apiVersion"), doc.get("kind")) in _WORKLOAD_KINDS


def find_kind(word: str) -> Kind | None:
    """The kind a user means by ``word`` (name, plural, singular or alias), or ``None``."""
    try:
        return resolve_kind(word)
    except NotFound:
        return None


@dataclass(frozen=True, slots=True)
class ManifestObject:
    """One parsed object and where it came from."""

    kind: str
    obj: Model
    source: str
    document: int

    @property
    def key(self) -> str:
        """``Kind/name``, or ``LocalQueue/namespace/name``: unique within one input."""
        name = self.obj.key if isinstance(self.obj, LocalQueue) else self.obj.name
        return f"{self.kind}/{name}"


def load_documents(text: str, source: str) -> list[tuple[int, object]]:
    """Multi-document YAML (or JSON) → ``(document index, document)``, empty ones skipped,
    within the bounds of ``quota.input_limits`` (depth, aliases, NUL).

    A ``kind: List`` (or a bare list) expands into its items under its own index.
    """
    return [
        (index, item)
        for index, doc in read_documents(text, source)
        for item in _expand(doc)
        if item is not None
    ]


def _expand(doc: object) -> list[object]:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and doc.get("kind") == "List" and isinstance(doc.get("items"), list):
        items: list[object] = doc["items"]
        return items
    return [doc]


def parse_objects(docs: Iterable[tuple[str, int, object]]) -> list[ManifestObject]:
    """``(source, document index, document)`` → objects; ``InvalidInput`` lists every problem."""
    problems: list[Problem] = []
    objects: list[ManifestObject] = []
    first: dict[str, ManifestObject] = {}
    for source, document, doc in docs:
        for item in _expand(doc):
            parsed = _parse_one(source, document, item, problems)
            if parsed is None:
                continue
            earlier = first.setdefault(parsed.key, parsed)
            if earlier is not parsed:
                where = f"document {earlier.document}"
                if earlier.source != source:
                    where = f"{earlier.source} {where}"
                problems.append(
                    Problem(
                        f"{parsed.key} is defined twice: first in {where}, "
                        f"again in document {document}",
                        source,
                        document,
                        parsed.key,
                        "metadata.name",
                    )
                )
                continue
            objects.append(parsed)
    if problems:
        raise InvalidInput(problems)
    return objects


def _parse_one(
    source: str, document: int, doc: object, problems: list[Problem]
) -> ManifestObject | None:
    before = len(problems)
    sink = Sink(source, document, problems)
    if not isinstance(doc, dict):
        sink.add("", f"an object must be a mapping with apiVersion and kind, got {describe(doc)}")
        return None
    sink.obj = _label(doc)
    top = Field(sink, "", doc)
    if doc.get("kind") == "List":
        top.items("items", required=True)  # a well-formed List was expanded before this
        return None
    api_version = top.string("apiVersion", required=True)
    kind = top.string("kind", required=True)
    if api_version is None or kind is None or not _known(top, api_version, kind):
        return None
    metadata = top.obj("metadata", required=True)
    name = metadata.string("name", required=True, check=dns_name)
    namespace = ""
    if kind == "LocalQueue":
        namespace = metadata.string("namespace", required=True, check=dns_label) or ""
    labels = metadata.string_map("labels", check_keys=qualified_name)
    annotations = metadata.annotation_map()
    value = READERS[kind](top, Meta(name or "", namespace, labels, annotations))
    if len(problems) > before:
        return None
    return ManifestObject(kind, value, source, document)


def _known(top: Field, api_version: str, kind: str) -> bool:
    kinds = API_VERSIONS.get(api_version)
    if (api_version, kind) in _WORKLOAD_KINDS:
        top.child("kind").problem(
            f"{kind} is a workload, not a quota object: submit it as a workload "
            "(POST /api/v1/workloads) instead of applying it"
        )
        return False
    if kinds is None:
        expected = ", ".join(API_VERSIONS)
        top.child("apiVersion").problem(
            f"unknown apiVersion {api_version}; expected one of {expected}"
        )
        return False
    if kind not in kinds:
        top.child("kind").problem(
            f"unknown kind {kind} for apiVersion {api_version}; expected one of {', '.join(kinds)}"
        )
        return False
    return True


def _label(doc: Mapping[str, object]) -> str:
    """``Kind/name`` (``LocalQueue/namespace/name``) from whatever of it the document has."""
    kind = doc.get("kind")
    metadata = doc.get("metadata")
    meta = metadata if isinstance(metadata, dict) else {}
    parts = [kind] if isinstance(kind, str) and kind else []
    namespace, name = meta.get("namespace"), meta.get("name")
    if kind == "LocalQueue" and isinstance(namespace, str) and namespace:
        parts.append(namespace)
    if isinstance(name, str) and name:
        parts.append(name)
    return "/".join(parts)


def parse_texts(texts: Iterable[tuple[str, str]]) -> list[ManifestObject]:
    """Parse (source, text) pairs; every problem of every source in one ``InvalidInput``."""
    problems: list[Problem] = []
    docs: list[tuple[str, int, object]] = []
    for source, text in texts:
        try:
            docs.extend((source, index, doc) for index, doc in load_documents(text, source))
        except InvalidInput as exc:
            problems.extend(exc.problems)
    try:
        objects = parse_objects(docs)
    except InvalidInput as exc:
        problems.extend(exc.problems)
        objects = []
    if problems:
        raise InvalidInput(problems)
    if not objects:
        raise InvalidInput([Problem("no objects to apply", source=", ".join(s for s, _ in texts))])
    return objects
