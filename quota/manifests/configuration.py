"""Kueue's Configuration fields for fair sharing, as Kueue spells them (PURE, text in).

One owner for both places that take them: a scenario's ``config:`` block (``berth
simulate``, ``POST /api/v1/simulate``) is read whole by ``parse_fairness``; ``berth serve``'s
settings file and ``BERTH_*`` variables read the same leaves one at a time through the
leaf parsers here into ``FairSharingSettings``, their part of ``berth.settings``' tree, so
both accept and refuse the same values::

    fairSharing: {enable: true, preemptionStrategies: [LessThanOrEqualToFinalShare,
                                                       LessThanInitialShare]}
    admissionFairSharing: {usageHalfLifeTime: 168h, usageSamplingInterval: 5m,
                           resourceWeights: {cpu: 2, memory: 1}}
    berth: {fairSharingHalfLife: 72h}

Defaults are Kueue's: both strategies in that order when fair sharing is on and none are
given, a 5m sampling interval, weight 1 per resource.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from quota.core.fairness import (
    ALLOWED_STRATEGIES,
    DEFAULT_STRATEGIES,
    SAMPLING_DEFAULT,
    AdmissionFairSharing,
    Fairness,
    PreemptionStrategy,
)
from quota.core.pods_ready import parse_duration
from quota.core.quantity import QuantityError, parse_quantity

_FS_KEYS = ("enable", "preemptionStrategies")
_AFS_KEYS = ("usageHalfLifeTime", "usageSamplingInterval", "resourceWeights")
_BERTH_KEYS = ("fairSharingHalfLife",)
# Every key of a scenario's config block, by section.
KEYS = {"fairSharing": _FS_KEYS, "admissionFairSharing": _AFS_KEYS, "berth": _BERTH_KEYS}
TOP_KEYS = tuple(KEYS)


@dataclass(frozen=True, slots=True)
class FairSharingSettings:
    """Kueue's ``fairSharing`` and ``admissionFairSharing``, and Berth's fair sharing with
    memory: all off by default, when the engine admits and preempts by priority and age."""

    enable: bool = False
    strategies: tuple[PreemptionStrategy, ...] = DEFAULT_STRATEGIES
    admission_half_life: timedelta | None = None  # set: admission fair sharing is on
    admission_sampling: timedelta | None = None
    admission_weights: Mapping[str, int] | None = None
    memory_half_life: timedelta | None = None

    def problem(self) -> tuple[str, str] | None:
        """What no single leaf shows: (the settings file key, why), or None."""
        if self.admission_half_life is None and (self.admission_sampling
                                                 or self.admission_weights):
            return ("admissionFairSharing.usageHalfLifeTime",
                    "required with the other admissionFairSharing settings")
        if self.memory_half_life is not None and not self.enable:
            return ("berth.fairSharingHalfLife",
                    "fair sharing with memory needs fair sharing on (fairSharing.enable)")
        return None

    def fairness(self) -> Fairness:
        """The engine's configuration."""
        admission = None
        if self.admission_half_life is not None:
            admission = AdmissionFairSharing(
                self.admission_half_life, self.admission_sampling or SAMPLING_DEFAULT,
                dict(self.admission_weights or {}))
        return Fairness(self.enable, self.strategies, admission, self.memory_half_life)


CONFIG_GROUP = "config.kueue.x-k8s.io"


def as_settings(document: Mapping[object, object]) -> dict[object, object]:
    """A settings file that is a Kueue Configuration (``apiVersion:
    config.kueue.x-k8s.io/v1beta1|v1beta2``, ``kind: Configuration``) without its header;
    in v1beta2, which has no ``fairSharing.enable``, the section's presence turns fair
    sharing on, as in Kueue. Any other document is returned as it is."""
    api, kind = document.get("apiVersion"), document.get("kind")
    if api is None and kind is None:
        return dict(document)
    versions = (f"{CONFIG_GROUP}/v1beta1", f"{CONFIG_GROUP}/v1beta2")
    if api not in versions or kind != "Configuration":
        raise ValueError(f"apiVersion/kind: expected kind Configuration of {' or '.join(versions)}"
                         f", got {api}/{kind}")
    out = {k: v for k, v in document.items() if k not in ("apiVersion", "kind")}
    fair = out.get("fairSharing")
    if api == versions[1] and isinstance(fair, Mapping):
        if "enable" in fair:
            raise ValueError("fairSharing.enable: not a v1beta2 field (the section turns fair "
                             "sharing on)")
        out["fairSharing"] = {**fair, "enable": True}
    return out


def parse_go_duration(raw: object, *, positive: bool = False) -> timedelta:
    """A Kubernetes duration as Kueue's configuration writes it (``quota.core.pods_ready``
    owns the format: ``168h``, ``5m``, ``1h30m``, ``0s``); ``positive``: more than zero."""
    value = parse_duration(raw)
    if positive and value <= timedelta(0):
        raise ValueError(f"{raw!r} must be longer than 0s")
    return value


