"""Metering vocabulary and arithmetic (PURE): why usage ended, prices, cost.

A usage interval says a workload held ``amount`` of a resource in a flavor from start to
end. When an eviction ended it, ``lost_from`` marks where the unsaved work began (the last
checkpoint, else the start): from there to the end is preemption waste, or, when a node
fault ended it (NodeUnhealthy, or a PodsReadyTimeout of pods on a node Berth marked
unhealthy), hardware-fault time that is not charged to the tenant.

Prices: ``berth.dev/price-per-hour`` on a ResourceFlavor, a comma-separated list of
``resource=price`` or ``resource=price/quantity``: ``nvidia.com/gpu=2.50`` is 2.50 per GPU
per hour, ``memory=0.004/1Gi`` is 0.004 per GiB per hour. Without ``/quantity`` the price
is per one unit of the resource (one GPU, one CPU core, one byte). A resource without a
price costs nothing; a flavor without the annotation has no cost at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum

from quota.core.quantity import QuantityError, format_quantity, parse_quantity

PRICE_ANNOTATION = "berth.dev/price-per-hour"
_PRICE = re.compile(r"^\d+(\.\d{1,6})?$")
_RESOURCE = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)


class IntervalEnd(StrEnum):
    """Why a usage interval ended: how the workload stopped holding quota."""

    FINISHED = "Finished"  # completed (or marked finished)
    FAILED = "Failed"  # its Job failed
    DELETED = "Deleted"  # its Job was deleted while holding quota
    RECLAIMED = "Reclaimed"  # reconcile found no live Job or queue behind the allocation
    PREEMPTED = "Preempted"
    NODE_UNHEALTHY = "NodeUnhealthy"
    CLUSTER_QUEUE_STOPPED = "ClusterQueueStopped"
    DEACTIVATED = "Deactivated"
    PODS_READY_TIMEOUT = "PodsReadyTimeout"
    ADMISSION_CHECK = "AdmissionCheck"  # a check answered Retry: the reservation released
    MAXIMUM_EXECUTION_TIME_EXCEEDED = "MaximumExecutionTimeExceeded"


# Evictions: the work since the last checkpoint is lost when one of these ends an interval.
EVICTIONS = frozenset(IntervalEnd) - {
    IntervalEnd.FINISHED, IntervalEnd.FAILED, IntervalEnd.DELETED, IntervalEnd.RECLAIMED,
}


@dataclass(frozen=True, slots=True)
class Price:
    """``amount`` (currency) per hour for each ``per`` milli-units of the resource."""

    amount: Decimal
    per: int  # milli-units: 1000 for one unit

    def cost(self, milli_seconds: int) -> Decimal:
        """The cost of holding ``milli_seconds`` (milli-units × seconds) at this price."""
        return self.amount * Decimal(milli_seconds) / (Decimal(self.per) * 3600)


class PriceError(ValueError):
    """A price annotation that cannot be read; the message says which part and why."""


def parse_prices(text: str) -> dict[str, Price]:
    """``nvidia.com/gpu=2.50, memory=0.004/1Gi`` → prices by resource; PriceError else."""
    prices: dict[str, Price] = {}
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise PriceError("is empty; expected e.g. nvidia.com/gpu=2.50")
    for item in items:
        resource, sep, value = item.partition("=")
        resource, value = resource.strip(), value.strip()
        if not sep or not resource or not value:
            raise PriceError(f"{item!r} is not resource=price (e.g. nvidia.com/gpu=2.50)")
        if not _RESOURCE.match(resource):
            raise PriceError(f"{resource!r} is not a resource name")
        if resource in prices:
            raise PriceError(f"{resource} is priced twice")
        amount_text, _, per_text = value.partition("/")
        amount_text = amount_text.strip()
        if not _PRICE.fullmatch(amount_text):
            raise PriceError(
                f"price {amount_text!r} of {resource} must be a non-negative decimal with at "
                "most 6 decimal places (e.g. 2.50)"
            )
        per = 1000
        if per_text.strip():
            per = _per(resource, per_text.strip())
        try:
            prices[resource] = Price(Decimal(amount_text), per)
        except InvalidOperation as exc:  # the pattern above makes this unreachable
            raise PriceError(f"price {amount_text!r} of {resource}: {exc}") from exc
    return prices


def _per(resource: str, text: str) -> int:
    spelled = f"1{text}" if text[0].isalpha() else text  # "Gi" means 1Gi
    try:
        per = parse_quantity(spelled)
    except QuantityError as exc:
        raise PriceError(f"unit {text!r} of {resource} is not a quantity: {exc}") from exc
    if per <= 0:
        raise PriceError(f"unit {text!r} of {resource} must be more than zero")
    return per


def format_prices(prices: Mapping[str, Price]) -> str:
    """The annotation text of ``prices`` (``parse_prices`` reads it back equal)."""
    parts = []
    for resource in sorted(prices):
        price = prices[resource]
        amount = format(price.amount.normalize(), "f")
        if price.per == 1000:
            parts.append(f"{resource}={amount}")
        else:
            parts.append(f"{resource}={amount}/{format_quantity(price.per, resource)}")
    return ",".join(parts)


def prices_json(prices: Mapping[str, Price]) -> dict[str, dict[str, object]]:
    return {r: {"price": str(p.amount), "per": p.per} for r, p in sorted(prices.items())}


def from_prices_json(data: Mapping[str, Mapping[str, object]] | None) -> dict[str, Price]:
    return {
        r: Price(Decimal(str(p["price"])), int(str(p["per"]))) for r, p in (data or {}).items()
    }
