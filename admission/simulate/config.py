"""A scenario's ``config``: Kueue's Configuration fields, as Kueue spells them (PURE).

Only ``waitForPodsReady`` is read; any other key is refused naming it. The fields and
defaults are Kueue's v1beta1 ones (``quota.core.pods_ready``), the same ``berth serve``
reads from its settings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from quota.core.pods_ready import DISABLED, PodsReadyPolicy, RequeuingTimestamp, parse_duration

# (field path from the document root, message)
Report = Callable[[str, str], None]

_CONFIG_KEYS = ("waitForPodsReady",)
_READY_KEYS = ("enable", "timeout", "blockAdmission", "recoveryTimeout", "requeuingStrategy")
_STRATEGY_KEYS = ("timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds")


def read_config(raw: object, report: Report) -> PodsReadyPolicy:
    """The run's waitForPodsReady policy from ``config`` (absent: disabled)."""
    if raw is None:
        return DISABLED
    if not isinstance(raw, Mapping):
        report("config", "must be a mapping of Kueue Configuration fields")
        return DISABLED
    _unknown(raw, _CONFIG_KEYS, "config", report)
    ready = raw.get("waitForPodsReady")
    if ready is None:
        return DISABLED
    if not isinstance(ready, Mapping):
        report("config.waitForPodsReady", "must be a mapping (enable, timeout, ...)")
        return DISABLED
    return _ready(ready, "config.waitForPodsReady", report)


def _ready(raw: Mapping[object, object], field: str, report: Report) -> PodsReadyPolicy:
    _unknown(raw, _READY_KEYS, field, report)
    policy = DISABLED
    enable = raw.get("enable", False)
    if isinstance(enable, bool):
        policy = replace(policy, enable=enable)
    else:
        report(f"{field}.enable", "must be true or false")
    block = raw.get("blockAdmission", False)
    if isinstance(block, bool):
        policy = replace(policy, block_admission=block)
    else:
        report(f"{field}.blockAdmission", "must be true or false")
    durations: dict[str, Any] = {}
    for key, attr in (("timeout", "timeout"), ("recoveryTimeout", "recovery_timeout")):
        if key in raw:
            try:
                durations[attr] = parse_duration(raw[key])
            except ValueError as exc:
                report(f"{field}.{key}", str(exc))
    policy = replace(policy, **durations)
    if not policy.timeout:
        report(f"{field}.timeout", "must be longer than 0s")
    strategy = raw.get("requeuingStrategy")
    if strategy is None:
        return policy
    if not isinstance(strategy, Mapping):
        report(f"{field}.requeuingStrategy", "must be a mapping (timestamp, backoffLimitCount)")
        return policy
    return _strategy(policy, strategy, f"{field}.requeuingStrategy", report)


def _strategy(
    policy: PodsReadyPolicy, raw: Mapping[object, object], field: str, report: Report
) -> PodsReadyPolicy:
    _unknown(raw, _STRATEGY_KEYS, field, report)
    if "timestamp" in raw:
        try:
            policy = replace(policy, timestamp=RequeuingTimestamp(str(raw["timestamp"])))
        except ValueError:
            report(f"{field}.timestamp", "must be Eviction or Creation")
    numbers: dict[str, Any] = {}
    for key, attr, low in (("backoffLimitCount", "backoff_limit_count", 0),
                           ("backoffBaseSeconds", "backoff_base_seconds", 1),
                           ("backoffMaxSeconds", "backoff_max_seconds", 1)):  # fmt: skip
        if key not in raw:
            continue
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            report(f"{field}.{key}", f"must be a whole number of at least {low}")
        else:
            numbers[attr] = value
    return replace(policy, **numbers)


def _unknown(raw: Mapping[object, object], known: tuple[str, ...], field: str,
             report: Report) -> None:  # fmt: skip
    for key in raw:
        if key not in known:
            report(f"{field}.{key}", f"unknown key; expected one of: {', '.join(known)}")
