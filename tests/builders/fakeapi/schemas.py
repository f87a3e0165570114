"""A custom resource checked against its CRD's structural schema, as the API server does on
every write: fields the schema does not name are pruned (unless
``x-kubernetes-preserve-unknown-fields``), a null where the schema does not say
``nullable`` is dropped, and a value of the wrong type is refused with 422 Invalid, each
problem naming its field. The root's apiVersion, kind and metadata are the server's own.
"""

from __future__ import annotations

from typing import Any

from builders.fakeapi.errors import ApiError

Obj = dict[str, Any]
Schema = dict[str, Any]
_ROOT = ("apiVersion", "kind", "metadata")


def checked(obj: Obj, schema: Schema, *, kind: str, group: str) -> Obj:
    """``obj`` pruned by ``schema``; 422 when a field has the wrong type."""
    problems: list[str] = []
    kept = {key: obj[key] for key in _ROOT if key in obj}
    rest = {key: value for key, value in obj.items() if key not in _ROOT}
    pruned = _walk(rest, schema, "", problems)
    if problems:
        name = (obj.get("metadata") or {}).get("name", "")
        raise ApiError(422, "Invalid", f'{kind}.{group} "{name}" is invalid: ' + ", ".join(problems))
    return {**kept, **pruned}


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _walk(value: Any, schema: Schema, path: str, problems: list[str]) -> Any:
    wanted = schema.get("type")
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            problems.append(_invalid(path, value, "integer or string"))
        return value
    if wanted in _TYPES:
        bad_bool = wanted in ("integer", "number") and isinstance(value, bool)
        whole = wanted != "integer" or not isinstance(value, float) or value.is_integer()
        if bad_bool or not isinstance(value, _TYPES[wanted]) or not whole:
            problems.append(_invalid(path, value, wanted))
            return value
    if isinstance(value, dict):
        return _object(value, schema, path, problems)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [_walk(item, schema["items"], f"{path}[{i}]", problems)
                for i, item in enumerate(value)]  # fmt: skip
    return value


def _object(value: Obj, schema: Schema, path: str, problems: list[str]) -> Obj:
    properties: dict[str, Schema] = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    preserve = bool(schema.get("x-kubernetes-preserve-unknown-fields"))
    out: Obj = {}
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        child = properties.get(key) or (extra if isinstance(extra, dict) else None)
        if child is None:
            if preserve or extra is True:
                out[key] = item
            continue  # pruned
        if item is None:
            if child.get("nullable"):
                out[key] = None
            continue  # a null the schema does not allow is dropped
        out[key] = _walk(item, child, where, problems)
    return out


def _invalid(path: str, value: Any, wanted: str) -> str:
    shown = "null" if value is None else type(value).__name__
    return f'{path or "<root>"}: Invalid value: "{shown}": {path} in body must be of type {wanted}'
