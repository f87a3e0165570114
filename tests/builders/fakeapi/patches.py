"""The three patch formats the apiserver accepts for JSON bodies (RFC 7386, RFC 6902)."""

from __future__ import annotations

import copy
from typing import Any

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


class PatchError(ValueError):
    """A patch that cannot be applied (answered as 422 by the fake)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: maps merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 add/remove/replace/test/move/copy over a deep copy of ``target``."""
    if not isinstance(operations, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"malformed operation {op!r}")
        name, path = op["op"], _pointer(op["path"])
        if name == "add":
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif name == "remove":
            _remove(doc, path)
        elif name == "replace":
            _remove(doc, path)
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif name == "test":
            if _get(doc, path) != op.get("value"):
                raise PatchError(f"test failed at {op['path']}")
        elif name in ("move", "copy"):
            source = _pointer(op.get("from", ""))
            value = copy.deepcopy(_get(doc, source))
            if name == "move":
                _remove(doc, source)
            doc = _add(doc, path, value)
        else:
            raise PatchError(f"unknown operation {name!r}")
    return doc


def _pointer(text: str) -> list[str]:
    if text == "":
        return []
    if not text.startswith("/"):
        raise PatchError(f"JSON pointer {text!r} must start with /")
    return [part.replace("~1", "/").replace("~0", "~") for part in text[1:].split("/")]


def _parent(doc: Any, path: list[str]) -> Any:
    node = doc
    for part in path[:-1]:
        node = _step(node, part)
    return node


def _step(node: Any, part: str) -> Any:
    if isinstance(node, dict) and part in node:
        return node[part]
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    raise PatchError(f"path segment {part!r} does not exist")


def _get(doc: Any, path: list[str]) -> Any:
    node = doc
    for part in path:
        node = _step(node, part)
    return node


def _add(doc: Any, path: list[str], value: Any) -> Any:
    if not path:
        return value
    parent, last = _parent(doc, path), path[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        index = len(parent) if last == "-" else int(last) if last.isdigit() else -1
        if not 0 <= index <= len(parent):
            raise PatchError(f"index {last!r} out of range")
        parent.insert(index, value)
    else:
        raise PatchError(f"cannot add below a {type(parent).__name__}")
    return doc


def _remove(doc: Any, path: list[str]) -> None:
    if not path:
        raise PatchError("cannot remove the whole document")
    parent, last = _parent(doc, path), path[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
    else:
        raise PatchError(f"path {'/'.join(path)!r} does not exist")
