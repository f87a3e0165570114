"""The stored form of a verdict is exactly what the JSON round trip through JSONB gives."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from admission.engine.stored_form import StoredForms, stored
from admission.engine.types import Reason
from quota.core.reasons import WaitReason


class Level(IntEnum):
    LOW = 1


def _round_trip(value: object) -> Any:
    return json.loads(json.dumps(value, default=str))


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.sampled_from(list(WaitReason))
    | st.just(Level.LOW)
    | st.datetimes(timezones=st.just(UTC))
    | st.timedeltas()
)
keys = (st.text() | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False)
        | st.sampled_from(list(WaitReason)))
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4)
    | st.lists(inner, max_size=4).map(tuple)
    | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)


@given(values)
def test_stored_equals_the_json_round_trip(value: object) -> None:
    assert stored(value) == _round_trip(value)


@given(values)
def test_stored_has_the_types_json_gives_back(value: object) -> None:
    # Equality alone would let True pass for 1 and a StrEnum for its string.
    assert repr(stored(value)) == repr(_round_trip(value))


def test_non_finite_float_keys_are_spelled_as_json_spells_them() -> None:
    value = {math.inf: 1, -math.inf: 2, math.nan: 3}

    assert stored(value) == _round_trip(value) == {"Infinity": 1, "-Infinity": 2, "NaN": 3}


@pytest.mark.parametrize(
    "bad", [pytest.param({(1, 2): 0}, id="tuple"), pytest.param({frozenset(): 0}, id="set")]
)
def test_keys_json_cannot_encode_are_refused_as_json_refuses_them(bad: object) -> None:
    with pytest.raises(TypeError):
        json.dumps(bad, default=str)
    with pytest.raises(TypeError, match="keys must be str"):
        stored(bad)


def test_a_shared_reason_is_converted_once_and_equals_its_round_trip() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    reason = Reason(WaitReason.WAITING_FOR_QUOTA, "short", {"holders": ("a/x",), "at": when,
                                                             "grace": timedelta(minutes=5)})
    forms = StoredForms()

    first, second = forms.reasons([reason]), forms.reasons([reason])

    assert first == (_round_trip(reason.to_dict()),)
    assert first[0] is second[0]
    assert first[0]["details"]["at"] == "2026-01-01 00:00:00+00:00"
