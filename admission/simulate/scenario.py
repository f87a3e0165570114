"""A ``berth simulate`` scenario file parsed and checked into typed steps (PURE: text in).

Every problem of the file is collected before anything runs, each named as ``berth apply``
names it: the object (``ClusterQueue/cq-a``, ``Job/team/train``) when it concerns one, and
the field path from the document root (``objects[1].spec...``, ``steps[2].create[0].spec...``).
What exists at each step (objects, workloads, priority classes) follows statically from
the events, so unknown names are caught here and the runner never fails on input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from admission.simulate.config import read_config
from quota.core.checks import CheckState
from quota.core.errors import InvalidInput, Problem
from quota.core.model import PriorityClass
from quota.core.pods_ready import DISABLED, PodsReadyPolicy
from quota.core.workload import Workload
from quota.manifests.documents import ManifestObject, find_kind, load_documents, parse_objects
from quota.manifests.frameworks import READERS as FRAMEWORK_KINDS
from quota.manifests.jobs import parse_workload, workload_label

# Virtual time zero: step offsets and creation times are counted from here.
EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
RUNTIME_ANNOTATION = "berth.dev/runtime"
# Step times and runtimes: the virtual clock (from EPOCH) must stay a representable date.
MAX_DURATION = timedelta(days=100 * 365)
# Every kind a workload comes from: Job, the frameworks' kinds, Kueue's Workload.
WORKLOAD_KINDS = (*dict.fromkeys(kind for _, kind in FRAMEWORK_KINDS), "Workload")

_TOP_KEYS = ("name", "config", "objects", "steps")
_STEP_KEYS = ("at", "apply", "delete", "create", "finish", "deactivate", "checkpointed",
              "podsReady", "checks")
_CHECK_KEYS = ("workload", "check", "state", "message")
_DELETE_KEYS = ("kind", "name", "namespace")
_DURATION = re.compile(r"^(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?$")


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """What a ``delete`` event names; ``namespace`` only for namespaced kinds."""

    kind: str
    name: str
    namespace: str | None = None

    @property
    def key(self) -> str:
        """``namespace/name`` or ``name``; for a Job or Workload this is its workload key."""
        return self.name if self.namespace is None else f"{self.namespace}/{self.name}"

    @property
    def object_key(self) -> str:
        """The ``ManifestObject.key`` of the object it names."""
        return f"{self.kind}/{self.key}"


@dataclass(frozen=True, slots=True)
class Creation:
    workload: Workload
    runtime: timedelta | None = None  # finishes by itself this long after admission


@dataclass(frozen=True, slots=True)
class CheckEvent:
    """An admission check's controller setting its state on a workload."""

    workload: str
    check: str
    state: CheckState
    message: str = ""


@dataclass(frozen=True, slots=True)
class Step:
    index: int
    at: timedelta
    at_text: str  # as written, echoed in the output
    apply: tuple[ManifestObject, ...] = ()
    delete: tuple[ObjectRef, ...] = ()
    create: tuple[Creation, ...] = ()
    finish: tuple[str, ...] = ()
    deactivate: tuple[str, ...] = ()
    checkpointed: tuple[str, ...] = ()  # workloads reporting a finished checkpoint
    pods_ready: tuple[str, ...] = ()  # workloads whose pods all became Ready
    checks: tuple[CheckEvent, ...] = ()


@dataclass(frozen=True, slots=True)
class Scenario:
    source: str
    epoch: datetime
    name: str | None
    objects: tuple[ManifestObject, ...]
    steps: tuple[Step, ...]
    pods_ready: PodsReadyPolicy = DISABLED  # config.waitForPodsReady


class DurationError(ValueError):
    """Text that is not a duration like ``0s``, ``90s``, ``5m``, ``1h30m``."""


