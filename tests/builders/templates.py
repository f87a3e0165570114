"""A Job and a flavor for the Job-template tests, and a JSON merge patch applied."""

from __future__ import annotations

from typing import Any

from quota.core.model import ResourceFlavor, Toleration

H100 = ResourceFlavor(
    "h100", node_labels={"gpu": "h100"}, tolerations=(Toleration("gpu", "Exists"),)
)


def job(
    suspend: bool = True, annotations: dict[str, str] | None = None, **pod: Any
) -> dict[str, Any]:
    return {
        "metadata": {"name": "j", "namespace": "ns", "uid": "u1", "annotations": annotations or {}},
        "spec": {"suspend": suspend, "template": {"spec": {"containers": [], **pod}}},
    }


def apply(obj: dict[str, Any], patch: dict[str, Any] | None) -> dict[str, Any]:
    """RFC 7386, as the apiserver applies Berth's patches."""
    if patch is None:
        return obj
    out = dict(obj)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict):
            out[key] = apply(out.get(key) or {}, value)
        else:
            out[key] = value
    return out


def evict(job: dict[str, Any]) -> dict[str, Any]:
    """``job`` after every step of Berth's eviction, each applied to what the last left."""
    from admission.kube.templates import EVICT_STEPS

    for step in EVICT_STEPS:
        job = apply(job, step.patch(job))
    return job
