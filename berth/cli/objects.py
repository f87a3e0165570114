"""``berth apply`` and ``berth delete`` over the REST API (``berth.cli.client``).

``apply -f`` sends the quota objects in one ``POST /api/v1/apply`` (all or nothing) and
then submits each Job or Workload it read (``POST /api/v1/workloads``), as kubectl users
expect of ``apply``; each line says what happened in kubectl's words (``clusterqueue/x
created``, ``configured``, ``unchanged``). ``--dry-run`` asks the server what would change
(``?dryRun=All``: the same apply, rolled back) and prints it as a diff; it writes nothing.
"""

from __future__ import annotations

import argparse
import difflib
import sys

import yaml

from berth.cli import manifests
from berth.cli.client import EXIT_FAILED, EXIT_INVALID, EXIT_OK, ApiError, BerthClient, guarded
from berth.cli.kinds import WORKLOAD, resolve, workload_key
from quota.core.errors import InvalidInput
from quota.core.kinds import Kind


def apply(args: argparse.Namespace) -> int:
    # Read and check everything before the server is asked: bad input costs nothing.
    try:
        read = manifests.read(args.filename)
        read.parsed_objects()
    except InvalidInput as exc:
        return _problems(exc)
    if not read.objects and not read.workloads:
        print("error: no objects passed to apply (the input holds no manifest)", file=sys.stderr)
        return EXIT_INVALID
    return guarded(args, lambda client: _apply(client, read, dry_run=args.dry_run), coded=True)


def _apply(client: BerthClient, read: manifests.Manifests, *, dry_run: bool) -> int:
    params = {"dryRun": "All"} if dry_run else {}
    if read.objects:
        result = client.request("POST", "/api/v1/apply", params=params,
                                content=read.objects_body())  # fmt: skip
        for change in result["changes"]:
            print(f"{change['kind'].lower()}/{change['name']} {change['action']}"
                  + (" (dry run)" if dry_run else ""))  # fmt: skip
            if dry_run and change["action"] != "unchanged":
                sys.stdout.write(diff(change))
        for warning in result["warnings"]:
            print(f"warning: {_problem_text(warning)}", file=sys.stderr)
    failed = EXIT_OK
    for item in read.workloads:
        label = _workload_label(item.doc)
        try:
            client.request("POST", "/api/v1/workloads", params=params,
                           json=item.doc)  # type: ignore[arg-type]  # fmt: skip
        except ApiError as exc:
            if exc.status == 0:
                raise
            for line in exc.lines():
                print(f"error: {item.where()}: {label}: {line}", file=sys.stderr)
            failed = EXIT_INVALID if exc.status in (400, 404, 409, 422) else EXIT_FAILED
            continue
        print(f"{label} created" + (" (dry run)" if dry_run else ""))
    return failed


def diff(change: dict[str, object]) -> str:
    """What a dry run would change in one object, as a unified diff of its YAML."""
    name = f"{str(change['kind']).lower()}/{change['name']}"
    before = _yaml(change.get("before"))
    after = _yaml(change.get("after"))
    lines = difflib.unified_diff(
        before, after, fromfile=f"{name} (stored)", tofile=f"{name} (applied)"
    )
    return "".join(lines)


def delete(args: argparse.Namespace) -> int:
    if args.filename:
        try:
            read = manifests.read(args.filename)
            objects = read.parsed_objects()
        except InvalidInput as exc:
            return _problems(exc)
        targets = [(resolve(o.kind), str(getattr(o.obj, "name", "")),
                    getattr(o.obj, "namespace", None)) for o in objects]  # fmt: skip
        for item in read.workloads:
            meta = item.doc.get("metadata") or {} if isinstance(item.doc, dict) else {}
            targets.append((WORKLOAD, str(meta.get("name")), str(meta.get("namespace"))))
    elif args.kind and args.name:
        kind = resolve(args.kind)
        if kind is WORKLOAD:
            namespace, name = workload_key(args.name, args.namespace)
        else:
            namespace, name = args.namespace, args.name
            if kind.namespaced and not namespace:
                print(f"error: {kind.name} is namespaced: give -n NAMESPACE", file=sys.stderr)
                return EXIT_INVALID
        targets = [(kind, name, namespace if kind.namespaced else None)]
    else:
        print("error: delete needs KIND NAME or -f FILE", file=sys.stderr)
        return EXIT_INVALID
    return guarded(args, lambda client: _delete(client, targets), coded=True)


def _delete(client: BerthClient, targets: list[tuple[Kind, str, str | None]]) -> int:
    failed = EXIT_OK
    for kind, name, namespace in targets:
        shown = f"{namespace}/{name}" if namespace else name
        path = f"/api/v1/{kind.plural}/{shown}"
        try:
            client.request("DELETE", path)
        except ApiError as exc:
            if exc.status == 0:
                raise
            print(f"error: {exc.message}", file=sys.stderr)
            failed = EXIT_INVALID if exc.status in (400, 404, 409, 422) else EXIT_FAILED
            continue
        print(f"{kind.name.lower()}/{shown} deleted")
    return failed


def _yaml(manifest: object) -> list[str]:
    if manifest is None:
        return []
    return yaml.safe_dump(manifest, sort_keys=False).splitlines(keepends=True)


def _workload_label(doc: object) -> str:
    if not isinstance(doc, dict):
        return "workload"
    meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
    assert isinstance(meta, dict)
    return f"{str(doc.get('kind')).lower()}/{meta.get('namespace')}/{meta.get('name')}"


def _problem_text(problem: dict[str, object]) -> str:
    where = [str(problem.get(k)) for k in ("object", "field") if problem.get(k)]
    return ": ".join([*where, str(problem["message"])])


def _problems(exc: InvalidInput) -> int:
    for problem in exc.problems:
        print(f"error: {problem}", file=sys.stderr)
    return EXIT_INVALID
