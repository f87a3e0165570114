"""Kueue's fair-sharing Configuration fields, as a scenario's config block writes them (the
block's other keys are admission.simulate.config's: tests/unit/admission/simulate/test_config.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from quota.core.fairness import FINAL, INITIAL, AdmissionFairSharing, Fairness
from quota.manifests.configuration import parse_fairness

ON = {"enable": True}


@pytest.mark.parametrize(
    ("config", "fairness"),
    [
        pytest.param(None, Fairness(), id="no config: everything off"),
        pytest.param({"fairSharing": ON}, Fairness(True, (FINAL, INITIAL)), id="on without strategies: both, Kueue's default order"),
        pytest.param({"fairSharing": {**ON, "preemptionStrategies": ["LessThanInitialShare"]}},
                     Fairness(True, (INITIAL,)), id="one strategy, as Kueue accepts"),
        pytest.param({"admissionFairSharing": {"usageHalfLifeTime": "168h"}},
                     Fairness(admission=AdmissionFairSharing(timedelta(hours=168))), id="admission fair sharing samples every 5m by default"),
        pytest.param({"admissionFairSharing": {"usageHalfLifeTime": "0s", "usageSamplingInterval": "1m", "resourceWeights": {"cpu": 2, "memory": "500m"}}},
                     Fairness(admission=AdmissionFairSharing(timedelta(0), timedelta(minutes=1), {"cpu": 2000, "memory": 500})),
                     id="a zero half-life and weights"),
        pytest.param({"fairSharing": ON, "berth": {"fairSharingHalfLife": "72h"}},
                     Fairness(True, memory_half_life=timedelta(hours=72)), id="fair sharing with memory"),
    ],
)  # fmt: skip
def test_the_config_block_is_read_as_kueue_spells_it(config: object, fairness: Fairness) -> None:
    assert parse_fairness(config) == (fairness, [])


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        pytest.param({"fairSharing": []}, "config.fairSharing", "must be a mapping", id="a section that is not a mapping"),
        pytest.param({"fairSharing": {"enable": "yes"}}, "config.fairSharing.enable", "not true or false", id="enable is a boolean"),
        pytest.param({"fairSharing": {**ON, "weight": 2}}, "config.fairSharing.weight", "unknown key", id="a ClusterQueue field in the configuration"),
        pytest.param({"fairSharing": {**ON, "preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]}},
                     "config.fairSharing.preemptionStrategies", "not one of Kueue's accepted lists", id="the strategies in the wrong order"),
        pytest.param({"fairSharing": {**ON, "preemptionStrategies": []}},
                     "config.fairSharing.preemptionStrategies", "not one of Kueue's accepted lists", id="no strategy at all"),
        pytest.param({"admissionFairSharing": {"usageHalfLifeTime": "7d"}},
                     "config.admissionFairSharing.usageHalfLifeTime", "is not a duration", id="days are not a Kubernetes duration"),
        pytest.param({"admissionFairSharing": {"usageHalfLifeTime": "1h", "usageSamplingInterval": "0s"}},
                     "config.admissionFairSharing.usageSamplingInterval", "longer than 0s", id="sampling never"),
        pytest.param({"admissionFairSharing": {"usageHalfLifeTime": "1h", "resourceWeights": {"cpu": -1}}},
                     "config.admissionFairSharing.resourceWeights", "must not be negative", id="a negative weight"),
        pytest.param({"berth": {"fairSharingHalfLife": "72h"}}, "config.berth.fairSharingHalfLife",
                     "needs fairSharing.enable", id="memory without fair sharing"),
        pytest.param({"berth": {"halfLife": "72h"}}, "config.berth.halfLife", "unknown key", id="an unknown Berth setting"),
    ],
)  # fmt: skip
def test_a_wrong_field_is_named(config: object, field: str, words: str) -> None:
    _, problems = parse_fairness(config)
    assert any(where == field and words in message for where, message in problems), problems
