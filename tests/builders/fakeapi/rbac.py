"""RBAC as Kubernetes evaluates it, for ``SubjectAccessReview``: a request is allowed when a
ClusterRoleBinding, or a RoleBinding in the request's namespace, binds one of the user's
subjects to a role with a rule that covers it. Members of ``system:masters`` may do
anything (the real API server's privileged group).

A rule covers a request when its verbs, apiGroups and resources (``"*"``, ``"pods"``,
``"pods/log"``, ``"*/log"``) match and, if it lists resourceNames, the name is one of them;
a subresource needs a rule naming it. A ServiceAccount subject is the user
``system:serviceaccount:NS:NAME`` (its namespace defaults to the binding's). A ClusterRole
with an ``aggregationRule`` has the rules of the ClusterRoles its selectors' matchLabels
match, as the aggregation controller would have written them.

``bootstrap`` writes the default roles an extension API server's manifests bind to
(``system:auth-delegator``, ``extension-apiserver-authentication-reader``) and
``cluster-admin``, as kube-apiserver's RBAC bootstrap does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from builders.fakeapi.authn import MASTERS
from builders.fakeapi.store import Obj, Store

GROUP = "rbac.authorization.k8s.io"
CLUSTER_ROLES = (GROUP, "clusterroles")
CLUSTER_ROLE_BINDINGS = (GROUP, "clusterrolebindings")
ROLES = (GROUP, "roles")
ROLE_BINDINGS = (GROUP, "rolebindings")


_AUTH_DELEGATOR = [
    {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
    {
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["subjectaccessreviews"],
        "verbs": ["create"],
    },
]
_AUTH_READER = [
    {
        "apiGroups": [""],
        "resources": ["configmaps"],
        "resourceNames": ["extension-apiserver-authentication"],
        "verbs": ["get", "list", "watch"],
    }
]
_EVERYTHING = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
    {"nonResourceURLs": ["*"], "verbs": ["*"]},
]


# The bootstrap roles, by (kind, name): a Role's namespace is kube-system.
BUILT_IN: dict[tuple[str, str], list[Obj]] = {
    ("ClusterRole", "cluster-admin"): _EVERYTHING,
    ("ClusterRole", "system:auth-delegator"): _AUTH_DELEGATOR,
    ("Role", "extension-apiserver-authentication-reader"): _AUTH_READER,
}


def bootstrap(store: Store) -> None:
    for (kind, name), rules in BUILT_IN.items():
        resource, namespace = (ROLES, "kube-system") if kind == "Role" else (CLUSTER_ROLES, "")
        store.create(
            store.resources[resource], namespace, {"metadata": {"name": name}, "rules": rules}
        )


def review(store: Store, body: Obj) -> Obj:
    """The SubjectAccessReview ``body`` with its ``status`` filled in (and kept in
    ``store.reviews``)."""
    store.reviews.append(body)
    spec = body.get("spec") or {}
    user, groups = spec.get("user") or "", tuple(spec.get("groups") or ())
    allowed, reason = decide(store, user, groups, spec)
    answer = {**body, "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview"}
    answer.setdefault("metadata", {})
    return {**answer, "status": {"allowed": allowed, "reason": reason}}


def decide(store: Store, user: str, groups: tuple[str, ...], spec: Obj) -> tuple[bool, str]:
    """Whether ``user`` in ``groups`` may do what ``spec`` (a SAR spec) asks, and why."""
    if MASTERS in groups:
        return True, f'the user is in the group "{MASTERS}"'
    attrs = spec.get("resourceAttributes")
    url = (spec.get("nonResourceAttributes") or {}).get("path")
    verb = (attrs or spec.get("nonResourceAttributes") or {}).get("verb", "")
    namespace = (attrs or {}).get("namespace") or ""
    for binding, role in _bindings(store, namespace):
        subject = _subject(binding, user, groups)
        if subject is None:
            continue
        for rule in _rules(store, binding, role):
            if (attrs is not None and _covers(rule, verb, attrs)) or (
                attrs is None and url is not None and _covers_url(rule, verb, url)
            ):
                return True, (
                    f'RBAC: allowed by {binding["kind"]} "{binding["metadata"]["name"]}" of '
                    f'{binding["roleRef"]["kind"]} "{binding["roleRef"]["name"]}" to {subject}'
                )
    return False, ""


def _bindings(store: Store, namespace: str) -> Iterator[tuple[Obj, Obj | None]]:
    """Each binding that applies in ``namespace`` with the role it refers to (None: absent)."""
    for binding in store.objects[CLUSTER_ROLE_BINDINGS].values():
        yield binding, _role(store, binding, "")
    if namespace:
        for (ns, _), binding in store.objects[ROLE_BINDINGS].items():
            if ns == namespace:
                yield binding, _role(store, binding, ns)


def _role(store: Store, binding: Obj, namespace: str) -> Obj | None:
    ref = binding.get("roleRef") or {}
    if ref.get("kind") == "ClusterRole":
        return store.objects[CLUSTER_ROLES].get(("", ref.get("name", "")))
    if ref.get("kind") == "Role" and namespace:
        return store.objects[ROLES].get((namespace, ref.get("name", "")))
    return None


def _subject(binding: Obj, user: str, groups: tuple[str, ...]) -> str | None:
    """How the binding names the user (``User "alice"``), or None when it does not."""
    for subject in binding.get("subjects") or []:
        kind, name = subject.get("kind"), subject.get("name")
        if (kind == "User" and name == user) or (kind == "Group" and name in groups):
            return f'{kind} "{name}"'
        if kind == "ServiceAccount":
            namespace = subject.get("namespace") or binding["metadata"].get("namespace", "")
            if user == f"system:serviceaccount:{namespace}:{name}":
                return f'ServiceAccount "{namespace}/{name}"'
    return None


def _rules(store: Store, binding: Obj, role: Obj | None) -> list[Obj]:
    if role is None:
        return []
    aggregation = role.get("aggregationRule")
    if role.get("kind") != "ClusterRole" or not aggregation:
        return list(role.get("rules") or [])
    rules: list[Obj] = []
    for selector in aggregation.get("clusterRoleSelectors") or []:
        wanted: dict[str, Any] = selector.get("matchLabels") or {}
        for other in store.objects[CLUSTER_ROLES].values():
            labels = other["metadata"].get("labels") or {}
            if other is not role and all(labels.get(k) == v for k, v in wanted.items()):
                rules.extend(other.get("rules") or [])
    return rules


def _covers(rule: Obj, verb: str, attrs: Obj) -> bool:
    resource, sub = attrs.get("resource", ""), attrs.get("subresource", "")
    combined = f"{resource}/{sub}" if sub else resource
    names = rule.get("resourceNames") or []
    return (
        _has(rule.get("verbs"), verb)
        and _has(rule.get("apiGroups"), attrs.get("group", ""))
        and any(
            r in ("*", combined) or (bool(sub) and r == f"*/{sub}")
            for r in rule.get("resources") or []
        )
        and (not names or attrs.get("name", "") in names)
    )


def _covers_url(rule: Obj, verb: str, url: str) -> bool:
    return _has(rule.get("verbs"), verb) and any(
        u == url or u == "*" or (u.endswith("*") and url.startswith(u[:-1]))
        for u in rule.get("nonResourceURLs") or []
    )


def _has(values: list[str] | None, wanted: str) -> bool:
    return bool(values) and ("*" in values or wanted in values)  # type: ignore[operator]
