"""``berth apply``, ``berth get`` and ``berth delete`` straight against the ledger."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import yaml

from berth import settings
from berth.cli.tables import render_table
from berth.database import Database
from quota.core.errors import InvalidInput, NotFound, Problem
from quota.core.kinds import resolve_kind
from quota.ledger.apply import Change, apply_objects
from quota.ledger.repository import Ledger
from quota.manifests.documents import parse_texts, to_manifest

EXIT_INVALID = 2
MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def run(args: argparse.Namespace) -> int:
    # Validate input before starting a database: bad input changes nothing and costs nothing.
    objects = None
    if args.command == "apply" or (args.command == "delete" and args.filename):
        try:
            objects = parse_texts(list(read_sources(args.filename)))
        except InvalidInput as exc:
            for problem in exc.problems:
                print(f"error: {problem}", file=sys.stderr)
            return EXIT_INVALID
    elif args.command == "delete" and not (args.kind and args.name):
        print("error: delete needs KIND NAME or -f FILE", file=sys.stderr)
        return EXIT_INVALID

    database = Database(settings.load(vars(args)).database)
    database.open()
    try:
        with database.session() as session:
            ledger = Ledger(session)
            if args.command == "apply":
                assert objects is not None
                result = apply_objects(ledger, objects, actor=_actor())
                _print_changes(result.changes)
                for warning in result.warnings:
                    print(f"warning: {warning}", file=sys.stderr)
                return 0
            if args.command == "delete":
                return _delete(ledger, args, objects)
            return _get(ledger, args)
    finally:
        database.close()


def read_sources(names: list[str]) -> Iterator[tuple[str, str]]:
    """(source, text) for every file named, every manifest in a folder, or stdin for ``-``."""
    problems = []
    for name in names:
        if name == "-":
            yield "-", sys.stdin.read()
            continue
        path = Path(name)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix in MANIFEST_SUFFIXES)
            if not files:
                problems.append(Problem("folder holds no .yaml, .yml or .json files", source=name))
            for file in files:
                yield str(file), file.read_text(encoding="utf-8")
        elif path.is_file():
            yield name, path.read_text(encoding="utf-8")
        else:
            problems.append(Problem("no such file or folder", source=name))
    if problems:
        raise InvalidInput(problems)


def _print_changes(changes: list[Change]) -> None:
    for change in changes:
        print(f"{change.kind.lower()}/{change.name} {change.action}")


def _delete(ledger: Ledger, args: argparse.Namespace, objects: list | None) -> int:  # type: ignore[type-arg]
    targets: list[tuple[str, str, str | None]] = []
    if objects is not None:
        for item in objects:
            namespace = getattr(item.obj, "namespace", None)
            targets.append((item.kind, str(getattr(item.obj, "name", "")), namespace))
    else:
        kind = resolve_kind(args.kind)
        if kind.namespaced and not args.namespace:
            print(f"error: {kind.name} is namespaced: give -n NAMESPACE", file=sys.stderr)
            return EXIT_INVALID
        targets.append((kind.name, args.name, args.namespace if kind.namespaced else None))
    missing = 0
    for kind_name, name, namespace in targets:
        shown = f"{namespace}/{name}" if namespace else name
        if ledger.delete(kind_name, name, namespace, actor=_actor()):
            print(f"{kind_name.lower()}/{shown} deleted")
        else:
            print(f"error: {kind_name} {shown!r} not found", file=sys.stderr)
            missing += 1
    return 1 if missing else 0


def _get(ledger: Ledger, args: argparse.Namespace) -> int:
    kind = resolve_kind(args.kind)
    if args.name:
        namespace = args.namespace if kind.namespaced else None
        if kind.namespaced and not namespace:
            print(f"error: {kind.name} is namespaced: give -n NAMESPACE", file=sys.stderr)
            return EXIT_INVALID
        obj = ledger.get(kind.name, args.name, namespace)
        if obj is None:
            shown = f"{namespace}/{args.name}" if namespace else args.name
            raise NotFound(f"{kind.name} {shown!r} not found")
        items = [obj]
    else:
        items = ledger.list(kind.name)
        if kind.namespaced and args.namespace:
            items = [i for i in items if getattr(i, "namespace", None) == args.namespace]
    manifests = [to_manifest(item) for item in items]
    if args.output == "json":
        body = (
            manifests[0] if args.name else {"apiVersion": "v1", "kind": "List", "items": manifests}
        )
        print(json.dumps(body, indent=2, sort_keys=False))
    elif args.output == "yaml":
        print(yaml.safe_dump_all(manifests, sort_keys=False), end="")
    else:
        print(render_table(kind.name, items))
    return 0


def _actor() -> str:
    import getpass

    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"
