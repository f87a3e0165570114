"""A scenario's ``config.waitForPodsReady``: Kueue's fields and defaults; bad input named."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from admission.simulate.config import read_config
from quota.core.pods_ready import DISABLED, PodsReadyPolicy, RequeuingTimestamp

READ = [
    pytest.param(None, DISABLED, id="no config: disabled"),
    pytest.param({"waitForPodsReady": {}}, DISABLED,
                 id="Kueue v1beta1: without enable it stays off"),
    pytest.param({"waitForPodsReady": {"enable": True}},
                 PodsReadyPolicy(enable=True, timeout=timedelta(minutes=5)),
                 id="enabled with Kueue's defaults: 5m, base 60s, max 3600s, no limit"),
    pytest.param({"waitForPodsReady": {
        "enable": True, "timeout": "10m", "blockAdmission": True, "recoveryTimeout": "2m",
        "requeuingStrategy": {"timestamp": "Creation", "backoffLimitCount": 3,
                              "backoffBaseSeconds": 10, "backoffMaxSeconds": 600}}},
        PodsReadyPolicy(True, timedelta(minutes=10), True, timedelta(minutes=2),
                        RequeuingTimestamp.CREATION, 3, 10, 600),
        id="every field as Kueue spells it"),
]


@pytest.mark.parametrize(("raw", "policy"), READ)
def test_reads_wait_for_pods_ready(raw: Any, policy: PodsReadyPolicy) -> None:
    problems: list[tuple[str, str]] = []
    assert read_config(raw, lambda f, m: problems.append((f, m))) == policy
    assert problems == []


BAD = [
    pytest.param({"fairSharing": {"enable": True}}, "config.fairSharing", "unknown key",
                 id="another Kueue section is refused by name"),
    pytest.param({"waitForPodsReady": {"enable": "yes"}}, "config.waitForPodsReady.enable",
                 "true or false", id="enable is a boolean"),
    pytest.param({"waitForPodsReady": {"timeout": "5 minutes"}},
                 "config.waitForPodsReady.timeout", "not a duration", id="a timeout in words"),
    pytest.param({"waitForPodsReady": {"timeout": "0s"}}, "config.waitForPodsReady.timeout",
                 "longer than 0s", id="a zero timeout"),
    pytest.param({"waitForPodsReady": {"requeuingStrategy": {"timestamp": "Admission"}}},
                 "config.waitForPodsReady.requeuingStrategy.timestamp", "Eviction or Creation",
                 id="an unknown requeuing timestamp"),
    pytest.param({"waitForPodsReady": {"requeuingStrategy": {"backoffLimitCount": -1}}},
                 "config.waitForPodsReady.requeuingStrategy.backoffLimitCount", "at least 0",
                 id="a negative limit"),
    pytest.param({"waitForPodsReady": {"requeuingStrategy": {"backoffBaseSeconds": 1.5}}},
                 "config.waitForPodsReady.requeuingStrategy.backoffBaseSeconds", "whole number",
                 id="a fractional base"),
    pytest.param({"waitForPodsReady": {"requeuingStrategy": {"jitter": 0.1}}},
                 "config.waitForPodsReady.requeuingStrategy.jitter", "unknown key",
                 id="an unknown strategy key"),
    pytest.param([1], "config", "mapping", id="config is a mapping"),
]


@pytest.mark.parametrize(("raw", "field", "message"), BAD)
def test_refuses_bad_config_naming_the_field(raw: Any, field: str, message: str) -> None:
    problems: list[tuple[str, str]] = []
    read_config(raw, lambda f, m: problems.append((f, m)))
    assert any(f == field and message in m for f, m in problems), problems
