"""What ``berth apply -f`` and ``berth submit -f`` read: files, folders or standard input,
split into quota objects (checked here, so a problem names its file) and workloads (Jobs
and Kueue Workloads, which the server checks)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from quota.core.errors import InvalidInput, Problem
from quota.manifests.documents import (
    ManifestObject,
    is_workload,
    load_documents,
    parse_objects,
)

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True, slots=True)
class Document:
    source: str  # file name, or "-" for standard input
    index: int  # 0-based YAML document
    doc: object

    def where(self) -> str:
        return f"{self.source}: document {self.index}"


@dataclass
class Manifests:
    """Every document read, in order: quota objects and workloads apart."""

    objects: list[Document] = field(default_factory=list)
    workloads: list[Document] = field(default_factory=list)

    def parsed_objects(self) -> list[ManifestObject]:
        """The quota objects, checked; ``InvalidInput`` names every problem's file."""
        return parse_objects((d.source, d.index, d.doc) for d in self.objects)

    def objects_body(self) -> str:
        """The quota objects as one multi-document body for ``POST /api/v1/apply``."""
        return "".join(f"---\n{json.dumps(d.doc)}\n" for d in self.objects)


def read(names: list[str]) -> Manifests:
    """The documents of every file named (a folder: its manifests; ``-``: stdin)."""
    found = Manifests()
    problems: list[Problem] = []
    for source, text in read_sources(names):
        try:
            documents = load_documents(text, source)
        except InvalidInput as exc:
            problems.extend(exc.problems)
            continue
        for index, doc in documents:
            item = Document(source, index, doc)
            (found.workloads if is_workload(doc) else found.objects).append(item)
    if problems:
        raise InvalidInput(problems)
    return found


def read_sources(names: list[str]) -> Iterator[tuple[str, str]]:
    """(source, text) for every file named, every manifest in a folder, or stdin for ``-``."""
    problems = []
    for name in names:
        if name == "-":
            yield "-", sys.stdin.read()
            continue
        path = Path(name)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in MANIFEST_SUFFIXES)
            if not files:
                problems.append(Problem("folder holds no .yaml, .yml or .json files", source=name))
            for file in files:
                yield str(file), file.read_text(encoding="utf-8")
        elif path.is_file():
            yield name, path.read_text(encoding="utf-8")
        else:
            problems.append(Problem("no such file or folder", source=name))
    if problems:
        raise InvalidInput(problems)
