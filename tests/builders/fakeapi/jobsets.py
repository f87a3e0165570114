"""What the JobSet webhook allows on an update, where Berth depends on it: the
replicatedJobs are immutable, but for their pod templates' scheduling directives
(nodeSelector, tolerations, affinity, schedulingGates, labels, annotations), which may
change only while the JobSet is suspended; otherwise 422 as the real one answers."""

from __future__ import annotations

from typing import Any

from builders.fakeapi.errors import ApiError
from builders.fakeapi.jobs import fixed_template, mutable_template

Obj = dict[str, Any]


def checked_update(old: Obj, new: Obj, *, sub: str) -> Obj:
    if sub == "status":
        return new
    before, after = _replicated(old), _replicated(new)
    if [_fixed(job) for job in before] != [_fixed(job) for job in after]:
        raise _invalid(old, "spec.replicatedJobs: Invalid value: field is immutable")
    changed = [_mutable(job) for job in before] != [_mutable(job) for job in after]
    if changed and not (old.get("spec") or {}).get("suspend"):
        raise _invalid(
            old, "spec.replicatedJobs: pod template scheduling directives may change only "
            "while the JobSet is suspended",
        )
    return new


def _replicated(jobset: Obj) -> list[Obj]:
    found: list[Obj] = (jobset.get("spec") or {}).get("replicatedJobs") or []
    return found


def _template(job: Obj) -> Obj:
    template: Obj = (((job.get("template") or {}).get("spec") or {}).get("template")) or {}
    return template


def _fixed(job: Obj) -> Obj:
    job_spec = dict((job.get("template") or {}).get("spec") or {})
    job_spec["template"] = fixed_template(_template(job))
    return {**job, "template": {**(job.get("template") or {}), "spec": job_spec}}


def _mutable(job: Obj) -> Obj:
    return mutable_template(_template(job))


def _invalid(jobset: Obj, why: str) -> ApiError:
    name = jobset["metadata"]["name"]
    return ApiError(422, "Invalid", f'JobSet.jobset.x-k8s.io "{name}" is invalid: {why}')
