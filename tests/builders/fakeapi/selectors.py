"""Label selectors in their query-string form (``a=b,c!=d,e in (f,g),!h``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

Matcher = Callable[[Mapping[str, str]], bool]

_SET = re.compile(r"^\s*([^\s!=,()]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")


class SelectorError(ValueError):
    """A selector the apiserver would refuse with 400."""


def parse_selector(text: str | None) -> Matcher:
    """A predicate over labels; the empty selector matches everything."""
    if not text:
        return lambda labels: True
    tests = [_term(term) for term in _split(text)]
    return lambda labels: all(test(labels) for test in tests)


def _split(text: str) -> list[str]:
    terms, depth, current = [], 0, ""
    for char in text:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
        else:
            current += char
    terms.append(current)
    return [term.strip() for term in terms if term.strip()]


def _term(term: str) -> Matcher:
    found = _SET.match(term)
    if found:
        key, op, raw = found.groups()
        values = {value.strip() for value in raw.split(",") if value.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    for op in ("!=", "==", "="):
        if op in term:
            key, value = (part.strip() for part in term.split(op, 1))
            if not key:
                raise SelectorError(f"invalid selector term {term!r}")
            if op == "!=":
                return lambda labels: labels.get(key) != value
            return lambda labels: labels.get(key) == value
    if term.startswith("!"):
        key = term[1:].strip()
        return lambda labels: key not in labels
    if re.fullmatch(r"[^\s!=,()]+", term):
        return lambda labels: term in labels
    raise SelectorError(f"invalid selector term {term!r}")
