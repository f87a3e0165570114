"""The tenant redaction rule (api.tenancy): a reference ``namespace/name`` into a namespace
the caller may not see becomes "(another namespace)" in details and in the prose written
from them; nothing else changes, and admins and auth-off see everything as stored."""

from __future__ import annotations

from typing import Any

import pytest

from admission.engine import reasons as engine_reasons
from api import tenancy
from api.auth import Grant, Role
from quota.core.model import ClusterQueue, LocalQueue, Namespace
from quota.core.node_health import device_error

H = tenancy.HIDDEN
TENANT = Grant("t", Role.READ, frozenset({"team-a", "shared"}))
ADMIN = Grant("a", Role.ADMIN)
READER = Grant("r", Role.READ)  # a read token of every namespace


def _reason(message: str, **details: Any) -> dict[str, Any]:
    return {"code": "X", "message": message, "details": details}


@pytest.mark.parametrize(
    ("key", "shown"),
    [
        pytest.param("team-a/train", "team-a/train", id="its own namespace is shown"),
        pytest.param("shared/train", "shared/train", id="every namespace of the token is shown"),
        pytest.param("team-b/train", H, id="another namespace is hidden"),
        pytest.param("team-a-old/train", H, id="a namespace that only starts like its own is hidden"),
        pytest.param("no-slash", "no-slash", id="not a reference: left as it is"),
    ],
)
def test_reference(key: str, shown: str) -> None:
    assert tenancy.reference(TENANT, key) == shown


@pytest.mark.parametrize(
    ("found", "shown"),
    [
        pytest.param(
            _reason("insufficient quota for nvidia.com/gpu: 8 requested",
                    holders=["team-b/hog", "team-a/mine", "team-c/big"], resource="nvidia.com/gpu",
                    requested="8"),
            _reason("insufficient quota for nvidia.com/gpu: 8 requested",
                    holders=[H, "team-a/mine", H], resource="nvidia.com/gpu", requested="8"),
            id="holders of other namespaces hidden, own shown, quantities untouched",
        ),
        pytest.param(
            _reason("StrictFIFO ClusterQueue q admits nothing behind its waiting head team-b/big; "
                    "this workload is at position 2", head="team-b/big", position=2),
            _reason("StrictFIFO ClusterQueue q admits nothing behind its waiting head "
                    f"{H}; this workload is at position 2", head=H, position=2),
            id="the head is hidden in the details and in the message",
        ),
        pytest.param(
            _reason("waiting for 3 preempted workload(s) to release quota: team-b/v, team-b/v-2, "
                    "team-a/v", victims=["team-b/v", "team-b/v-2", "team-a/v"]),
            _reason(f"waiting for 3 preempted workload(s) to release quota: {H}, {H}, team-a/v",
                    victims=[H, H, "team-a/v"]),
            id="victims hidden as whole names: team-b/v does not eat the start of team-b/v-2",
        ),
        pytest.param(
            _reason("held by team-b/v-2 and team-b/v.", victims=["team-b/v"]),
            _reason(f"held by team-b/v-2 and {H}.", victims=[H]),
            id="a longer name that is not a reference stays; a sentence's full stop is not a name",
        ),
        pytest.param(
            _reason("evicted by team-b/p (InClusterQueue)", preemptor="team-b/p", why="InClusterQueue"),
            _reason(f"evicted by {H} (InClusterQueue)", preemptor=H, why="InClusterQueue"),
            id="a preemptor is hidden",
        ),
        pytest.param(
            _reason("reserved for team-b/r", reservedFor="team-b/r", note={"workload": "team-b/w"}),
            _reason(f"reserved for {H}", reservedFor=H, note={"workload": H}),
            id="reservedFor and workload are references, at any depth",
        ),
        pytest.param(
            _reason("1/2 of nvidia.com/gpu and team-b/x", flavor="team-b/x"),
            _reason("1/2 of nvidia.com/gpu and team-b/x", flavor="team-b/x"),
            id="what only looks like a reference (no reference key names it) is never touched",
        ),
        pytest.param(
            _reason("quota of com/gpu is held by nvidia.com/gpu users", holders=["com/gpu"]),
            _reason(f"quota of {H} is held by nvidia.com/gpu users", holders=[H]),
            id="a hidden reference inside a resource name is not one: nvidia.com/gpu stays",
        ),
        pytest.param(
            _reason("Workload team-a/x: bad", object="Workload team-a/x", problem="bad"),
            _reason("Workload team-a/x: bad", object="Workload team-a/x", problem="bad"),
            id="a reason about its own workload is unchanged",
        ),
    ],
)
def test_reason(found: dict[str, Any], shown: dict[str, Any]) -> None:
    assert tenancy.reason(TENANT, found) == shown


@pytest.mark.parametrize("caller", [None, ADMIN, READER], ids=["auth off", "admin", "read token of every namespace"])
def test_nothing_is_hidden_from_callers_of_every_namespace(caller: Grant | None) -> None:
    found = _reason("waiting for team-b/v", victims=["team-b/v"])
    assert tenancy.reason(caller, found) is found
    reasons, hints = tenancy.verdict(caller, [found], ["team-b/v borrows"])
    assert (reasons, hints) == ([found], ["team-b/v borrows"])
    assert tenancy.details(caller, {"preemptor": "team-b/p"}) == {"preemptor": "team-b/p"}
    assert tenancy.namespaces(caller) is None
    assert tenancy.owned(caller, "team-b", "w", {"deviceError": {"pod": "w-1"}}) == (
        "team-b", "w", {"deviceError": {"pod": "w-1"}})
    why = device_error("gpu-1", "team-b/w-1", "main", 79)
    assert tenancy.node_why(caller, why) == why