def parse_strategies(raw: object) -> tuple[PreemptionStrategy, ...]:
    """One of Kueue's three accepted lists of preemption strategies."""
    items = [p.strip() for p in raw.split(",")] if isinstance(raw, str) else raw
    if not isinstance(items, list):
        raise ValueError(f"{raw!r} is not a list of preemption strategies")
    known = {str(s): s for s in PreemptionStrategy}
    bad = [str(i) for i in items if str(i) not in known]
    if bad:
        raise ValueError(f"unknown strategy {bad[0]!r}; expected {', '.join(known)}")
    found = tuple(known[str(i)] for i in items)
    if found not in ALLOWED_STRATEGIES:
        lists = "; ".join(", ".join(s) for s in ALLOWED_STRATEGIES)
        raise ValueError(f"[{', '.join(found)}] is not one of Kueue's accepted lists: {lists}")
    return found


def parse_weights(raw: object) -> dict[str, int]:
    """Resource weights (``{cpu: 2, memory: 1}``, or ``cpu=2,memory=1`` in a variable) in
    milli-units; none negative."""
    if isinstance(raw, str):
        pairs = [p.split("=", 1) for p in raw.split(",") if p.strip()]
        if any(len(p) != 2 for p in pairs):
            raise ValueError(f"{raw!r} is not resource=weight pairs (e.g. cpu=2,memory=1)")
        items: Mapping[object, object] = {k.strip(): v.strip() for k, v in pairs}
    elif isinstance(raw, Mapping):
        items = raw
    else:
        raise ValueError(f"{raw!r} is not a mapping of resource to weight")
    weights: dict[str, int] = {}
    for name, value in items.items():
        try:
            milli = parse_quantity(value if not isinstance(value, bool) else "x")
        except QuantityError:
            raise ValueError(f"{name}: {value!r} is not a weight (a number)") from None
        if milli < 0:
            raise ValueError(f"{name}: must not be negative, got {value!r}")
        weights[str(name)] = milli
    return weights


def parse_fairness(raw: object) -> tuple[Fairness, list[tuple[str, str]]]:
    """The fair-sharing sections (``TOP_KEYS``) of a scenario's ``config`` block: the value,
    and (field, message) for each problem in them (the block itself, and its other keys,
    are ``admission.simulate.config``'s to check)."""
    problems: list[tuple[str, str]] = []
    if not isinstance(raw, Mapping):
        return Fairness(), problems
    fs = _section(raw, "fairSharing", _FS_KEYS, problems)
    afs = _section(raw, "admissionFairSharing", _AFS_KEYS, problems)
    own = _section(raw, "berth", _BERTH_KEYS, problems)

    def leaf(section: Mapping[object, object], where: str, key: str, parse: object) -> object:
        if section.get(key) is None:
            return None
        try:
            return parse(section[key])  # type: ignore[operator]
        except ValueError as exc:
            problems.append((f"config.{where}.{key}", str(exc)))
            return None

    enable = fs.get("enable", False)
    if not isinstance(enable, bool):
        problems.append(("config.fairSharing.enable", f"{enable!r} is not true or false"))
        enable = False
    strategies = leaf(fs, "fairSharing", "preemptionStrategies", parse_strategies)
    admission = None
    if "admissionFairSharing" in raw:
        half = leaf(afs, "admissionFairSharing", "usageHalfLifeTime", parse_go_duration)
        sampling = leaf(afs, "admissionFairSharing", "usageSamplingInterval",
                        lambda r: parse_go_duration(r, positive=True))
        weights = leaf(afs, "admissionFairSharing", "resourceWeights", parse_weights)
        admission = AdmissionFairSharing(
            half if isinstance(half, timedelta) else timedelta(0),
            sampling if isinstance(sampling, timedelta) else SAMPLING_DEFAULT,
            weights if isinstance(weights, dict) else {},
        )
    memory = leaf(own, "berth", "fairSharingHalfLife",
                  lambda r: parse_go_duration(r, positive=True))
    fairness = Fairness(
        enable=enable,
        strategies=strategies if isinstance(strategies, tuple) else Fairness().strategies,
        admission=admission,
        memory_half_life=memory if isinstance(memory, timedelta) else None,
    )
    if fairness.memory_half_life is not None and not fairness.enable:
        problems.append(("config.berth.fairSharingHalfLife",
                         "fair sharing with memory needs fairSharing.enable: true"))
    return fairness, problems


def _section(raw: Mapping[object, object], key: str, known: tuple[str, ...],
             problems: list[tuple[str, str]]) -> Mapping[object, object]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        problems.append((f"config.{key}", "must be a mapping"))
        return {}
    for name in value:
        if name not in known:
            problems.append((f"config.{key}.{name}",
                             f"unknown key; expected {', '.join(known)}"))
    return value
