"""Ledger objects against real PostgreSQL: upsert outcomes, versions, delete, lookups, exactness."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from builders.ledger import cluster_queue, group, one_of_each, quotas
from sqlalchemy.orm import Session

from quota.core.errors import Conflict, InvalidInput, NotFound
from quota.core.model import (
    Cohort,
    FlavorQuotas,
    LocalQueue,
    Namespace,
    Node,
    NodeHealth,
    PriorityClass,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Topology,
)
from quota.core.quantity import parse_quantity
from quota.ledger.repository import Ledger


def _key(obj: Any) -> tuple[str, str, str | None]:
    kind = "WorkloadPriorityClass" if isinstance(obj, PriorityClass) else type(obj).__name__
    return kind, obj.name, getattr(obj, "namespace", None)


CHANGES = [
    pytest.param(
        ResourceFlavor("h100"),
        ResourceFlavor("h100", node_labels={"gpu": "h100"}),
        id="flavor gains a node label",
    ),
    pytest.param(
        cluster_queue("team-a", group(quotas("h100", cpu="8"))),
        cluster_queue("team-a", group(quotas("h100", cpu="16"))),
        id="cluster queue quota raised",
    ),
    pytest.param(
        cluster_queue("team-a", group(quotas("h100", gpu="8"), quotas("a100", gpu="8"))),
        cluster_queue("team-a", group(quotas("a100", gpu="8"), quotas("h100", gpu="8"))),
        id="swapping flavor order is a change because the engine tries flavors in order",
    ),
    pytest.param(
        cluster_queue("team-a", group(quotas("h100", cpu="8"))),
        cluster_queue("team-a", group(quotas("h100", cpu="8")), cohort="lab"),
        id="cluster queue joins a cohort",
    ),
    pytest.param(Cohort("lab"), Cohort("lab", parent="org"), id="cohort gets a parent"),
    pytest.param(
        LocalQueue("team-a", "main", "team-a"),
        LocalQueue("team-a", "main", "team-b"),
        id="local queue points at another cluster queue",
    ),
    pytest.param(PriorityClass("high", 100), PriorityClass("high", 200), id="priority raised"),
    pytest.param(Namespace("ml"), Namespace("ml", {"team": "a"}), id="namespace relabelled"),
    pytest.param(Topology("dc", ("rack",)), Topology("dc", ("block", "rack")), id="topology grows"),
    pytest.param(
        Node("n1"),
        Node("n1", unschedulable=True, health=NodeHealth.CORDONED),
        id="node cordoned",
    ),
]


@pytest.mark.parametrize(("original", "changed"), CHANGES)
def test_upsert_creates_then_leaves_alone_then_configures(
    ledger: Ledger, original: Any, changed: Any
) -> None:
    kind, name, namespace = _key(original)

    assert ledger.upsert(original, actor="alice") == "created"
    assert ledger.version(kind, name, namespace) == 1
    assert ledger.upsert(original, actor="alice") == "unchanged"
    assert ledger.version(kind, name, namespace) == 1
    assert ledger.upsert(changed, actor="bob") == "configured"
    assert ledger.version(kind, name, namespace) == 2
    assert ledger.get(kind, name, namespace) == changed

    entries = ledger.audit_entries(kind, name)
    assert [(e["action"], e["actor"]) for e in entries] == [("create", "alice"), ("update", "bob")]
    assert entries[0]["before"] is None and entries[0]["after"]["version"] == 1
    assert entries[1]["before"]["version"] == 1 and entries[1]["after"]["version"] == 2
    assert entries[1]["before"] != entries[1]["after"]


def test_audit_row_records_quota_as_exact_integers(ledger: Ledger) -> None:
    ledger.upsert(cluster_queue("team-a", group(quotas("h100", memory="3Ti"))), actor="a")
    ledger.upsert(cluster_queue("team-a", group(quotas("h100", memory="4Ti"))), actor="a")

    update = ledger.audit_entries("ClusterQueue", "team-a")[-1]
    nominal = [
        g["flavors"][0]["resources"][0]["nominal"]
        for g in (update["before"]["resource_groups"][0], update["after"]["resource_groups"][0])
    ]
    assert nominal == [3 * 2**40 * 1000, 4 * 2**40 * 1000]


def test_delete_removes_the_object_and_its_quota_and_is_audited(
    ledger: Ledger, session: Session
) -> None:
    ledger.upsert(cluster_queue("team-a"), actor="a")

    assert ledger.delete("ClusterQueue", "team-a", actor="b") is True
    assert ledger.get("ClusterQueue", "team-a") is None
    assert ledger.version("ClusterQueue", "team-a") is None
    assert session.execute(sa.text("SELECT count(*) FROM quotas")).scalar() == 0
    last = ledger.audit_entries("ClusterQueue", "team-a")[-1]
    assert (last["action"], last["actor"], last["after"]) == ("delete", "b", None)
    assert last["before"]["name"] == "team-a"


def test_deleting_what_is_not_there_returns_false_and_writes_nothing(ledger: Ledger) -> None:
    assert ledger.delete("LocalQueue", "main", "team-a", actor="b") is False
    assert ledger.audit_entries() == []


def test_list_returns_every_object_of_a_kind_in_name_order(ledger: Ledger) -> None:
    for name in ("zeta", "alpha", "mid"):
        ledger.upsert(cluster_queue(name), actor="a")
    ledger.upsert(LocalQueue("ns-b", "a", "alpha"), actor="a")
    ledger.upsert(LocalQueue("ns-a", "z", "alpha"), actor="a")

    assert [q.name for q in ledger.list("ClusterQueue")] == ["alpha", "mid", "zeta"]
    assert [(q.namespace, q.name) for q in ledger.list("LocalQueue")] == [  # type: ignore[union-attr]
        ("ns-a", "z"),
        ("ns-b", "a"),
    ]
    assert ledger.list("Cohort") == []


def test_every_kind_round_trips_through_list(ledger: Ledger) -> None:
    objects = one_of_each()
    for obj in objects:
        assert ledger.upsert(obj, actor="a") == "created"
    for obj in objects:
        assert ledger.list(_key(obj)[0]) == [obj]


def test_memory_quantities_are_stored_exactly(ledger: Ledger, session: Session) -> None:
    memory = parse_quantity("3Ti")
    ledger.upsert(cluster_queue("team-a", group(quotas("h100", memory="3Ti"))), actor="a")
    ledger.upsert(Node("n1", capacity={"memory": memory, "cpu": parse_quantity("250m")}), actor="a")

    stored = session.execute(sa.text("SELECT nominal FROM quotas")).scalar()
    capacity = session.execute(sa.text("SELECT capacity FROM nodes")).scalar()
    assert stored == memory == 3_298_534_883_328_000
    assert capacity == {"memory": memory, "cpu": 250}


def test_limits_round_trip_including_unlimited(ledger: Ledger) -> None:
    limits = ResourceQuota("cpu", 8000, borrowing_limit=0, lending_limit=None)
    largest = ResourceQuota("memory", 2**63 - 1, borrowing_limit=None, lending_limit=2**63 - 1)
    queue = cluster_queue(
        "team-a", ResourceGroup(("cpu", "memory"), (FlavorQuotas("h100", (limits, largest)),))
    )
    ledger.upsert(queue, actor="a")
    assert ledger.get("ClusterQueue", "team-a") == queue


def test_node_health_since_moves_only_when_health_changes(ledger: Ledger, session: Session) -> None:
    def since() -> object:
        return session.execute(sa.text("SELECT health_since FROM nodes")).scalar()

    ledger.upsert(Node("n1"), actor="a")
    session.execute(sa.text("UPDATE nodes SET health_since = now() - interval '1 hour'"))
    first = since()
    ledger.upsert(Node("n1", labels={"zone": "a"}), actor="a")
    assert since() == first
    ledger.upsert(Node("n1", labels={"zone": "a"}, health=NodeHealth.REPAIRING), actor="a")
    assert since() != first


LOOKUP_ERRORS = [
    pytest.param("Widget", "x", None, NotFound, id="unknown kind"),
    pytest.param("LocalQueue", "main", None, InvalidInput, id="local queue without namespace"),
    pytest.param("ClusterQueue", "cq", "team-a", InvalidInput, id="cluster queue with namespace"),
]


@pytest.mark.parametrize(("kind", "name", "namespace", "error"), LOOKUP_ERRORS)
def test_lookups_reject_impossible_keys(
    ledger: Ledger, kind: str, name: str, namespace: str | None, error: type[Exception]
) -> None:
    with pytest.raises(error):
        ledger.get(kind, name, namespace)
    with pytest.raises(error):
        ledger.delete(kind, name, namespace, actor="a")


def test_get_of_missing_object_is_none(ledger: Ledger) -> None:
    assert ledger.get("ResourceFlavor", "nope") is None
    assert ledger.get("LocalQueue", "main", "team-a") is None


def test_upsert_refuses_types_the_ledger_does_not_store(ledger: Ledger) -> None:
    with pytest.raises(TypeError, match="does not store str"):
        ledger.upsert("ClusterQueue/team-a", actor="a")  # type: ignore[arg-type]


def test_same_flavor_and_resource_twice_in_one_queue_is_a_conflict(ledger: Ledger) -> None:
    queue = cluster_queue("team-a", group(quotas("h100", cpu="1")), group(quotas("h100", cpu="2")))
    with pytest.raises(Conflict, match="h100"):
        ledger.upsert(queue, actor="a")


def test_upsert_with_a_stale_expected_version_is_a_conflict(ledger: Ledger) -> None:
    ledger.upsert(Namespace("ml"), actor="a")
    assert ledger.upsert(Namespace("ml", {"v": "2"}), actor="a", expected_version=1) == "configured"

    with pytest.raises(Conflict, match="Namespace ml is at version 2, not 1"):
        ledger.upsert(Namespace("ml", {"v": "3"}), actor="a", expected_version=1)
    with pytest.raises(Conflict, match="does not exist"):
        ledger.upsert(Namespace("new"), actor="a", expected_version=1)
    assert ledger.get("Namespace", "ml") == Namespace("ml", {"v": "2"})
