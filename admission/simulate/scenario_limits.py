"""What ``berth simulate`` cannot model yet, turned away in one place (PURE).

Everything the scenario spec names is simulated now (Nodes, Topologies, topology
annotations, checkpoint grace and ``checkpointed`` events), so the tables are empty; a
future feature the simulator lags behind on goes here until it catches up.
"""

from __future__ import annotations

from collections.abc import Mapping

NOT_YET = "not supported yet by berth simulate"
UNSUPPORTED_KINDS: frozenset[str] = frozenset()
UNSUPPORTED_STEP_KEYS: tuple[str, ...] = ()
UNSUPPORTED_ANNOTATIONS: tuple[str, ...] = ()


def unsupported(doc: object) -> tuple[str, str] | None:
    """``(field, message)`` for the first thing in a manifest the simulator cannot model."""
    if not isinstance(doc, Mapping):
        return None  # the manifest parser says what is wrong with it
    kind = doc.get("kind")
    if isinstance(kind, str) and kind in UNSUPPORTED_KINDS:  # a mapping is not hashable
        return "kind", f"{kind}: {NOT_YET}"
    for path, notes in _annotation_maps(doc, ""):
        for name in UNSUPPORTED_ANNOTATIONS:
            if name in notes:
                return f"{path}[{name}]", NOT_YET
    return None


def _annotation_maps(node: object, path: str) -> list[tuple[str, Mapping[object, object]]]:
    """Every annotations mapping of a manifest: the object's and its pod templates'."""
    found: list[tuple[str, Mapping[object, object]]] = []
    if isinstance(node, Mapping):
        for key, child in node.items():
            child_path = f"{path}.{key}" if path else str(key)
            if key == "annotations" and isinstance(child, Mapping):
                found.append((child_path, child))
            else:
                found.extend(_annotation_maps(child, child_path))
    elif isinstance(node, list):
        for index, child in enumerate(node):
            found.extend(_annotation_maps(child, f"{path}[{index}]"))
    return found
