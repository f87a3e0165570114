"""Bounds on untrusted input text, shared by every reader of it (PURE: stdlib and PyYAML).

Manifests, workload submissions, scenarios and JSON request bodies all come in through
``read_documents`` or ``load_json``; both refuse, as ``InvalidInput`` naming the field:

- nesting deeper than ``MAX_DEPTH`` mappings and lists. PyYAML's composer and the code
  that walks a document recurse once or more per level, so ~600 levels (a 1.2 KB body)
  raised ``RecursionError``. The YAML loader counts while it composes, before anything
  recursed that deep; a JSON document too deep for ``json.loads`` is caught as such, and
  one that parses is measured without recursion. The deepest manifest in this repository
  (the ClusterQueue CRD) nests 21 levels.
- YAML aliases that expand past ``MAX_ALIAS_NODES`` nodes. PyYAML shares one object per
  anchor, but every walk of the document visits it once per reference: a 645-byte
  "billion laughs" cost ~12 minutes of CPU. Each alias is counted, as it is composed, with
  the size of what it stands for (aliases inside it included); an alias to a node that
  contains it (a cycle) is refused outright.
- a NUL character in any string, key or value: PostgreSQL cannot store one in text or
  jsonb, so it used to surface as a 500 from the driver. A lone UTF-16 surrogate (JSON's
  ``"\ud800"``) is not text either and could not be encoded for the driver: refused too.

``annotations_problem`` is Kubernetes' ``TotalAnnotationSizeLimitB``: an object's
annotations, keys plus values, total at most 256 KiB.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Hashable, Mapping
from typing import Any, TypeAlias

import yaml

from quota.core.errors import InvalidInput, Problem

MAX_DEPTH = 100  # mappings and lists inside each other
MAX_ALIAS_NODES = 100_000  # nodes YAML aliases may stand for, per input text
MAX_ANNOTATIONS_BYTES = 256 * 1024  # Kubernetes' TotalAnnotationSizeLimitB
NUL = "\x00"
NUL_MESSAGE = "must not contain NUL characters"
SURROGATE_MESSAGE = "must be valid Unicode: a lone UTF-16 surrogate (e.g. \\ud800) is not text"
DEPTH_MESSAGE = f"nested deeper than {MAX_DEPTH} levels of mappings and lists (the limit)"

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SHOWN_KEY = 64  # characters of a key shown in a field path


class BoundExceeded(yaml.MarkedYAMLError):
    """Well-formed YAML over one of this module's bounds; ``field`` says where."""

    def __init__(self, message: str, field: str, mark: Any) -> None:
        super().__init__(problem=message, problem_mark=mark)
        self.message = message
        self.field = field


# A field path as it is built: (parent, segment); rendered only when a problem needs it.
_Path: TypeAlias = tuple["_Path", object] | None


def render_path(path: _Path) -> str:
    """``spec.template.spec.containers[0].env[2]``, keys that are not words in brackets."""
    parts: list[str] = []
    while path is not None:
        path, segment = path
        if isinstance(segment, int):
            parts.append(f"[{segment}]")
            continue
        text = str(segment).replace(NUL, "\\0").encode(errors="backslashreplace").decode()
        if len(text) > _SHOWN_KEY:
            text = text[:_SHOWN_KEY] + "…"
        parts.append(f".{text}" if _PLAIN_KEY.fullmatch(text) else f"[{text}]")
    return "".join(reversed(parts)).removeprefix(".")


