"""Fair-sharing configuration and decayed usage (PURE, standard library only).

Kueue's ``fairSharing`` (share-ordered admission and preemption across a cohort, with its
two preemption strategies) and ``admissionFairSharing`` (a ClusterQueue whose
``admissionScope`` says ``UsageBasedAdmissionFairSharing`` orders its own workloads by
their LocalQueue's decayed usage), and Berth's fair sharing with memory: the cohort
share computed from decayed historical usage rather than from this instant's alone.

Decay is exponential with a half-life. Kueue samples usage every
``usageSamplingInterval`` and mixes it in (``old·(1−α) + now·α``, α = 1 − ½^(Δ/half-life));
Berth integrates the same decay exactly over the ledger's usage intervals, so nothing
runs between cycles and a restart loses nothing: a queue that held ``u`` steadily has a
decayed usage of ``u``, and one idle for six half-lives has 1/64 of what it held before.
The sampling interval keeps Kueue's other use: the entry penalty, α of a workload's
request counted from the moment it is admitted, so a burst admitted in one go is not
free until the next sample.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum


class PreemptionStrategy(StrEnum):
    """Kueue's fair-sharing preemption strategies (rules S2-a and S2-b of KEP 1714)."""

    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
    LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"


FINAL, INITIAL = PreemptionStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, (
    PreemptionStrategy.LESS_THAN_INITIAL_SHARE
)
DEFAULT_STRATEGIES: tuple[PreemptionStrategy, ...] = (FINAL, INITIAL)
# The only lists Kueue's configuration validation accepts, in this order.
ALLOWED_STRATEGIES: tuple[tuple[PreemptionStrategy, ...], ...] = ((FINAL,), (INITIAL,),
                                                                  (FINAL, INITIAL))
SAMPLING_DEFAULT = timedelta(minutes=5)
USAGE_BASED = "UsageBasedAdmissionFairSharing"  # the admissionScope.admissionMode value
MIN_RUNTIME_ANNOTATION = "berth.dev/min-runtime"


@dataclass(frozen=True, slots=True)
class AdmissionFairSharing:
    """Kueue's ``admissionFairSharing``; weights per resource in milli-units (1000 = 1)."""

    half_life: timedelta
    sampling: timedelta = SAMPLING_DEFAULT
    resource_weights: Mapping[str, int] = field(default_factory=dict)

    def entry_penalty(self) -> float:
        """α: the part of a request counted as used from the moment it is admitted."""
        return alpha(self.sampling, self.half_life)

    def weighted(self, usage: Mapping[str, float], queue_weight: int = 1000) -> float:
        """One number per LocalQueue: Σ resource weight × usage, over the LocalQueue's
        weight (milli-units; zero or less ranks it last). A ranking, not a quantity."""
        if queue_weight <= 0:
            return math.inf
        total = sum(self.resource_weights.get(r, 1000) / 1000 * amount
                    for r, amount in sorted(usage.items()))
        return total * 1000 / queue_weight


@dataclass(frozen=True, slots=True)
class Fairness:
    """Everything fair sharing is told by the configuration; the default is all off."""

    enable: bool = False  # fairSharing.enable
    strategies: tuple[PreemptionStrategy, ...] = DEFAULT_STRATEGIES
    admission: AdmissionFairSharing | None = None  # admissionFairSharing
    memory_half_life: timedelta | None = None  # berth.fairSharingHalfLife: share with memory


class Held:
    """One stretch of usage: ``amount`` held from ``start`` until ``end`` (None: still)."""

    __slots__ = ("amount", "end", "start")

    def __init__(self, amount: int, start: datetime, end: datetime | None) -> None:
        self.amount, self.start, self.end = amount, start, end


def alpha(elapsed: timedelta, half_life: timedelta) -> float:
    """Kueue's mixing rate: 1 − ½^(elapsed / half-life); 1 for a zero half-life."""
    if half_life <= timedelta(0):
        return 1.0
    return 1.0 - math.pow(0.5, elapsed / half_life)


def decayed(stretches: Iterable[Held], now: datetime, half_life: timedelta,
            penalty: float = 0.0) -> float:
    """The decayed usage at ``now`` of what ``stretches`` held: ∫ u(s)·λe^(−λ(now−s)) ds
    with λ = ln 2 / half-life, plus ``penalty`` × amount decayed from each start. A zero
    half-life forgets everything but what is held at ``now``."""
    total = 0.0
    for held in stretches:
        end = now if held.end is None or held.end > now else held.end
        if half_life <= timedelta(0):
            total += held.amount if held.end is None or held.end > now else 0
            continue
        rate = math.log(2) / half_life.total_seconds()
        start_age = max(0.0, (now - held.start).total_seconds())
        end_age = max(0.0, (now - end).total_seconds())
        total += held.amount * (math.exp(-rate * end_age) - math.exp(-rate * start_age))
        total += held.amount * penalty * math.exp(-rate * start_age)
    return total
