"""Typed reads of manifest fields by path that collect every problem instead of raising (edge).

A ``Field`` is a value at a path (``spec.resourceGroups[0].flavors[1]``) inside one document.
Reading it with the wrong type, or missing a required child, records a ``Problem`` naming the
exact path and returns ``None`` (or an empty container) so parsing carries on and the user
sees every mistake at once. Children of a value of the wrong type stay silent: one mistake,
one problem.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Mapping
from enum import StrEnum
from typing import TypeVar

from quota.core.errors import Problem
from quota.core.quantity import QuantityError, format_quantity, parse_quantity
from quota.manifests.limits import annotations_problem

E = TypeVar("E", bound=StrEnum)
Check = Callable[[str], str | None]  # returns why a string is invalid, or None

REQUIRED = "required field missing"
_ABSENT = object()
# Public as text too: the OpenAPI document declares the same patterns (api.schemas).
SUBDOMAIN_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
QUALIFIED_PATTERN = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_SUBDOMAIN = re.compile(SUBDOMAIN_PATTERN)
_LABEL = re.compile(LABEL_PATTERN)
_QUALIFIED = re.compile(QUALIFIED_PATTERN)


def dns_name(value: str) -> str | None:
    """Object names and references: a DNS-1123 subdomain."""
    if len(value) > 253 or not _SUBDOMAIN.fullmatch(value):
        return (
            f"{value!r} is not a valid name: use lowercase letters, digits, '-' and '.', "
            "starting and ending with a letter or digit (at most 253 characters)"
        )
    return None


def dns_label(value: str) -> str | None:
    """Namespace and pod-set names: a DNS-1123 label (no dots, at most 63 characters)."""
    if len(value) > 63 or not _LABEL.fullmatch(value):
        return (
            f"{value!r} is not a valid name here: use lowercase letters, digits and '-', "
            "starting and ending with a letter or digit (at most 63 characters)"
        )
    return None


def qualified_name(value: str) -> str | None:
    """Resource names and label keys: an optional DNS prefix and '/', then a name."""
    prefix, _, name = value.rpartition("/")
    if len(name) > 63 or len(prefix) > 253 or not _QUALIFIED.fullmatch(value):
        return f"{value!r} is not a valid resource or label name (e.g. cpu, memory, nvidia.com/gpu)"
    return None


def describe(value: object) -> str:
    """The YAML type of a value, for 'must be X, got Y' messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


class Sink:
    """Collects the problems of one document, labelled with where they came from."""

    __slots__ = ("document", "obj", "problems", "source")

    def __init__(self, source: str, document: int | None, problems: list[Problem]) -> None:
        self.source = source
        self.document = document
        self.obj = ""
        self.problems = problems

    def add(self, field: str, message: str) -> None:
        self.problems.append(Problem(message, self.source, self.document, self.obj, field))