class BoundedLoader(yaml.SafeLoader):
    """Safe YAML within this module's bounds; a key repeated in one mapping is refused
    instead of keeping the last."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0  # collections open around the node being composed
        self._path: _Path = None
        self._aliased = 0  # nodes the aliases read so far stand for
        # id(collection node) -> (height in collections, size in nodes) once composed.
        self._shapes: dict[int, tuple[int, int]] = {}

    def compose_document(self) -> yaml.Node | None:
        node: yaml.Node | None = super().compose_document()
        self._shapes.clear()  # anchors do not reach across documents
        return node

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        # ``index`` is typed ``int`` by the stubs; PyYAML also passes a key's node, or None.
        outer = self._path
        if parent is not None:
            self._path = (outer, _segment(index))
        try:
            if self.check_event(yaml.AliasEvent):
                self._count_alias(self._next_event())
                return super().compose_node(parent, index)
            opens = self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent)
            if opens and self._depth >= MAX_DEPTH:
                mark = self._next_event().start_mark
                raise BoundExceeded(DEPTH_MESSAGE, render_path(self._path), mark)
            self._depth += opens
            try:
                node: yaml.Node | None = super().compose_node(parent, index)
            finally:
                self._depth -= opens
            if opens and node is not None:
                self._shapes[id(node)] = self._measure(node)
            return node
        finally:
            self._path = outer

    def _next_event(self) -> yaml.Event:
        event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]
        return event

    def _count_alias(self, event: yaml.Event) -> None:
        anchor = getattr(event, "anchor", None)
        target = self.anchors.get(anchor) if anchor is not None else None
        if target is None:
            return  # PyYAML reports the undefined alias
        where = render_path(self._path)
        if isinstance(target, yaml.ScalarNode):
            height, size = 0, 1
        elif id(target) in self._shapes:
            height, size = self._shapes[id(target)]
        else:
            raise BoundExceeded(
                f"alias *{anchor} refers to a node that contains it", where, event.start_mark
            )
        if self._depth + height > MAX_DEPTH:
            raise BoundExceeded(DEPTH_MESSAGE, where, event.start_mark)
        self._aliased += size
        if self._aliased > MAX_ALIAS_NODES:
            raise BoundExceeded(
                f"YAML aliases expand to more than {MAX_ALIAS_NODES} nodes (the limit); "
                "write the repeated parts out, or fewer of them",
                where,
                event.start_mark,
            )

    def _measure(self, node: yaml.Node) -> tuple[int, int]:
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [child for pair in node.value for child in pair]
        height, size = 0, 1
        for child in children:
            shape = self._shapes.get(id(child), (0, 1))
            height = max(height, shape[0])
            size += shape[1]
        return height + 1, size

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: dict[str, int] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                continue
            if key_node.value in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key_node.value!r} (first at line {seen[key_node.value]})",
                    key_node.start_mark,
                )
            seen[key_node.value] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


def _segment(index: object) -> object:
    """What ``Composer.compose_node`` is given: a list position, a mapping key's node, or
    ``None`` while the key itself is composed."""
    if isinstance(index, int):
        return index
    if isinstance(index, yaml.ScalarNode):
        return index.value
    return "(key)"


def read_documents(text: str, source: str) -> list[tuple[int, object]]:
    """Every non-empty document of a YAML stream (or one JSON value) with its index,
    counting empty ones; ``InvalidInput`` for bad YAML or anything over a bound."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            return [(0, load_json(text, source, document=0))]
        except _NotJson:
            pass  # let the YAML parser report it, with a line number
    docs: list[tuple[int, object]] = []
    count = 0  # documents read so far, empty ones included, so indexes match the file
    try:
        for doc in yaml.load_all(text, Loader=BoundedLoader):
            if doc is not None:
                check_document(doc, source, count)
                docs.append((count, doc))
            count += 1
    except BoundExceeded as exc:
        raise InvalidInput(
            [Problem(_at_mark(exc.message, exc.problem_mark), source, count, field=exc.field)]
        ) from exc
    except yaml.YAMLError as exc:
        raise InvalidInput([Problem(yaml_message(exc), source, count)]) from exc
    except ValueError as exc:  # an integer past Python's digit limit, while constructing
        raise InvalidInput([Problem(_number_problem(exc), source, count)]) from exc
    return docs


class _NotJson(ValueError):
    pass


def _number_problem(exc: ValueError) -> str:
    if "digits" in str(exc):
        return f"a number has more than {sys.get_int_max_str_digits()} digits: {exc}"
    return f"not a valid value: {exc}"


def load_json(text: str | bytes, source: str, *, document: int | None = None) -> object:
    """One JSON value, within the depth bound and free of NUL (``InvalidInput``); text
    that is not JSON raises ``ValueError``."""
    try:
        doc = json.loads(text)
    except RecursionError as exc:
        raise InvalidInput([Problem(DEPTH_MESSAGE, source, document)]) from exc
    except json.JSONDecodeError as exc:
        raise _NotJson(str(exc)) from exc
    except ValueError as exc:  # an integer past Python's digit limit
        raise InvalidInput([Problem(_number_problem(exc), source, document)]) from exc
    check_document(doc, source, document)
    return doc


def check_document(doc: object, source: str, document: int | None) -> None:
    """``InvalidInput`` naming the first string (or key) that is not storable text, or the
    first mapping or list nested past ``MAX_DEPTH``; walked without recursion."""
    stack: list[tuple[object, int, _Path]] = [(doc, 0, None)]
    while stack:
        value, depth, path = stack.pop()
        if isinstance(value, str):
            why = _text_problem(value)
            if why is not None:
                _refuse(why, source, document, path)
            continue
        if isinstance(value, dict):
            children: list[tuple[object, object]] = list(value.items())
        elif isinstance(value, list):
            children = list(enumerate(value))
        else:
            continue
        if depth >= MAX_DEPTH:
            _refuse(DEPTH_MESSAGE, source, document, path)
        for key, child in reversed(children):  # reversed: the first problem is reported
            here: _Path = (path, key)
            why = _text_problem(key) if isinstance(key, str) else None
            if why is not None:
                _refuse(f"keys {why}", source, document, here)
            stack.append((child, depth + 1, here))


def _text_problem(value: str) -> str | None:
    if NUL in value:
        return NUL_MESSAGE
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            return SURROGATE_MESSAGE
    return None


def _refuse(message: str, source: str, document: int | None, path: _Path) -> None:
    raise InvalidInput([Problem(message, source, document, field=render_path(path))])


def annotations_problem(annotations: Mapping[str, str]) -> str | None:
    """Why an object's annotations are too large (as Kubernetes counts: UTF-8 bytes of
    keys plus values), or ``None``."""
    total = sum(len(_utf8(key)) + len(_utf8(value)) for key, value in annotations.items())
    if total <= MAX_ANNOTATIONS_BYTES:
        return None
    return (
        f"annotations total {total} bytes (keys plus values); "
        f"Kubernetes allows at most {MAX_ANNOTATIONS_BYTES} (256 KiB)"
    )


def _utf8(text: str) -> bytes:
    return text.encode(errors="surrogatepass")  # what no reader let through, counted anyway


def yaml_message(exc: yaml.YAMLError) -> str:
    """``invalid YAML at line L, column C: what`` from PyYAML's error."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is None:
        return f"invalid YAML: {problem}"
    message = f"invalid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and context_mark is not None and context_mark.line != mark.line:
        message += f" ({context} at line {context_mark.line + 1})"
    return message


def _at_mark(message: str, mark: Any) -> str:
    if mark is None:
        return message
    return f"line {mark.line + 1}, column {mark.column + 1}: {message}"
