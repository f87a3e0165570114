"""Kubernetes resource quantities as exact integers in milli-units (PURE).

Every quantity inside Berth is an ``int`` counting thousandths of the resource's unit:
``"4"`` cpu is ``4000``, ``"500m"`` is ``500``, ``"16Gi"`` memory is ``16 * 2**30 * 1000``.
Floats never hold a quantity, so sums and comparisons are exact.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

MILLI = 1000

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
}
_PATTERN = re.compile(
    r"^(?P<sign>[+-]?)(?P<number>\d+(?:\.\d*)?|\.\d+)"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE](?P<exp>[+-]?\d+))?$"
)
# The same grammar as text for the OpenAPI document (no group names; spaces around allowed,
# as parse_quantity strips them; the sign, as "-0" is not negative).
QUANTITY_PATTERN = (
    r"^\s*[+-]?(\d+(\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?\s*$"
)
# Resources whose natural unit is bytes: formatted with binary suffixes when exact.
_BYTE_RESOURCES = ("memory", "ephemeral-storage", "storage")


class QuantityError(ValueError):
    """A value that is not a Kubernetes quantity (the message says why)."""


def parse_quantity(value: object) -> int:
    """Parse a Kubernetes quantity (``"4"``, ``"500m"``, ``"16Gi"``, ``2``) into milli-units.

    Rounds up to the next milli-unit like Kubernetes does for sub-milli precision.
    """
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is a boolean, not a quantity")
    if isinstance(value, int):
        return value * MILLI
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise QuantityError(f"{value!r} is not a finite quantity")
        return _to_milli(Decimal(repr(value)))
    if not isinstance(value, str):
        raise QuantityError(f"{value!r} is not a quantity (expected a string or number)")
    text = value.strip()
    match = _PATTERN.match(text)
    if match is None:
        raise QuantityError(f"{value!r} is not a valid quantity (e.g. 4, 500m, 16Gi)")
    try:
        number = Decimal(match["number"])
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only digits
        raise QuantityError(f"{value!r} is not a valid quantity") from exc
    try:
        if match["exp"] is not None:
            number = number.scaleb(int(match["exp"]))
        else:
            suffix = match["suffix"] or ""
            number *= _BINARY[suffix] if suffix in _BINARY else _DECIMAL[suffix]
        if match["sign"] == "-":
            number = -number
        return _to_milli(number)
    except ArithmeticError as exc:  # decimal.Overflow, InvalidOperation: "1e999999"
        raise QuantityError(f"{value!r} is out of range for a quantity") from exc


def _to_milli(number: Decimal) -> int:
    scaled = number * MILLI
    whole = int(scaled)
    if scaled > whole:
        whole += 1  # round up, as Kubernetes does
    return whole


def format_quantity(milli: int, resource: str | None = None) -> str:
    """Format milli-units as the shortest exact Kubernetes quantity string.

    Byte-valued resources (memory, storage) use binary suffixes where exact (``16Gi``).
    """
    sign = "-" if milli < 0 else ""
    milli = abs(milli)
    if milli % MILLI:
        return f"{sign}{milli}m"
    units = milli // MILLI
    if units and resource is not None and _is_bytes(resource):
        for suffix, factor in reversed(_BINARY.items()):
            if units % factor == 0:
                return f"{sign}{units // factor}{suffix}"
    return f"{sign}{units}"


def _is_bytes(resource: str) -> bool:
    return resource in _BYTE_RESOURCES or resource.startswith("hugepages-")


def format_resources(values: dict[str, int]) -> dict[str, str]:
    """Format a resource → milli-units mapping as resource → quantity string."""
    return {name: format_quantity(amount, name) for name, amount in values.items()}