class Field:
    """A value at a path in one document; reads record problems and never raise."""

    __slots__ = ("broken", "path", "sink", "value")

    def __init__(self, sink: Sink, path: str, value: object = _ABSENT, *, broken: bool = False):
        self.sink = sink
        self.path = path
        self.value = value
        # True under a value of the wrong type: that value's problem already says it all.
        self.broken = broken

    @property
    def present(self) -> bool:
        return self.value is not _ABSENT and self.value is not None

    def problem(self, message: str) -> None:
        self.sink.add(self.path, message)

    def child(self, key: str) -> Field:
        path = f"{self.path}.{key}" if self.path else key
        if isinstance(self.value, dict):
            return Field(self.sink, path, self.value.get(key, _ABSENT))
        return Field(self.sink, path, broken=self.broken or self.present)

    def has(self, key: str) -> bool:
        return isinstance(self.value, dict) and self.value.get(key) is not None

    def _missing(self, required: bool) -> None:
        if required and not self.broken:
            self.problem(REQUIRED)

    def mapping(
        self,
        *,
        required: bool = False,
        known: Collection[str] | None = None,
        unsupported: Collection[str] = (),
    ) -> Field:
        """Check this field is a mapping; with ``known``, report keys outside it."""
        if not self.present:
            self._missing(required)
        elif not isinstance(self.value, dict):
            self.problem(f"must be a mapping, got {describe(self.value)}")
            self.broken = True
        elif known is not None:
            for key in self.value:
                if key in unsupported:
                    self.child(str(key)).problem("not supported by Berth; remove it")
                elif key not in known:
                    self.child(str(key)).problem(_unknown_field(str(key), known))
        return self

    def obj(
        self,
        key: str,
        *,
        required: bool = False,
        known: Collection[str] | None = None,
        unsupported: Collection[str] = (),
    ) -> Field:
        return self.child(key).mapping(required=required, known=known, unsupported=unsupported)

    def items(self, key: str, *, required: bool = False, non_empty: bool = False) -> list[Field]:
        field = self.child(key)
        if not field.present:
            field._missing(required or non_empty)
            return []
        if not isinstance(field.value, list):
            field.problem(f"must be a list, got {describe(field.value)}")
            return []
        if non_empty and not field.value:
            field.problem("must not be empty")
        return [Field(self.sink, f"{field.path}[{i}]", v) for i, v in enumerate(field.value)]

    def text(
        self, *, required: bool = False, check: Check | None = None, empty: bool = False
    ) -> str | None:
        """This field as a string; a required one must not be empty unless ``empty``."""
        if not self.present:
            self._missing(required)
            return None
        if not isinstance(self.value, str):
            self.problem(f"must be a string, got {describe(self.value)}{_quote_hint(self.value)}")
            return None
        if required and not empty and not self.value:
            self.problem("must not be empty")
            return None
        why = check(self.value) if check is not None and self.value else None
        if why is not None:
            self.problem(why)
            return None
        return self.value

    def string(self, key: str, *, required: bool = False, check: Check | None = None) -> str | None:
        return self.child(key).text(required=required, check=check)

    def integer(
        self,
        key: str,
        *,
        required: bool = False,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> int | None:
        field = self.child(key)
        value = field.value
        if not field.present:
            field._missing(required)
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            field.problem(f"must be an integer, got {describe(value)}")
            return None
        if minimum is not None and value < minimum:
            field.problem(f"must be at least {minimum}, got {value}")
            return None
        if maximum is not None and value > maximum:
            field.problem(f"must be at most {maximum}, got {value}")
            return None
        return value

    def boolean(self, key: str) -> bool | None:
        field = self.child(key)
        if not field.present:
            return None
        if not isinstance(field.value, bool):
            field.problem(f"must be true or false, got {describe(field.value)}")
            return None
        return field.value

    def amount(self, *, required: bool = False, resource: str | None = None) -> int | None:
        """This field as a non-negative quantity in milli-units."""
        if not self.present:
            self._missing(required)
            return None
        try:
            milli = parse_quantity(self.value)
        except QuantityError as exc:
            self.problem(str(exc))
            return None
        if milli < 0:
            shown = self.value if isinstance(self.value, str) else format_quantity(milli, resource)
            self.problem(f"must not be negative, got {shown}")
            return None
        return milli

    def quantity(
        self, key: str, *, required: bool = False, resource: str | None = None
    ) -> int | None:
        return self.child(key).amount(required=required, resource=resource)

    def enum(self, key: str, kind: type[E], *, aliases: Mapping[str, E] | None = None) -> E | None:
        """A string spelled exactly as one of ``kind``'s values (or an alias of one)."""
        field = self.child(key)
        value = field.text()
        if value is None:
            return None
        if aliases and value in aliases:
            return aliases[value]
        for member in kind:
            if member.value == value:
                return member
        allowed = [*(aliases or {}), *(m.value for m in kind)]
        field.problem(f"must be one of {', '.join(allowed)}; got {value!r}")
        return None

    def strings(
        self,
        key: str,
        *,
        required: bool = False,
        non_empty: bool = False,
        check: Check | None = None,
        unique: bool = False,
        empty: bool = False,
    ) -> list[str]:
        """A list of strings; with ``unique``, a repeated entry is a problem."""
        values: list[str] = []
        for item in self.items(key, required=required, non_empty=non_empty):
            value = item.text(required=True, check=check, empty=empty)
            if value is None:
                continue
            if unique and value in values:
                item.problem(f"{value} is listed twice")
                continue
            values.append(value)
        return values

    def string_map(self, key: str, *, check_keys: Check | None = None) -> dict[str, str]:
        """A mapping of string to string (labels, node selectors)."""
        field = self.obj(key)
        if not isinstance(field.value, dict):
            return {}
        result: dict[str, str] = {}
        for name, value in field.value.items():
            entry = Field(self.sink, f"{field.path}[{name}]", value)
            if not isinstance(name, str):
                entry.problem(f"keys must be strings, got {describe(name)}")
                continue
            why = check_keys(name) if check_keys is not None else None
            if why is not None:
                entry.problem(why)
                continue
            if not isinstance(value, str):
                entry.problem(f"must be a string, got {describe(value)}{_quote_hint(value)}")
                continue
            result[name] = value
        return result

    def annotation_map(self, key: str = "annotations") -> dict[str, str]:
        """An object's annotations: a string map of at most 256 KiB, as Kubernetes caps it."""
        annotations = self.string_map(key)
        why = annotations_problem(annotations)
        if why is not None:
            self.child(key).problem(why)
            return {}  # what reads single annotations would only add noise
        return annotations

    def quantity_map(self, key: str) -> dict[str, int]:
        """A mapping of resource name to quantity (requests, capacity) in milli-units."""
        field = self.obj(key)
        if not isinstance(field.value, dict):
            return {}
        result: dict[str, int] = {}
        for name, value in field.value.items():
            entry = Field(self.sink, f"{field.path}[{name}]", value)
            why = qualified_name(name) if isinstance(name, str) else "resource names are strings"
            if why is not None:
                entry.problem(why)
                continue
            milli = entry.amount(required=True, resource=name)
            if milli is not None:
                result[name] = milli
        return result


def _quote_hint(value: object) -> str:
    # YAML reads bare yes, true, 1.0 and 0755 as booleans and numbers, not text.
    return " (quote it)" if isinstance(value, bool | int | float) else ""


def _unknown_field(key: str, known: Collection[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown field {key!r}; {hint}expected one of {', '.join(sorted(known))}"