def test_engine_reasons_are_redacted_by_their_own_references() -> None:
    """The engine's real sentences, not hand-written ones."""
    head = engine_reasons.blocked_by_queue_head("fifo", "team-b/head", 3)
    preempted = engine_reasons.waiting_for_preempted(["team-a/mine", "team-b/theirs"], None)
    for built, key in ((head, "head"), (preempted, "victims")):
        found = {"code": str(built.code), "message": built.message, "details": dict(built.details)}
        shown = tenancy.reason(TENANT, found)
        assert "team-b" not in str(shown) and H in shown["message"], shown
        assert H in str(shown["details"][key])
    assert "team-a/mine" in tenancy.reason(TENANT, {"message": preempted.message,
                                                    "details": dict(preempted.details)})["message"]


def test_verdict_hides_in_hints_what_any_reason_names() -> None:
    reasons = [_reason("a", holders=["team-b/hog"]), _reason("b", head="team-c/head")]
    shown, hints = tenancy.verdict(TENANT, reasons, ["team-b/hog borrows 4", "team-c/head first",
                                                     "ClusterQueue x borrows 2 nvidia.com/gpu"])
    assert [r["details"] for r in shown] == [{"holders": [H]}, {"head": H}]
    assert hints == [f"{H} borrows 4", f"{H} first", "ClusterQueue x borrows 2 nvidia.com/gpu"]


@pytest.mark.parametrize(
    ("details", "shown"),
    [
        pytest.param({"preemptor": "team-b/p", "clusterQueue": "q", "why": "InClusterQueue"},
                     {"preemptor": H, "clusterQueue": "q", "why": "InClusterQueue"}, id="an eviction's preemptor"),
        pytest.param({"preemptor": "team-a/p"}, {"preemptor": "team-a/p"}, id="a preemptor of its own namespace"),
        pytest.param({"flavors": {"main": {"nvidia.com/gpu": "h100"}}}, {"flavors": {"main": {"nvidia.com/gpu": "h100"}}},
                     id="an admission's flavors"),
        pytest.param({}, {}, id="no details"),
    ],
)
def test_event_details(details: dict[str, Any], shown: dict[str, Any]) -> None:
    assert tenancy.details(TENANT, details) == shown


@pytest.mark.parametrize(
    ("why", "shown"),
    [
        pytest.param(device_error("gpu-1", "team-b/train-x7k2p", "main", 79),
                     f"pod {H} container main exited with device-error code 79 on node gpu-1",
                     id="the pod of another namespace's device error"),
        pytest.param(device_error("gpu-1", "team-a/train-x7k2p", "main", 79),
                     device_error("gpu-1", "team-a/train-x7k2p", "main", 79),
                     id="the pod of its own namespace's device error"),
        pytest.param("3 of 8 nvidia.com/gpu unhealthy", "3 of 8 nvidia.com/gpu unhealthy",
                     id="a device count"),
        pytest.param("replaced the PSU, see ops/1234", "replaced the PSU, see ops/1234",
                     id="an operator's words are not guessed at"),
    ],
)
def test_node_why(why: str, shown: str) -> None:
    assert tenancy.node_why(TENANT, why) == shown


@pytest.mark.parametrize(
    ("namespace", "details", "shown"),
    [
        pytest.param("team-b", {"nodes": ["gpu-1"], "deviceError": {"pod": "w-x7k2p", "exitCode": 79}},
                     (H, H, {"nodes": ["gpu-1"], "deviceError": {"pod": H, "exitCode": 79}}),
                     id="another namespace's displaced work: its name and its pod hidden"),
        pytest.param("team-a", {"nodes": ["gpu-1"], "deviceError": {"pod": "w-x7k2p", "exitCode": 79}},
                     ("team-a", "w", {"nodes": ["gpu-1"], "deviceError": {"pod": "w-x7k2p", "exitCode": 79}}),
                     id="its own displaced work"),
    ],
)
def test_owned(namespace: str, details: dict[str, Any], shown: tuple[str, str, dict[str, Any]]) -> None:
    assert tenancy.owned(TENANT, namespace, "w", details) == shown


@pytest.mark.parametrize(
    ("obj", "seen"),
    [
        pytest.param(LocalQueue("team-a", "main", "q"), True, id="its LocalQueue"),
        pytest.param(LocalQueue("team-b", "main", "q"), False, id="another namespace's LocalQueue"),
        pytest.param(Namespace("team-a"), True, id="its Namespace"),
        pytest.param(Namespace("team-b"), False, id="another Namespace"),
        pytest.param(ClusterQueue("q"), True, id="a ClusterQueue is everyone's"),
    ],
)
def test_visible(obj: object, seen: bool) -> None:
    assert tenancy.visible(TENANT, obj) is seen
    assert tenancy.visible(None, obj) and tenancy.visible(ADMIN, obj)


def test_namespaces_limits_a_tenant_query() -> None:
    assert tenancy.namespaces(TENANT) == ["shared", "team-a"]
