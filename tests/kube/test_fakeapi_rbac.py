"""The fake API server's RBAC against Kubernetes': the RBAC objects are stored and served,
a SubjectAccessReview is allowed exactly when a binding that applies gives one of the
user's subjects a rule covering the request, and the same rules decide what a token's user
may ask the fake itself (the bootstrap roles an extension server binds to included)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from builders.fakeapi import FakeApiServer, FakeKubectl

RBAC = "/apis/rbac.authorization.k8s.io/v1"
SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
VISIBILITY = "visibility.kueue.x-k8s.io"
PENDING = {"group": VISIBILITY, "version": "v1beta2", "resource": "clusterqueues", "subresource": "pendingworkloads", "name": "cq-a", "verb": "get"}
LQ_PENDING = {**PENDING, "resource": "localqueues", "name": "lq-a", "namespace": "team-a"}


def _role(kind: str, name: str, rules: list[dict[str, Any]], namespace: str = "", **extra: Any) -> tuple[str, dict[str, Any]]:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    path = f"{RBAC}/namespaces/{namespace}/roles" if kind == "Role" else f"{RBAC}/clusterroles"
    return path, {"metadata": meta, "rules": rules, **extra}


def _binding(kind: str, name: str, role_kind: str, role: str, subjects: list[dict[str, str]], namespace: str = "") -> tuple[str, dict[str, Any]]:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    path = f"{RBAC}/namespaces/{namespace}/rolebindings" if kind == "RoleBinding" else f"{RBAC}/clusterrolebindings"
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role}
    return path, {"metadata": meta, "roleRef": ref, "subjects": subjects}


def _rule(resources: list[str], verbs: list[str] | None = None, groups: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"apiGroups": groups if groups is not None else [VISIBILITY], "resources": resources, "verbs": verbs or ["get"], **extra}


def _user(name: str) -> dict[str, str]:
    return {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": name}


def _group(name: str) -> dict[str, str]:
    return {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": name}


VIEWER = _role("ClusterRole", "viewer", [_rule(["clusterqueues/pendingworkloads", "localqueues/pendingworkloads"])])
CASES = [
    pytest.param([VIEWER, _binding("ClusterRoleBinding", "b", "ClusterRole", "viewer", [_user("alice")])], "alice", [], PENDING, True, id="a user binding allows"),
    pytest.param([VIEWER, _binding("ClusterRoleBinding", "b", "ClusterRole", "viewer", [_group("team-a")])], "alice", ["team-a"], PENDING, True, id="group binding allows"),
    pytest.param([VIEWER, _binding("ClusterRoleBinding", "b", "ClusterRole", "viewer", [_group("team-b")])], "alice", ["team-a"], PENDING, False, id="a binding of another group does not"),
    pytest.param([], "alice", ["system:masters"], PENDING, True, id="system masters may do anything"),
    pytest.param([], "alice", [], PENDING, False, id="no binding denies"),
    pytest.param([VIEWER, _binding("ClusterRoleBinding", "b", "ClusterRole", "viewer", [{"kind": "ServiceAccount", "name": "berth", "namespace": "berth-system"}])], "system:serviceaccount:berth-system:berth", [], PENDING, True, id="a service account subject is its system user"),
    pytest.param([VIEWER, _binding("RoleBinding", "b", "ClusterRole", "viewer", [{"kind": "ServiceAccount", "name": "berth"}], "team-a")], "system:serviceaccount:team-a:berth", [], LQ_PENDING, True, id="a service account defaults to the binding's namespace"),
    pytest.param([VIEWER, _binding("RoleBinding", "b", "ClusterRole", "viewer", [_user("alice")], "team-a")], "alice", [], LQ_PENDING, True, id="a rolebinding to a clusterrole allows in its namespace"),
    pytest.param([VIEWER, _binding("RoleBinding", "b", "ClusterRole", "viewer", [_user("alice")], "team-b")], "alice", [], LQ_PENDING, False, id="rolebinding in other namespace does not"),
    pytest.param([VIEWER, _binding("RoleBinding", "b", "ClusterRole", "viewer", [_user("alice")], "team-a")], "alice", [], PENDING, False, id="a rolebinding does not reach cluster-scoped requests"),
    pytest.param([_role("Role", "r", [_rule(["localqueues/pendingworkloads"])], "team-a"), _binding("RoleBinding", "b", "Role", "r", [_user("alice")], "team-a")], "alice", [], LQ_PENDING, True, id="a role in the namespace allows"),
    pytest.param([_role("ClusterRole", "c", [_rule(["clusterqueues"])]), _binding("ClusterRoleBinding", "b", "ClusterRole", "c", [_user("alice")])], "alice", [], PENDING, False, id="subresource needs its own rule"),
    pytest.param([_role("ClusterRole", "c", [_rule(["clusterqueues/pendingworkloads"])]), _binding("ClusterRoleBinding", "b", "ClusterRole", "c", [_user("alice")])], "alice", [], {**PENDING, "subresource": ""}, False, id="a subresource rule does not grant the resource"),
    pytest.param([_role("ClusterRole", "c", [_rule(["*/pendingworkloads"])]), _binding("ClusterRoleBinding", "b", "ClusterRole", "c", [_user("alice")])], "alice", [], PENDING, True, id="star slash subresource matches any resource's subresource"),
    pytest.param([_role("ClusterRole", "c", [_rule(["*"], ["*"], ["*"])]), _binding("ClusterRoleBinding", "b", "ClusterRole", "c", [_user("alice")])], "alice", [], PENDING, True, id="stars match everything"),
    pytest.param([_role("ClusterRole", "c", [_rule(["clusterqueues/pendingworkloads"], ["list"])]), _binding("ClusterRoleBinding", "b", "ClusterRole", "c", [_user("alice")])], "alice", [], PENDING, False, id="another verb does not"),
    pytest.param([_role("ClusterRole", "c", [_rule(["clusterqueues/pendingworkloads"], groups=["kueue.x-k8s.io"])]), _binding("ClusterRoleBinding", "b", "ClusterRole", "c", [_user("alice")])], "alice", [], PENDING, False, id="another api group does not"),
    pytest.param([_role("ClusterRole", "c", [_rule(["clusterqueues/pendingworkloads"], resourceNames=["cq-a"])]), _binding("ClusterRoleBinding", "b", "ClusterRole", "c", [_user("alice")])], "alice", [], PENDING, True, id="a listed resource name allows"),
    pytest.param([_role("ClusterRole", "c", [_rule(["clusterqueues/pendingworkloads"], resourceNames=["cq-b"])]), _binding("ClusterRoleBinding", "b", "ClusterRole", "c", [_user("alice")])], "alice", [], PENDING, False, id="an unlisted resource name does not"),
    pytest.param([_binding("ClusterRoleBinding", "b", "ClusterRole", "missing", [_user("alice")])], "alice", [], PENDING, False, id="a binding to a missing role grants nothing"),
    pytest.param([_role("ClusterRole", "part", [_rule(["clusterqueues/pendingworkloads"])]), _role("ClusterRole", "agg", [], aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"berth/aggregate": "true"}}]}), _binding("ClusterRoleBinding", "b", "ClusterRole", "agg", [_user("alice")])], "alice", [], PENDING, False, id="aggregation takes only the labelled roles"),
]


@pytest.mark.parametrize(("objects", "user", "groups", "attributes", "allowed"), CASES)
def test_subject_access_review_evaluates_rbac(kubectl: FakeKubectl, objects: list[tuple[str, dict[str, Any]]], user: str, groups: list[str], attributes: dict[str, str], allowed: bool) -> None:
    for namespace in ("team-a", "team-b", "berth-system"):
        kubectl.namespace(namespace)
    for path, body in objects:
        kubectl.create(path, body)
    review = kubectl.create(SAR, {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {"user": user, "groups": groups, "resourceAttributes": attributes}})
    assert review["status"]["allowed"] is allowed
    assert bool(review["status"]["reason"]) is allowed


def test_an_aggregated_clusterrole_has_its_labelled_roles_rules(kubectl: FakeKubectl) -> None:
    part = {"metadata": {"name": "part", "labels": {"berth/aggregate": "true"}}, "rules": [_rule(["clusterqueues/pendingworkloads"])]}
    kubectl.create(f"{RBAC}/clusterroles", part)
    kubectl.create(f"{RBAC}/clusterroles", {"metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"berth/aggregate": "true"}}]}})
    kubectl.create(*_binding("ClusterRoleBinding", "b", "ClusterRole", "agg", [_user("alice")]))
    review = kubectl.create(SAR, {"spec": {"user": "alice", "resourceAttributes": PENDING}})
    assert review["status"] == {"allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "agg" to User "alice"'}


def test_rbac_objects_are_stored_and_served(kubectl: FakeKubectl) -> None:
    kubectl.namespace("team-a")
    kubectl.create(*_role("Role", "r", [_rule(["localqueues"])], "team-a"))
    kubectl.create(*_binding("RoleBinding", "b", "Role", "r", [_user("alice")], "team-a"))
    listed = kubectl.get(f"{RBAC}/namespaces/team-a/rolebindings")
    assert listed["kind"] == "RoleBindingList"
    assert [b["roleRef"]["name"] for b in listed["items"]] == ["r"]
    assert kubectl.get(f"{RBAC}/namespaces/team-a/roles/r")["rules"][0]["resources"] == ["localqueues"]


TOKENS = {"berth-sa-token-0123": ("system:serviceaccount:berth-system:berth", ["system:serviceaccounts"]), "alice-token-0123": ("alice", [])}


@pytest.fixture
def fake_api() -> Iterator[FakeApiServer]:
    server = FakeApiServer(TOKENS).start()
    try:
        yield server
    finally:
        server.stop()


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


SA_BINDINGS = [
    _binding("ClusterRoleBinding", "berth:auth-delegator", "ClusterRole", "system:auth-delegator", [{"kind": "ServiceAccount", "name": "berth", "namespace": "berth-system"}]),
    _binding("RoleBinding", "berth:auth-reader", "Role", "extension-apiserver-authentication-reader", [{"kind": "ServiceAccount", "name": "berth", "namespace": "berth-system"}], "kube-system"),
]


@pytest.mark.parametrize(
    ("bindings", "token", "method", "path", "status"),
    [
        pytest.param([], "berth-sa-token-0123", "POST", SAR, 403, id="a service account may not review access unbound"),
        pytest.param(SA_BINDINGS, "berth-sa-token-0123", "POST", SAR, 201, id="system auth-delegator lets it review access"),
        pytest.param(SA_BINDINGS, "berth-sa-token-0123", "GET", "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication", 200, id="the authentication reader role lets it read the front proxy config"),
        pytest.param(SA_BINDINGS, "berth-sa-token-0123", "GET", "/api/v1/namespaces/kube-system/configmaps", 403, id="but not list every configmap"),
        pytest.param([], "alice-token-0123", "GET", "/apis", 200, id="discovery is open to every user"),
        pytest.param([], "alice-token-0123", "GET", "/api/v1/namespaces/default/pods", 403, id="a user without bindings may not list pods"),
        pytest.param([_binding("ClusterRoleBinding", "a", "ClusterRole", "cluster-admin", [_user("alice")])], "alice-token-0123", "DELETE", "/api/v1/namespaces/default", 200, id="cluster admin may do anything"),
    ],
)
def test_the_api_server_enforces_rbac_on_token_users(kubectl: FakeKubectl, bindings: list[tuple[str, dict[str, Any]]], token: str, method: str, path: str, status: int) -> None:
    kubectl.namespace("berth-system")
    for where, body in bindings:
        kubectl.create(where, body)
    body = {"spec": {"user": "bob", "resourceAttributes": PENDING}} if method == "POST" else None
    response = kubectl.request(method, path, headers=_as(token), json=body)
    assert response.status_code == status, response.text


def test_a_refusal_is_worded_as_the_api_server_words_it(kubectl: FakeKubectl) -> None:
    response = kubectl.request("GET", "/api/v1/namespaces/default/pods?watch=1", headers=_as("alice-token-0123"))
    assert response.json()["message"] == 'pods is forbidden: User "alice" cannot watch resource "pods" in API group "" in the namespace "default"'


@pytest.mark.parametrize(
    ("token", "status"),
    [
        pytest.param("alice-token-0123", {"authenticated": True, "user": {"username": "alice", "groups": ["system:authenticated"]}}, id="a known token names its user"),
        pytest.param("guess", {"authenticated": False, "error": "invalid bearer token"}, id="an unknown token authenticates nobody"),
    ],
)
def test_token_review_answers_from_the_token_file(kubectl: FakeKubectl, token: str, status: dict[str, Any]) -> None:
    review = kubectl.create("/apis/authentication.k8s.io/v1/tokenreviews", {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})
    assert review["status"] == status


def test_token_review_needs_its_rbac(kubectl: FakeKubectl) -> None:
    body = {"spec": {"token": "alice-token-0123"}}
    refused = kubectl.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", json=body, headers=_as("berth-sa-token-0123"))
    assert refused.status_code == 403
    kubectl.namespace("berth-system")
    kubectl.create(*SA_BINDINGS[0])
    allowed = kubectl.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", json=body, headers=_as("berth-sa-token-0123"))
    assert allowed.json()["status"]["user"]["username"] == "alice"
