"""What a tenant may see of other namespaces: the one rule every read route applies.

A tenant is a read token limited to some namespaces (``api.auth.Grant``). It reads only the
workloads and LocalQueues of its namespaces (``require_namespace`` answers 403 for others),
but what it reads can still name other namespaces' work: a WaitingForQuota reason lists
the workloads holding the quota, a StrictFIFO queue's head or a preemption victim may be
another tenant's, an eviction names its preemptor, a node's history lists the work its
fault displaced and the pod whose device error degraded it. The rule: **a reference
``namespace/name`` into a namespace the caller may not see is shown as ``HIDDEN``**, in
structured details and in the prose written from them (messages, hints), and work of such
a namespace is counted or listed only as that. Counts, positions and quantities stay: a
tenant may know that two workloads hold the quota it waits for, not whose they are.

Prose is redacted by the references its record's details carry (``REFERENCE_KEYS``), each
replaced as a whole token wherever it occurs in that record; nothing is guessed from what
merely looks like ``a/b``, so ``nvidia.com/gpu`` or ``1/2`` are never touched. Node
transitions carry no details: their one sentence naming a pod is read back by its writer
(``admission.health.device_error_pod``).

Admin tokens and auth-off (no tokens) see everything: every function returns its input
unchanged for them, without copying.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from api.auth import Forbidden, Grant, require_namespace
from quota.core.model import LocalQueue, Namespace
from quota.core.node_health import device_error_pod

HIDDEN = "(another namespace)"

# Detail keys whose value is a workload reference "namespace/name" or a list of them:
# holders (WaitingForQuota), head (BlockedByQueueHead), victims (WaitingForPreempted-
# Workloads), preemptor (Evicted events and eviction reasons); workload and reservedFor
# name one wherever a detail carries them.
REFERENCE_KEYS = frozenset({"holders", "head", "victims", "preemptor", "workload", "reservedFor"})

# A reference is a whole token: not inside a longer name ("ns/a" in "ns/a-2" or "x.ns/a").
_BEFORE = r"(?<![A-Za-z0-9._/-])"
_AFTER = r"(?![A-Za-z0-9_/-]|\.[A-Za-z0-9])"


def sees_all(caller: Grant | None) -> bool:
    """Whether nothing is hidden from ``caller`` (an admin or unlimited read token, or
    auth off)."""
    return caller is None or caller.namespaces is None


def may_see(caller: Grant | None, namespace: str) -> bool:
    return caller is None or caller.may_see(namespace)


def namespaces(caller: Grant | None) -> list[str] | None:
    """The namespaces a query must be limited to (sorted); None: every namespace."""
    if caller is None or caller.namespaces is None:
        return None
    return sorted(caller.namespaces)


def reference(caller: Grant | None, key: str) -> str:
    """A workload reference ``namespace/name`` as ``caller`` may see it."""
    namespace, slash, _ = key.partition("/")
    return key if not slash or may_see(caller, namespace) else HIDDEN


class Redaction:
    """Hides a set of references wherever they occur in one record (texts, nested values)."""

    __slots__ = ("_pattern",)

    def __init__(self, hidden: Iterable[str]) -> None:
        found = sorted(set(hidden), key=lambda ref: (-len(ref), ref))  # longest first
        self._pattern = (
            re.compile(_BEFORE + "(?:" + "|".join(map(re.escape, found)) + ")" + _AFTER)
            if found
            else None
        )

    def __bool__(self) -> bool:
        return self._pattern is not None

    def text(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(HIDDEN, text)

    def value(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, strings, numbers) with the references hidden."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


def hidden_references(caller: Grant | None, *details: Any) -> set[str]:
    """The references under ``REFERENCE_KEYS`` (at any depth) ``caller`` may not see."""
    found: set[str] = set()
    if sees_all(caller):
        return found

    def walk(value: Any, referencing: bool) -> None:
        if isinstance(value, str):
            if referencing and reference(caller, value) == HIDDEN:
                found.add(value)
        elif isinstance(value, Mapping):
            for key, item in value.items():
                walk(item, key in REFERENCE_KEYS)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item, referencing)

    for each in details:
        walk(each, False)
    return found


def details(caller: Grant | None, value: Mapping[str, Any]) -> Mapping[str, Any]:
    """Event or reason details as ``caller`` may see them."""
    if sees_all(caller) or not value:
        return value
    shown: Mapping[str, Any] = Redaction(hidden_references(caller, value)).value(value)
    return shown


def reason(caller: Grant | None, found: Mapping[str, Any]) -> Mapping[str, Any]:
    """A reason or timeline entry ``{code, message, details}``: its details and its message."""
    if sees_all(caller):
        return found
    redaction = Redaction(hidden_references(caller, found.get("details")))
    return redaction.value(found) if redaction else found


def verdict(
    caller: Grant | None, reasons: Sequence[Mapping[str, Any]], hints: Sequence[str]
) -> tuple[list[Mapping[str, Any]], list[str]]:
    """A workload's reasons and hints: each reason by its own references, the hints (which
    speak of all of them) by every reason's."""
    if sees_all(caller):
        return list(reasons), list(hints)
    redaction = Redaction(hidden_references(caller, *(r.get("details") for r in reasons)))
    return [redaction.value(r) for r in reasons], [redaction.text(h) for h in hints]


def node_why(caller: Grant | None, why: str) -> str:
    """A node transition's why: the pod of a device error, if another namespace's, hidden."""
    pod = None if sees_all(caller) else device_error_pod(why)
    if pod is None or reference(caller, pod) != HIDDEN:
        return why
    return Redaction([pod]).text(why)


def owned(
    caller: Grant | None, namespace: str, name: str, found: Mapping[str, Any]
) -> tuple[str, str, Mapping[str, Any]]:
    """A workload's own event, listed apart from the workload (a node's displaced work):
    when its namespace is hidden, its name and the pod its device error names are too."""
    if may_see(caller, namespace):
        return namespace, name, details(caller, found)
    shown = dict(details(caller, found))
    error = shown.get("deviceError")
    if isinstance(error, Mapping) and "pod" in error:
        shown["deviceError"] = {**error, "pod": HIDDEN}
    return HIDDEN, HIDDEN, shown


def visible(caller: Grant | None, obj: object) -> bool:
    """Whether ``caller`` may see a ledger object: a LocalQueue or Namespace of its own."""
    if isinstance(obj, LocalQueue):
        return may_see(caller, obj.namespace)
    if isinstance(obj, Namespace):
        return may_see(caller, obj.name)
    return True


def require_object(caller: Grant | None, kind: str, name: str, namespace: str | None) -> None:
    """``Forbidden`` (403, like a workload of another namespace) for a LocalQueue or
    Namespace the caller may not see."""
    if namespace is not None:
        require_namespace(caller, namespace)
    elif kind == "Namespace" and not may_see(caller, name):
        raise Forbidden(f"this token may not see namespace {name!r}", field="name")
