"""Node health settings from the environment: defaults, overrides, errors naming the variable."""

from __future__ import annotations

import pytest
import yaml
from builders.paths import DEPLOY

from berth.settings import device_error_exit_codes, health_thresholds
from quota.core.errors import BerthError
from quota.core.node_health import DEFAULT_DEVICE_RESOURCES, HealthThresholds


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, HealthThresholds(2, 25, True, DEFAULT_DEVICE_RESOURCES), id="defaults"),
        pytest.param(
            {"BERTH_HEALTH_CORDON_DEVICES": "1", "BERTH_HEALTH_CORDON_PERCENT": "0",
             "BERTH_HEALTH_CORDON_NOT_READY": "false",
             "BERTH_HEALTH_DEVICE_RESOURCES": "amd.com/gpu, nvidia.com/*"},
            HealthThresholds(1, 0, False, ("amd.com/gpu", "nvidia.com/*")),
            id="every knob set",
        ),
    ],
)  # fmt: skip
def test_health_thresholds(env: dict[str, str], expected: HealthThresholds) -> None:
    assert health_thresholds(env) == expected


@pytest.mark.parametrize(
    ("env", "message"),
    [
        pytest.param({"BERTH_HEALTH_CORDON_DEVICES": "-1"}, "BERTH_HEALTH_CORDON_DEVICES: '-1'",
                     id="negative count"),
        pytest.param({"BERTH_HEALTH_CORDON_PERCENT": "150"}, "(0-100)", id="percent over 100"),
        pytest.param({"BERTH_HEALTH_CORDON_NOT_READY": "maybe"}, "not true or false",
                     id="not a flag"),
    ],
)  # fmt: skip
def test_bad_health_settings_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(BerthError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        health_thresholds(env)
    assert err.value.field == next(iter(env))


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        pytest.param(None, {74}, id="default"),
        pytest.param("74, 75,,139", {74, 75, 139}, id="a list"),
        pytest.param("", set(), id="empty turns it off"),
    ],
)
def test_device_error_exit_codes(text: str | None, codes: set[int]) -> None:
    env = {} if text is None else {"BERTH_DEVICE_ERROR_EXIT_CODES": text}
    assert device_error_exit_codes(env) == codes


@pytest.mark.parametrize("text", ["0", "256", "x1"])
def test_bad_exit_code_is_named(text: str) -> None:
    with pytest.raises(BerthError, match=f"BERTH_DEVICE_ERROR_EXIT_CODES: '{text}'"):
        device_error_exit_codes({"BERTH_DEVICE_ERROR_EXIT_CODES": text})


def test_the_deploy_example_uses_the_default_device_error_codes() -> None:
    example = DEPLOY / "examples" / "job-device-errors.yaml"
    job = yaml.safe_load(example.read_text())
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    [rule] = [r for r in job["spec"]["podFailurePolicy"]["rules"] if "onExitCodes" in r]
    assert rule["action"] == "Ignore"  # FailJob would end the Job instead of requeueing it
    assert rule["onExitCodes"]["operator"] == "In"
    assert set(rule["onExitCodes"]["values"]) == device_error_exit_codes({})
