"""A verdict as the ledger stores it (PURE): the value a JSONB column gives back for a
Python value, without the JSON round trip; a workload's stored verdict and primary reason
(the loop writes them every cycle, intake writes a workload's first one).

The loop compares each pending workload's new verdict with the stored one, so it needs the
verdict as PostgreSQL returns it: what ``json.loads(json.dumps(value, default=str))``
gives (tuples become lists, keys strings, anything else its ``str``). Encoding and decoding
every verdict that way was most of the cycle with thousands waiting; this builds the same
value directly, and ``StoredForms`` builds each shared wait reason once per cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from admission.engine.types import PendingStatus, Reason
from quota.core.cycle_writes import Verdict
from quota.core.reasons import WaitReason

_FLOAT_KEYS = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


def stored(value: object) -> Any:
    """``value`` as ``json.loads(json.dumps(value, default=str))`` returns it."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return value if type(value) is str else str.__str__(value)
    if isinstance(value, int):
        return value if type(value) is int else int(value)
    if isinstance(value, float):
        return value if type(value) is float else float(value)
    if isinstance(value, dict):
        return {_key(k): stored(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [stored(v) for v in value]
    return str(value)


def _key(key: object) -> str:
    # JSON object keys are strings: json turns these into their JSON spelling.
    if isinstance(key, str):
        return key if type(key) is str else str.__str__(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    if isinstance(key, float):
        if key != key:
            return "NaN"
        return _FLOAT_KEYS.get(key) or float.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


class StoredForms:
    """Stored forms of wait reasons, each built once: the engine shares one ``Reason``
    among every workload waiting in the same queue state."""

    __slots__ = ("_forms",)

    def __init__(self) -> None:
        # id -> (the reason, kept alive so its id is not reused; its stored form)
        self._forms: dict[int, tuple[Reason, dict[str, Any]]] = {}

    def reasons(self, reasons: Sequence[Reason]) -> tuple[dict[str, Any], ...]:
        forms = self._forms
        out = []
        for reason in reasons:
            found = forms.get(id(reason))
            if found is None:
                found = forms[id(reason)] = (reason, stored(reason.to_dict()))
            out.append(found[1])
        return tuple(out)


def verdict_of(status: PendingStatus, forms: StoredForms | None = None) -> Verdict:
    """The stored form of a pending status (as JSON would give it back); ``forms`` shares
    the stored form of reasons seen before."""
    reasons = (forms or StoredForms()).reasons(status.reasons)
    return Verdict(str(status.reason.code), reasons, tuple(status.hints), status.position)


def primary_of(verdict: Verdict, key: str) -> Reason:
    """The stored primary reason as a value (for re-actuating after a restart)."""
    if not verdict.reasons or verdict.code is None:
        return Reason(WaitReason.PENDING_EVALUATION, f"{key} is queued, not evaluated yet")
    first = verdict.reasons[0]
    return Reason(
        WaitReason(verdict.code), str(first.get("message", "")), dict(first.get("details") or {})
    )
