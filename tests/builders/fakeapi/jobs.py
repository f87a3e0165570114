"""What the real API server and Job controller do to a batch/v1 Job, where Berth depends on it.

- The pod template is immutable, but for its scheduling directives (nodeSelector,
  tolerations, affinity, schedulingGates) and its labels and annotations, which may change
  only while the Job is suspended and has never started since (``status.startTime`` unset):
  Kubernetes' ``AllowMutableSchedulingDirectives``, otherwise 422 ``field is immutable``.
- The Job controller sets ``status.startTime`` when a Job runs (created unsuspended, or
  resumed) and never clears it; only a status write may, and only on a suspended Job.
"""

from __future__ import annotations

import copy
from typing import Any

from builders.fakeapi.errors import ApiError

Obj = dict[str, Any]

_DIRECTIVES = ("nodeSelector", "tolerations", "affinity", "schedulingGates")


def started(job: Obj, *, now: str) -> Obj:
    """A new Job as the controller leaves it: started unless it is created suspended."""
    if not _suspended(job):
        job.setdefault("status", {})["startTime"] = now
    return job


def checked_update(old: Obj, new: Obj, *, sub: str, now: str) -> Obj:
    """``new`` in place of ``old`` if the API server allows it, with the controller's
    ``startTime`` stamp on a resume; ``ApiError`` 422 as the real one answers otherwise."""
    name = old["metadata"]["name"]
    if sub == "status":
        before, after = _start_time(old), _start_time(new)
        if after != before and not _suspended(old):
            raise ApiError(
                422,
                "Invalid",
                f'Job.batch "{name}" is invalid: status.startTime: Required value: '
                "startTime cannot be removed for unsuspended job",
            )
        return new
    old_template, new_template = _template(old), _template(new)
    if fixed_template(old_template) != fixed_template(new_template):
        raise _immutable(name)
    if mutable_template(old_template) != mutable_template(new_template) and not (
        _suspended(old) and _start_time(old) is None
    ):
        raise _immutable(name)
    if _suspended(old) and not _suspended(new):
        new = copy.deepcopy(new)
        new.setdefault("status", {})["startTime"] = now
    return new


def _immutable(name: str) -> ApiError:
    return ApiError(
        422,
        "Invalid",
        f'Job.batch "{name}" is invalid: spec.template: Invalid value: "...": field is immutable',
    )


def _suspended(job: Obj) -> bool:
    return bool((job.get("spec") or {}).get("suspend"))


def _start_time(job: Obj) -> Any:
    return (job.get("status") or {}).get("startTime")


def _template(job: Obj) -> Obj:
    template: Obj = (job.get("spec") or {}).get("template") or {}
    return template


def mutable_template(template: Obj) -> Obj:
    spec = template.get("spec") or {}
    meta = template.get("metadata") or {}
    found = {key: spec.get(key) or None for key in _DIRECTIVES}
    found["labels"], found["annotations"] = meta.get("labels"), meta.get("annotations")
    return found


def fixed_template(template: Obj) -> Obj:
    spec = {k: v for k, v in (template.get("spec") or {}).items() if k not in _DIRECTIVES}
    meta = {
        k: v
        for k, v in (template.get("metadata") or {}).items()
        if k not in ("labels", "annotations")
    }
    return {**template, "spec": spec, "metadata": meta}
