"""Kubernetes core shapes read from manifests and written back (edge): taints, tolerations,
label selectors and node-affinity terms, shared by Kueue objects, Nodes and Jobs."""

from __future__ import annotations

from quota.core.model import LabelSelector, SelectorRequirement, Taint, Toleration
from quota.manifests.reader import Field, qualified_name

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_NODE_OPERATORS = (*_LABEL_OPERATORS, "Gt", "Lt")


def read_taints(parent: Field, key: str) -> tuple[Taint, ...]:
    taints: list[Taint] = []
    for item in parent.items(key):
        item.mapping(required=True, known=("key", "value", "effect", "timeAdded"))
        name = item.string("key", required=True, check=qualified_name)
        value = item.string("value") or ""
        effect = _effect(item, required=True)
        if name is not None and effect:
            taints.append(Taint(key=name, value=value, effect=effect))
    return tuple(taints)


def read_tolerations(parent: Field, key: str) -> tuple[Toleration, ...]:
    tolerations: list[Toleration] = []
    for item in parent.items(key):
        item.mapping(
            required=True, known=("key", "operator", "value", "effect", "tolerationSeconds")
        )
        name = item.string("key", check=qualified_name) or ""
        operator = item.string("operator") or "Equal"
        value = item.string("value") or ""
        effect = _effect(item, required=False)
        ok = effect is not None
        if operator not in ("Equal", "Exists"):
            item.child("operator").problem(f"must be one of Equal, Exists; got {operator!r}")
            ok = False
        elif operator == "Exists" and value:
            item.child("value").problem("must be empty when operator is Exists")
            ok = False
        elif operator == "Equal" and not name:
            item.child("operator").problem("must be Exists when key is empty")
            ok = False
        if ok and effect is not None:
            tolerations.append(Toleration(key=name, operator=operator, value=value, effect=effect))
    return tuple(tolerations)


def _effect(item: Field, *, required: bool) -> str | None:
    """The taint effect; ``""`` (any effect) is allowed on tolerations only."""
    effect = item.string("effect", required=required)
    if effect is None:
        return None if required else ""
    if effect not in TAINT_EFFECTS and (required or effect):
        allowed = ", ".join(TAINT_EFFECTS)
        item.child("effect").problem(f"must be one of {allowed}; got {effect!r}")
        return None
    return effect


def read_requirements(
    items: list[Field], *, node_affinity: bool = False
) -> tuple[SelectorRequirement, ...] | None:
    """``matchExpressions`` entries; ``None`` when any entry is invalid."""
    operators = _NODE_OPERATORS if node_affinity else _LABEL_OPERATORS
    result: list[SelectorRequirement] = []
    ok = True
    for item in items:
        item.mapping(required=True, known=("key", "operator", "values"))
        key = item.string("key", required=True, check=qualified_name)
        operator = item.string("operator", required=True)
        values = tuple(item.strings("values", empty=True))  # "" is a valid label value
        if operator is not None and operator not in operators:
            item.child("operator").problem(
                f"must be one of {', '.join(operators)}; got {operator!r}"
            )
            operator = None
        elif operator in ("In", "NotIn") and not values:
            item.child("values").problem(f"must not be empty when operator is {operator}")
            operator = None
        elif operator in ("Exists", "DoesNotExist") and values:
            item.child("values").problem(f"must be empty when operator is {operator}")
            operator = None
        elif operator in ("Gt", "Lt") and (len(values) != 1 or not values[0].lstrip("-").isdigit()):
            item.child("values").problem(f"must be one integer when operator is {operator}")
            operator = None
        if key is None or operator is None:
            ok = False
            continue
        result.append(SelectorRequirement(key=key, operator=operator, values=values))
    return tuple(result) if ok else None


def read_label_selector(parent: Field, key: str) -> LabelSelector | None:
    """A label selector; absent gives ``None`` (selects nothing), ``{}`` selects everything."""
    field = parent.obj(key, known=("matchLabels", "matchExpressions"))
    if not isinstance(field.value, dict):
        return None
    labels = field.string_map("matchLabels", check_keys=qualified_name)
    expressions = read_requirements(field.items("matchExpressions")) or ()
    return LabelSelector(match_labels=labels, match_expressions=expressions)


def read_affinity_terms(pod_spec: Field) -> tuple[tuple[SelectorRequirement, ...], ...]:
    """Required node-affinity terms; a pod may go where any one term matches."""
    affinity = pod_spec.obj("affinity")
    node = affinity.obj("nodeAffinity")
    required = node.obj("requiredDuringSchedulingIgnoredDuringExecution")
    terms: list[tuple[SelectorRequirement, ...]] = []
    for term in required.items("nodeSelectorTerms", non_empty=required.present):
        term.mapping(required=True, known=("matchExpressions", "matchFields"))
        if term.has("matchFields"):
            term.child("matchFields").problem(
                "not supported by Berth; use matchExpressions on node labels"
            )
        requirements = read_requirements(term.items("matchExpressions"), node_affinity=True)
        if requirements is not None:
            terms.append(requirements)
    return tuple(terms)


def taint_manifest(taint: Taint) -> dict[str, object]:
    out: dict[str, object] = {"key": taint.key}
    if taint.value:
        out["value"] = taint.value
    out["effect"] = taint.effect
    return out


def toleration_manifest(toleration: Toleration) -> dict[str, object]:
    out: dict[str, object] = {}
    if toleration.key:
        out["key"] = toleration.key
    out["operator"] = toleration.operator
    if toleration.value:
        out["value"] = toleration.value
    if toleration.effect:
        out["effect"] = toleration.effect
    return out


def label_selector_manifest(selector: LabelSelector) -> dict[str, object]:
    out: dict[str, object] = {}
    if selector.match_labels:
        out["matchLabels"] = dict(selector.match_labels)
    if selector.match_expressions:
        out["matchExpressions"] = [
            {
                "key": r.key,
                "operator": r.operator,
                **({"values": list(r.values)} if r.values else {}),
            }
            for r in selector.match_expressions
        ]
    return out