def parse_duration(value: object) -> timedelta:
    """Parse ``0s``, ``90s``, ``5m``, ``1h30m`` (hours, minutes, seconds in that order), at
    most ``MAX_DURATION``."""
    text = value if isinstance(value, str) else None
    match = _DURATION.fullmatch(text) if text else None
    if match is None or not any(match.groupdict().values()):
        raise DurationError(f"{value!r} is not a duration (expected e.g. 0s, 90s, 5m, 1h30m)")
    hours, minutes, seconds = (int(match[part] or 0) for part in ("h", "m", "s"))
    try:
        duration = timedelta(hours=hours, minutes=minutes, seconds=seconds)
    except OverflowError:
        duration = timedelta.max
    if duration > MAX_DURATION:
        years = MAX_DURATION.days // 365
        raise DurationError(f"{value!r} is longer than {years} years (the limit)")
    return duration


def format_duration(offset: timedelta) -> str:
    """The inverse of ``parse_duration`` in its shortest form (``5400s`` → ``1h30m``)."""
    total = int(offset.total_seconds())
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    parts = ((hours, "h"), (minutes, "m"), (seconds, "s"))
    text = "".join(f"{amount}{unit}" for amount, unit in parts if amount)
    return text or "0s"


def parse_scenario(text: str, source: str, epoch: datetime = EPOCH) -> Scenario:
    """Parse and check a whole scenario; every problem found goes in one ``InvalidInput``."""
    try:
        documents = load_documents(text, source)
    except InvalidInput as exc:
        # One document only, so "document 0" would be noise in the message.
        raise InvalidInput(
            [Problem(p.message, source=source, field=p.field) for p in exc.problems]
        ) from exc
    if len(documents) != 1 or not isinstance(documents[0][1], Mapping):
        raise InvalidInput(
            [
                Problem(
                    "a scenario must be one YAML mapping with name, objects and steps",
                    source=source,
                )
            ]
        )
    return _Parser(source, epoch).parse(documents[0][1])


