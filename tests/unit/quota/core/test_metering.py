"""Metering arithmetic: flavor prices, cost, and who owes whom for borrowed quota."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from quota.core.borrowing import Debt, Held, owed, owed_now
from quota.core.metering import Price, PriceError, format_prices, parse_prices
from quota.core.model import (
    ClusterQueue,
    Cohort,
    FlavorQuotas,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
)
from quota.manifests.documents import parse_objects, to_manifest

GPU = "nvidia.com/gpu"
GI = 2**30 * 1000  # one GiB in milli-units
T0 = datetime(2026, 1, 1, tzinfo=UTC)
HOUR = 3600


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("nvidia.com/gpu=2.50", {GPU: Price(Decimal("2.50"), 1000)}, id="per GPU-hour"),
        pytest.param("nvidia.com/gpu=2.5, cpu=0.031", {GPU: Price(Decimal("2.5"), 1000),
                                                        "cpu": Price(Decimal("0.031"), 1000)},
                     id="several resources"),
        pytest.param("memory=0.004/Gi", {"memory": Price(Decimal("0.004"), GI)},
                     id="a unit suffix alone means one of it"),
        pytest.param("memory=0.5/128Gi", {"memory": Price(Decimal("0.5"), 128 * GI)},
                     id="price per 128GiB-hour"),
        pytest.param("cpu=0", {"cpu": Price(Decimal("0"), 1000)}, id="free is a price"),
    ],
)
def test_prices_parse(text: str, expected: dict[str, Price]) -> None:
    assert parse_prices(text) == expected
    assert parse_prices(format_prices(expected)) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        pytest.param("", "is empty", id="empty"),
        pytest.param("2.50", "is not resource=price", id="a bare number names no resource"),
        pytest.param("nvidia.com/gpu=-1", "non-negative decimal", id="negative"),
        pytest.param("nvidia.com/gpu=1e3", "non-negative decimal", id="exponent"),
        pytest.param("nvidia.com/gpu=0.0000001", "at most 6 decimal places", id="too precise"),
        pytest.param("cpu=1,cpu=2", "priced twice", id="twice"),
        pytest.param("cpu=1/0", "more than zero", id="zero unit"),
        pytest.param("cpu=1/lots", "is not a quantity", id="unit not a quantity"),
        pytest.param("Bad Name=1", "not a resource name", id="bad resource name"),
    ],
)
def test_bad_prices_say_why(text: str, why: str) -> None:
    with pytest.raises(PriceError, match=why):
        parse_prices(text)


def test_cost_is_exact_per_unit_hour() -> None:
    # 4 GPUs for 90 minutes at 2.50 per GPU-hour: 15.00.
    assert Price(Decimal("2.50"), 1000).cost(4000 * 90 * 60) == Decimal("15")
    # 64GiB for 2 hours at 0.004 per GiB-hour: 0.512.
    assert Price(Decimal("0.004"), GI).cost(64 * GI * 2 * HOUR) == Decimal("0.512")


def test_a_flavor_price_annotation_round_trips_and_bad_ones_name_the_field() -> None:
    doc = {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
           "metadata": {"name": "h100", "annotations": {"berth.dev/price-per-hour":
                                                        "nvidia.com/gpu=2.5,memory=0.004/Gi"}}}
    (parsed,) = parse_objects([("f", 0, doc)])
    assert isinstance(parsed.obj, ResourceFlavor)
    assert parsed.obj.prices[GPU] == Price(Decimal("2.5"), 1000)
    (again,) = parse_objects([("f", 0, to_manifest(parsed.obj))])
    assert again.obj == parsed.obj

    doc["metadata"]["annotations"] = {"berth.dev/price-per-hour": "gpu=cheap"}  # type: ignore[index]
    with pytest.raises(Exception) as caught:
        parse_objects([("f", 0, doc)])
    problem = caught.value.problems[0]  # type: ignore[attr-defined]
    assert problem.field == "metadata.annotations[berth.dev/price-per-hour]"
    assert "'cheap'" in problem.message


def queue(name: str, gpus: int, *, cohort: str | None = "pool",
          lending: int | None = None) -> ClusterQueue:
    quota = ResourceQuota(GPU, gpus * 1000, None, None if lending is None else lending * 1000)
    return ClusterQueue(name, (ResourceGroup((GPU,), (FlavorQuotas("h100", (quota,)),)),),
                        cohort=cohort)


def held(cq: str, gpus: int, start_h: float, end_h: float | None) -> Held:
    end = None if end_h is None else T0 + timedelta(hours=end_h)
    return Held(cq, "h100", GPU, gpus * 1000, T0 + timedelta(hours=start_h), end)


def debts(intervals: list[Held], queues: list[ClusterQueue], cohorts: list[Cohort] | None = None,
          hours: float = 4) -> list[tuple[str, str, float]]:
    found = owed(intervals, {q.name: q for q in queues}, {c.name: c for c in cohorts or []},
                 T0, T0 + timedelta(hours=hours))
    return [(d.borrower, d.lender, d.milli_seconds / 1000 / HOUR) for d in found]


@pytest.mark.parametrize(
    ("intervals", "queues", "expected"),
    [
        pytest.param([held("b", 6, 0, 2)], [queue("a", 8), queue("b", 0)],
                     [("b", "a", 12.0)], id="b borrows 6 of a's idle GPUs for 2h: 12 GPU-hours"),
        pytest.param([held("b", 6, 0, 2), held("a", 2, 0, None)], [queue("a", 8), queue("b", 4)],
                     [("b", "a", 4.0)], id="only use above nominal is borrowed"),
        pytest.param([held("b", 4, 0, 1)], [queue("a", 6), queue("c", 2), queue("b", 0)],
                     [("b", "a", 3.0), ("b", "c", 1.0)],
                     id="several lenders share in proportion to what they leave unused"),
        pytest.param([held("b", 4, 0, 1)], [queue("a", 6, lending=2), queue("c", 2),
                                            queue("b", 0)],
                     [("b", "a", 2.0), ("b", "c", 2.0)],
                     id="a lending limit caps what a queue counts as lending"),
        pytest.param([held("b", 4, 0, None)], [queue("a", 8), queue("b", 0)],
                     [("b", "a", 16.0)], id="open intervals count to the end of the window"),
        pytest.param([held("b", 4, 0, 1)], [queue("a", 8, cohort=None), queue("b", 0, cohort=None)],
                     [], id="outside a cohort nothing is borrowed"),
    ],
)
def test_who_owes_whom(intervals: list[Held], queues: list[ClusterQueue],
                       expected: list[tuple[str, str, float]]) -> None:
    assert debts(intervals, queues) == expected


def test_a_cohorts_own_quota_lends_and_nested_cohorts_share_one_root() -> None:
    cohorts = [Cohort("pool", None, (ResourceGroup((GPU,), (FlavorQuotas(
        "h100", (ResourceQuota(GPU, 4000),)),)),)), Cohort("team", "pool")]
    found = owed([held("b", 8, 0, 1)], {"a": queue("a", 4, cohort="team"),
                                        "b": queue("b", 0, cohort="team")},
                 {c.name: c for c in cohorts}, T0, T0 + timedelta(hours=1))
    assert found == [Debt("pool", "b", "a", "h100", GPU, 4000 * HOUR),
                     Debt("pool", "b", "cohort:pool", "h100", GPU, 4000 * HOUR)]


@pytest.mark.parametrize(
    ("intervals", "queues", "expected"),
    [
        pytest.param([held("b", 6, 0, None)], [queue("a", 8), queue("b", 0)], [("b", "a", 6.0)],
                     id="b holds 6 of a's idle GPUs now"),
        pytest.param([held("b", 6, 0, None), held("a", 2, 0, None)],
                     [queue("a", 8), queue("b", 4)], [("b", "a", 2.0)],
                     id="only what is above its nominal quota is borrowed now"),
        pytest.param([held("b", 3, 0, None)], [queue("a", 4), queue("c", 2), queue("b", 0)],
                     [("b", "a", 2.0), ("b", "c", 1.0)],
                     id="lenders share now in proportion to what they leave unused"),
        pytest.param([held("b", 4, 0, None)], [queue("a", 8, cohort=None), queue("b", 0, cohort=None)],
                     [], id="outside a cohort nothing is borrowed now"),
    ],
)
def test_who_borrows_from_whom_now(intervals: list[Held], queues: list[ClusterQueue],
                                   expected: list[tuple[str, str, float]]) -> None:
    found = owed_now(intervals, {q.name: q for q in queues}, {})
    assert [(x.borrower, x.lender, x.amount / 1000) for x in found] == expected
