"""Quantities are exact integers in milli-units, parsed and formatted as Kubernetes does."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from quota.core.quantity import QuantityError, format_quantity, parse_quantity


@pytest.mark.parametrize(
    ("text", "milli"),
    [
        pytest.param("4", 4000, id="whole cores"),
        pytest.param("500m", 500, id="milli cores"),
        pytest.param("1.5", 1500, id="decimal fraction"),
        pytest.param("16Gi", 16 * 2**30 * 1000, id="binary suffix"),
        pytest.param("3Ti", 3 * 2**40 * 1000, id="terabytes of memory stay exact"),
        pytest.param("100k", 100_000_000, id="decimal suffix"),
        pytest.param("1e3", 1_000_000, id="exponent"),
        pytest.param("0.1m", 1, id="sub-milli rounds up like Kubernetes"),
        pytest.param(8, 8000, id="YAML integer"),
        pytest.param(2.5, 2500, id="YAML float is converted exactly"),
        pytest.param("-5", -5000, id="negative parses; validation rejects it elsewhere"),
    ],
)
def test_parses_kubernetes_quantities(text: object, milli: int) -> None:
    assert parse_quantity(text) == milli


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("12x", id="unknown suffix"),
        pytest.param("", id="empty"),
        pytest.param("Gi", id="suffix without number"),
        pytest.param(True, id="boolean"),
        pytest.param([1], id="list"),
        pytest.param(float("nan"), id="not a number"),
        pytest.param("1e999999", id="an exponent past what Decimal holds"),
        pytest.param("1e99999999", id="an exponent Decimal cannot even scale by"),
    ],
)
def test_rejects_what_is_not_a_quantity(text: object) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize(
    ("milli", "resource", "text"),
    [
        pytest.param(500, "cpu", "500m", id="fraction as milli"),
        pytest.param(8000, "nvidia.com/gpu", "8", id="whole devices"),
        pytest.param(16 * 2**30 * 1000, "memory", "16Gi", id="memory in binary units"),
        pytest.param(1536 * 2**30 * 1000, "memory", "1536Gi", id="largest exact binary unit"),
        pytest.param(1000 * 1000, "memory", "1000", id="bytes that are not a binary multiple"),
        pytest.param(2**30 * 1000, "cpu", "1073741824", id="cpu never uses binary suffixes"),
    ],
)
def test_formats_shortest_exact_form(milli: int, resource: str, text: str) -> None:
    assert format_quantity(milli, resource) == text


@given(st.integers(min_value=-(10**15), max_value=10**15), st.sampled_from(["cpu", "memory"]))
def test_format_then_parse_is_identity(milli: int, resource: str) -> None:
    assert parse_quantity(format_quantity(milli, resource)) == milli
