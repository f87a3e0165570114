"""Delegated authorization: ask the API server whether a user may do something, with a
SubjectAccessReview, as Kueue's visibility server (every aggregated API server) does.

``Authorizer`` is the port the aggregated API calls (``api.aggregated``);
``SubjectAccessReviewer`` is its Kubernetes side. Berth's ServiceAccount needs ``create
subjectaccessreviews`` (the ``system:auth-delegator`` ClusterRole, deploy/base/visibility.yaml).
No answer is cached: each request costs one review (Kubernetes' delegating authorizer
caches them for 10 s; the visibility API is read by people and dashboards, not in a loop).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from admission.kube.client import SUBJECT_ACCESS_REVIEWS, Kube
from admission.kube.front_proxy import Identity


@dataclass(frozen=True, slots=True)
class ResourceAttributes:
    """What a request does, in the terms of RBAC rules."""

    group: str
    version: str
    resource: str
    subresource: str = ""
    name: str = ""
    namespace: str = ""  # "": cluster scope
    verb: str = "get"


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    reason: str = ""  # the authorizer's words, when it gives any


Authorizer = Callable[[Identity, ResourceAttributes], Awaitable[Decision]]


def review_body(identity: Identity, attributes: ResourceAttributes) -> dict[str, Any]:
    """The SubjectAccessReview asking whether ``identity`` may do ``attributes``."""
    resource = {
        "group": attributes.group,
        "version": attributes.version,
        "resource": attributes.resource,
        "subresource": attributes.subresource,
        "name": attributes.name,
        "namespace": attributes.namespace,
        "verb": attributes.verb,
    }
    spec: dict[str, Any] = {
        "user": identity.user,
        "groups": list(identity.groups),
        "resourceAttributes": {k: v for k, v in resource.items() if v},
    }
    if identity.extra:
        spec["extra"] = {key: list(values) for key, values in identity.extra.items()}
    if identity.uid:
        spec["uid"] = identity.uid
    return {
        "apiVersion": f"{SUBJECT_ACCESS_REVIEWS.api_version}",
        "kind": SUBJECT_ACCESS_REVIEWS.kind,
        "spec": spec,
    }


class SubjectAccessReviewer:
    """The ``Authorizer`` that asks the API server."""

    def __init__(self, kube: Kube) -> None:
        self.kube = kube

    async def __call__(self, identity: Identity, attributes: ResourceAttributes) -> Decision:
        answer = await self.kube.create(
            SUBJECT_ACCESS_REVIEWS, "", review_body(identity, attributes)
        )
        status = answer.get("status") or {}
        return Decision(allowed=status.get("allowed") is True, reason=str(status.get("reason", "")))
