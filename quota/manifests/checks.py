"""Readers and writers for Kueue's admission-check kinds (edge, text in).

``AdmissionCheck`` (``spec.controllerName``, ``spec.parameters``), ``ProvisioningRequestConfig``
(class, parameters, managed resources, retry strategy, pod-set merge policy) and a
ClusterQueue's ``spec.admissionChecks`` / ``spec.admissionChecksStrategy`` (Kueue allows
one of the two).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quota.core.checks import (
    AdmissionCheck,
    CheckRule,
    ParametersRef,
    ProvisioningRequestConfig,
    RetryStrategy,
)
from quota.manifests.reader import Field, dns_name, qualified_name

if TYPE_CHECKING:
    from quota.manifests.kinds import Meta

MERGE_POLICIES = ("IdenticalPodTemplates", "IdenticalWorkloadSchedulingRequirements")
_INT32_MAX = 2**31 - 1


def read_admission_check(top: Field, meta: Meta) -> AdmissionCheck:
    spec = top.obj("spec", required=True, known=("controllerName", "parameters",
                                                 "retryDelayMinutes"))
    controller = spec.string("controllerName", required=True) or ""
    if controller and len(controller) > 253:
        spec.child("controllerName").problem("must be at most 253 characters")
    parameters = None
    params = spec.obj("parameters", known=("apiGroup", "kind", "name"))
    if params.present:
        group = params.string("apiGroup", required=True) or ""
        kind = params.string("kind", required=True) or ""
        name = params.string("name", required=True, check=dns_name) or ""
        parameters = ParametersRef(group, kind, name)
    spec.integer("retryDelayMinutes", minimum=0)  # deprecated in Kueue, accepted and unused
    return AdmissionCheck(name=meta.name, controller_name=controller, parameters=parameters)


def read_provisioning_config(top: Field, meta: Meta) -> ProvisioningRequestConfig:
    spec = top.obj("spec", required=True, known=(
        "provisioningClassName", "parameters", "managedResources", "retryStrategy",
        "podSetMergePolicy", "podSetUpdates"), unsupported=("podSetUpdates",))
    class_name = spec.string("provisioningClassName", required=True, check=dns_name) or ""
    retry = spec.obj("retryStrategy", known=("backoffLimitCount", "backoffBaseSeconds",
                                             "backoffMaxSeconds"))
    default = RetryStrategy()
    strategy = RetryStrategy(
        backoff_limit_count=_int(retry, "backoffLimitCount", default.backoff_limit_count),
        backoff_base_seconds=_int(retry, "backoffBaseSeconds", default.backoff_base_seconds),
        backoff_max_seconds=_int(retry, "backoffMaxSeconds", default.backoff_max_seconds),
    )
    policy = spec.string("podSetMergePolicy")
    if policy is not None and policy not in MERGE_POLICIES:
        spec.child("podSetMergePolicy").problem(
            f"must be one of {', '.join(MERGE_POLICIES)}; got {policy!r}")
        policy = None
    return ProvisioningRequestConfig(
        name=meta.name,
        provisioning_class_name=class_name,
        parameters=spec.string_map("parameters"),
        managed_resources=tuple(spec.strings("managedResources", check=qualified_name,
                                             unique=True)),
        retry_strategy=strategy,
        pod_set_merge_policy=policy,
    )


def _int(field: Field, key: str, default: int) -> int:
    value = field.integer(key, minimum=0, maximum=_INT32_MAX)
    return default if value is None else value


def read_check_rules(spec: Field) -> tuple[CheckRule, ...]:
    """A ClusterQueue's checks from ``admissionChecks`` or ``admissionChecksStrategy``."""
    names = spec.strings("admissionChecks", check=dns_name, unique=True)
    strategy = spec.obj("admissionChecksStrategy", known=("admissionChecks",))
    if names and strategy.present:
        strategy.problem("set either spec.admissionChecks or spec.admissionChecksStrategy, "
                         "not both")
    rules = [CheckRule(name) for name in names]
    seen = set(names)
    for item in strategy.items("admissionChecks"):
        item.mapping(required=True, known=("name", "onFlavors"))
        name = item.string("name", required=True, check=dns_name)
        flavors = item.strings("onFlavors", check=dns_name, unique=True)
        if name is None:
            continue
        if name in seen:
            item.child("name").problem(f"{name} is listed twice")
            continue
        seen.add(name)
        rules.append(CheckRule(name, tuple(flavors)))
    return tuple(rules)


def check_rules_manifest(rules: tuple[CheckRule, ...]) -> dict[str, object]:
    """The ClusterQueue spec fields that give back ``rules``."""
    if not rules:
        return {}
    if all(not rule.on_flavors for rule in rules):
        return {"admissionChecks": [rule.name for rule in rules]}
    return {"admissionChecksStrategy": {"admissionChecks": [
        {"name": rule.name, **({"onFlavors": list(rule.on_flavors)} if rule.on_flavors else {})}
        for rule in rules]}}


def admission_check_spec(check: AdmissionCheck) -> dict[str, object]:
    spec: dict[str, object] = {"controllerName": check.controller_name}
    if check.parameters is not None:
        ref = check.parameters
        spec["parameters"] = {"apiGroup": ref.api_group, "kind": ref.kind, "name": ref.name}
    return spec


def provisioning_config_spec(config: ProvisioningRequestConfig) -> dict[str, object]:
    retry = config.retry_strategy
    spec: dict[str, object] = {
        "provisioningClassName": config.provisioning_class_name,
        "retryStrategy": {
            "backoffLimitCount": retry.backoff_limit_count,
            "backoffBaseSeconds": retry.backoff_base_seconds,
            "backoffMaxSeconds": retry.backoff_max_seconds,
        },
    }
    if config.parameters:
        spec["parameters"] = dict(config.parameters)
    if config.managed_resources:
        spec["managedResources"] = list(config.managed_resources)
    if config.pod_set_merge_policy is not None:
        spec["podSetMergePolicy"] = config.pod_set_merge_policy
    return spec