class _Parser:
    """One pass over the document, tracking what exists so far; problems accumulate."""

    def __init__(self, source: str, epoch: datetime) -> None:
        self.source = source
        self.epoch = epoch
        self.problems: list[Problem] = []
        self.objects: dict[str, ManifestObject] = {}  # by ManifestObject.key
        self.workloads: dict[str, str] = {}  # key -> kind, every workload created so far

    def problem(self, field: str, message: str, obj: str = "") -> None:
        """Record a problem at ``field`` (from the document root), of object ``obj``
        (``Kind/name``, as ``berth apply`` names it) when it concerns one."""
        self.problems.append(Problem(message, source=self.source, obj=obj, field=field))

    def parse(self, doc: Mapping[object, object]) -> Scenario:
        for key in doc:
            if key not in _TOP_KEYS:
                self.problem(str(key), f"unknown key; expected one of: {', '.join(_TOP_KEYS)}")
        name = doc.get("name")
        if name is not None and not isinstance(name, str):
            self.problem("name", "must be a string")
        policy = read_config(doc.get("config"), self.problem)
        objects = self._objects(self._list(doc.get("objects"), "objects"), "objects")
        for item in objects:
            self.objects[item.key] = item
        raw_steps = self._list(doc.get("steps"), "steps")
        steps: list[Step] = []
        previous = timedelta(0)
        for index, raw in enumerate(raw_steps):
            step = self._step(index, raw, previous)
            if step is not None:
                steps.append(step)
                previous = step.at
        if self.problems:
            raise InvalidInput(self.problems)
        title = name if isinstance(name, str) else None
        return Scenario(self.source, self.epoch, title, objects, tuple(steps), policy)

    def _list(self, value: object, field: str) -> list[object]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.problem(field, "must be a list")
            return []
        return value

    def _step(self, index: int, raw: object, previous: timedelta) -> Step | None:
        field = f"steps[{index}]"
        if not isinstance(raw, Mapping):
            self.problem(field, "must be a mapping with at and events")
            return None
        for key in raw:
            if key not in _STEP_KEYS:
                expected = ", ".join(_STEP_KEYS)
                self.problem(f"{field}.{key}", f"unknown step key; expected one of: {expected}")
        if "at" not in raw:
            self.problem(f"{field}.at", "required: the virtual time of the step, e.g. 5m")
            return None
        try:
            at = parse_duration(raw["at"])
        except DurationError as exc:
            self.problem(f"{field}.at", str(exc))
            return None
        if at < previous:
            self.problem(
                f"{field}.at",
                f"{raw['at']} is before the previous step ({format_duration(previous)}); "
                "steps must be in time order",
            )
        apply = self._objects(self._list(raw.get("apply"), f"{field}.apply"), f"{field}.apply")
        for item in apply:
            self.objects[item.key] = item
        delete = self._deletes(raw.get("delete"), f"{field}.delete")
        create = self._creates(raw.get("create"), f"{field}.create", self.epoch + at)
        finish = self._keys(raw.get("finish"), f"{field}.finish")
        deactivate = self._keys(raw.get("deactivate"), f"{field}.deactivate")
        checkpointed = self._keys(raw.get("checkpointed"), f"{field}.checkpointed")
        ready = self._keys(raw.get("podsReady"), f"{field}.podsReady")
        checks = self._checks(raw.get("checks"), f"{field}.checks")
        return Step(
            index,
            at,
            str(raw["at"]),
            tuple(apply),
            tuple(delete),
            tuple(create),
            tuple(finish),
            tuple(deactivate),
            tuple(checkpointed),
            tuple(ready),
            tuple(checks),
        )

    def _objects(self, raw: list[object], field: str) -> tuple[ManifestObject, ...]:
        docs: list[tuple[str, int, object]] = []
        for index, doc in enumerate(raw):
            if isinstance(doc, Mapping) and doc.get("kind") in WORKLOAD_KINDS:
                kind = doc["kind"]
                self.problem(
                    f"{field}[{index}].kind",
                    f"{kind}s are created by a step's create list, not here",
                    workload_label(doc),
                )
            else:
                docs.append((self.source, index, doc))
        try:
            return tuple(parse_objects(docs))
        except InvalidInput as exc:
            for problem in exc.problems:
                index = problem.document if problem.document is not None else 0
                self._relocate(problem, f"{field}[{index}]")
            return ()

    def _relocate(self, problem: Problem, prefix: str) -> None:
        """A manifest's problem, its field path prefixed with the manifest's place here."""
        field = f"{prefix}.{problem.field}" if problem.field else prefix
        self.problem(field, problem.message, problem.obj)

    def _deletes(self, value: object, field: str) -> list[ObjectRef]:
        refs: list[ObjectRef] = []
        for index, raw in enumerate(self._list(value, field)):
            ref = self._delete(raw, f"{field}[{index}]")
            if ref is not None:
                refs.append(ref)
        return refs

    def _delete(self, raw: object, field: str) -> ObjectRef | None:
        if not isinstance(raw, Mapping):
            self.problem(field, "must be a mapping {kind, name, namespace?}")
            return None
        for key in raw:
            if key not in _DELETE_KEYS:
                self.problem(f"{field}.{key}", "unknown key; expected kind, name, namespace")
        kind, name, namespace = raw.get("kind"), raw.get("name"), raw.get("namespace")
        if not isinstance(kind, str) or not isinstance(name, str) or not name:
            self.problem(field, "needs kind and name as strings")
            return None
        if namespace is not None and not isinstance(namespace, str):
            self.problem(f"{field}.namespace", "must be a string")
            return None
        if kind in WORKLOAD_KINDS:
            return self._delete_workload(ObjectRef(kind, name, namespace), field)
        known = find_kind(kind)
        if known is None:
            self.problem(f"{field}.kind", f"unknown kind {kind}")
            return None
        if known.namespaced != (namespace is not None):
            need = "needs a namespace" if known.namespaced else "is cluster-scoped: drop namespace"
            self.problem(f"{field}.namespace", f"{known.name} {need}", f"{known.name}/{name}")
            return None
        ref = ObjectRef(known.name, name, namespace)
        if ref.object_key not in self.objects:
            self.problem(
                field, f"{known.name} {ref.key} does not exist at this step", ref.object_key
            )
            return None
        del self.objects[ref.object_key]
        return ref

    def _delete_workload(self, ref: ObjectRef, field: str) -> ObjectRef | None:
        if ref.namespace is None:
            self.problem(f"{field}.namespace", f"required to delete a {ref.kind}", ref.object_key)
            return None
        if self.workloads.get(ref.key) != ref.kind:
            self.problem(field, f"{ref.kind} {ref.key} does not exist at this step", ref.object_key)
            return None
        del self.workloads[ref.key]
        return ref

    def _creates(self, value: object, field: str, now: datetime) -> list[Creation]:
        priority_classes = {
            item.obj.name: item.obj
            for item in self.objects.values()
            if isinstance(item.obj, PriorityClass)
        }
        made: list[Creation] = []
        for index, doc in enumerate(self._list(value, field)):
            # The engine orders equal creation times by name; a microsecond apart keeps the
            # list order the spec promises without showing in the output.
            created_at = now + timedelta(microseconds=index)
            creation = self._create(doc, f"{field}[{index}]", created_at, priority_classes)
            if creation is not None:
                made.append(creation)
        return made

    def _create(
        self,
        doc: object,
        field: str,
        now: datetime,
        priority_classes: Mapping[str, PriorityClass],
    ) -> Creation | None:
        try:
            workload = parse_workload(
                doc,
                source=self.source,
                document=0,
                created_at=now,
                priority_classes=priority_classes,
            )
        except InvalidInput as exc:
            for problem in exc.problems:
                self._relocate(problem, field)
            return None
        label = f"{workload.kind}/{workload.key}"
        if workload.key in self.workloads:
            self.problem(
                f"{field}.metadata.name",
                f"{workload.key} already exists; delete it first to create it again",
                label,
            )
            return None
        runtime = None
        if RUNTIME_ANNOTATION in workload.annotations:
            raw = workload.annotations[RUNTIME_ANNOTATION]
            runtime = self._runtime(raw, f"{field}.metadata.annotations[{RUNTIME_ANNOTATION}]",
                                    label)
            if runtime is None:
                return None
        self.workloads[workload.key] = workload.kind
        return Creation(workload, runtime)

    def _runtime(self, value: object, field: str, obj: str) -> timedelta | None:
        try:
            runtime = parse_duration(value)
        except DurationError as exc:
            self.problem(field, str(exc), obj)
            return None
        if not runtime:
            self.problem(field, "must be longer than 0s", obj)
            return None
        return runtime

    def _checks(self, value: object, field: str) -> list[CheckEvent]:
        events: list[CheckEvent] = []
        for index, raw in enumerate(self._list(value, field)):
            place = f"{field}[{index}]"
            if not isinstance(raw, Mapping):
                self.problem(place, "must be a mapping {workload, check, state, message?}")
                continue
            for key in raw:
                if key not in _CHECK_KEYS:
                    self.problem(f"{place}.{key}",
                                 f"unknown key; expected one of: {', '.join(_CHECK_KEYS)}")
            key = self._key(raw.get("workload"), f"{place}.workload")
            check, state, message = raw.get("check"), raw.get("state"), raw.get("message", "")
            states = [str(s) for s in CheckState]
            if not isinstance(check, str) or not check:
                self.problem(f"{place}.check", "required: the admission check's name")
            if state not in states:
                self.problem(f"{place}.state", f"must be one of {', '.join(states)}; "
                             f"got {state!r}")
            if not isinstance(message, str):
                self.problem(f"{place}.message", "must be a string")
            elif key is not None and isinstance(check, str) and check and state in states:
                events.append(CheckEvent(key, check, CheckState(str(state)), message))
        return events

    def _keys(self, value: object, field: str) -> list[str]:
        found = (self._key(raw, f"{field}[{i}]") for i, raw in enumerate(self._list(value, field)))
        return [key for key in found if key is not None]

    def _key(self, raw: object, place: str) -> str | None:
        if not isinstance(raw, str) or raw.count("/") != 1 or "" in raw.split("/"):
            self.problem(place, f"{raw!r} is not a workload key namespace/name")
        elif raw not in self.workloads:
            self.problem(place, f"no workload {raw} exists at this step")
        else:
            return raw
        return None
