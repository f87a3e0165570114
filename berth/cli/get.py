"""``berth get KIND [NAME] [-n NS] [-o table|wide|yaml|json]`` over REST, for every kind and
for workloads, with Kueue's columns: ClusterQueue cohort, pending, admitted and usage;
LocalQueue its ClusterQueue, pending and admitted. ``-o yaml``/``json`` carry the live
``status`` of ClusterQueues, Cohorts and LocalQueues. Cohorts that ClusterQueues (or other
Cohorts) name without a Cohort object (implicit, as Kueue allows) are listed too."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from berth.cli.client import ApiError, BerthClient, guarded
from berth.cli.kinds import WORKLOAD, resolve, workload_key
from berth.cli.tables import columns, row
from berth.cli.why import workload_table
from quota.core.errors import NotFound
from quota.core.kinds import Kind
from quota.manifests.documents import BERTH_API_VERSION, parse_objects

Manifest = dict[str, Any]
HEADERS = {
    "ResourceFlavor": ("NAME", "NODE LABELS", "TOPOLOGY"),
    "ClusterQueue": ("NAME", "COHORT", "STRATEGY", "PENDING", "ADMITTED", "USAGE"),
    "Cohort": ("NAME", "PARENT", "CLUSTERQUEUES", "NOMINAL QUOTA"),
    "LocalQueue": ("NAMESPACE", "NAME", "CLUSTERQUEUE", "PENDING", "ADMITTED"),
    "WorkloadPriorityClass": ("NAME", "VALUE"),
    "Namespace": ("NAME", "LABELS"),
    "Topology": ("NAME", "LEVELS"),
    "Node": ("NAME", "HEALTH", "SCHEDULABLE", "ALLOCATABLE"),
    "AdmissionCheck": ("NAME", "CONTROLLER", "PARAMETERS"),
    "ProvisioningRequestConfig": ("NAME", "CLASS", "MANAGED RESOURCES", "RETRY"),
}
WIDE = {"ClusterQueue": ("BORROWED", "LENT")}
WITH_STATUS = ("ClusterQueue", "Cohort", "LocalQueue")  # the kinds get adds a live status to


def get(args: argparse.Namespace) -> int:
    kind = resolve(args.kind)
    if kind is WORKLOAD:
        return guarded(args, lambda client: _workloads(client, args))
    return guarded(args, lambda client: _objects(client, kind, args))


def _workloads(client: BerthClient, args: argparse.Namespace) -> None:
    if args.name and ("/" in args.name or args.namespace):
        namespace, name = workload_key(args.name, args.namespace)
        items = [client.workload(namespace, name)]
    else:
        params: dict[str, str | int] = {}
        if args.pending:
            params["state"] = "Pending"
        if args.namespace:
            params["namespace"] = args.namespace
        if args.cluster_queue:
            params["clusterQueue"] = args.cluster_queue
        items = list(client.pages("/api/v1/workloads", params))
        if args.name:
            items = [w for w in items if w["name"] == args.name]
            if not items:
                raise NotFound(f"Workload {args.name!r} not found in any namespace")
    if args.output in ("yaml", "json"):
        sys.stdout.write(_dump(items, args.output, one=bool(args.name) and len(items) == 1))
    else:
        sys.stdout.write(workload_table(items, wide=args.output == "wide"))


def _objects(client: BerthClient, kind: Kind, args: argparse.Namespace) -> None:
    items: list[Manifest] = client.get(f"/api/v1/{kind.plural}")["items"]
    if kind.name == "Cohort":
        items = _with_implicit(client, items)
    if kind.namespaced and args.namespace:
        items = [m for m in items if m["metadata"].get("namespace") == args.namespace]
    if args.name:
        items = [m for m in items if m["metadata"]["name"] == args.name]
        if not items:
            scoped = kind.namespaced and args.namespace
            where = f" in namespace {args.namespace!r}" if scoped else ""
            raise NotFound(f"{kind.name} {args.name!r} not found{where}", field="name")
    _add_status(client, kind, items)
    if args.output in ("yaml", "json"):
        sys.stdout.write(_dump(items, args.output, one=bool(args.name) and len(items) == 1))
    else:
        sys.stdout.write(table(kind.name, items, wide=args.output == "wide"))


def table(kind: str, items: Sequence[Manifest], *, wide: bool = False) -> str:
    """Aligned columns with a header row; says so when there is nothing to show."""
    if not items:
        return f"No {kind} objects.\n"
    header = [*HEADERS[kind], *(WIDE.get(kind, ()) if wide else ())]
    return columns(header, [_cells(kind, m, wide=wide) for m in items], gap=3)


def _cells(kind: str, manifest: Manifest, *, wide: bool) -> list[str]:
    status = manifest.get("status") or {}
    if kind == "Cohort" and not status.get("declared", True):
        return [manifest["metadata"]["name"], status.get("parent") or "-",
                _names(status), "<implicit>"]  # fmt: skip
    base = list(row(_model(manifest)))
    if kind == "ClusterQueue":
        cells = [*base[:3], str(status.get("pendingWorkloads", "-")),
                 str(status.get("admittedWorkloads", "-")), _usage(status)]  # fmt: skip
        return [*cells, _held(status, "borrowed"), _held(status, "lent")] if wide else cells
    if kind == "Cohort":
        return [base[0], base[1], _names(status), base[2]]
    if kind == "LocalQueue":
        return [*base, str(status.get("pendingWorkloads", 0)),
                str(status.get("admittedWorkloads", 0))]  # fmt: skip
    return base


def _model(manifest: Manifest) -> object:
    """The core value of a manifest the API gave (without the live status added here; a
    Node's own status, its capacity, stays)."""
    added = manifest.get("kind") in WITH_STATUS
    spec = {k: v for k, v in manifest.items() if not (added and k == "status")}
    return parse_objects([("server", 0, spec)])[0].obj


def _add_status(client: BerthClient, kind: Kind, items: list[Manifest]) -> None:
    if kind.name == "ClusterQueue":
        statuses = {s["name"]: s["status"] for s in client.pages("/api/v1/status/clusterqueues")}
        for m in items:
            m["status"] = statuses.get(m["metadata"]["name"], {})
    elif kind.name == "Cohort":
        for m in items:
            declared = m.pop("declared", True)
            try:
                found = client.get(f"/api/v1/cohorts/{m['metadata']['name']}")
            except ApiError as exc:  # a declared Cohort with nothing below it has no figures
                if exc.status != 404:
                    raise
                found = {"status": {}}
            m["status"] = {**found["status"], "parent": found.get("parent"),
                           "clusterQueues": found.get("clusterQueues") or [],
                           "cohorts": found.get("cohorts") or [], "declared": declared}  # fmt: skip
    elif kind.name == "LocalQueue":
        found = {(q["namespace"], q["name"]): q["status"]
                 for q in client.get("/api/v1/status/localqueues")["items"]}  # fmt: skip
        for m in items:
            key = (m["metadata"]["namespace"], m["metadata"]["name"])
            m["status"] = found.get(key, {"pendingWorkloads": 0, "reservingWorkloads": 0,
                                          "admittedWorkloads": 0})


def _with_implicit(client: BerthClient, declared: list[Manifest]) -> list[Manifest]:
    """Declared Cohorts, and those only named by a ClusterQueue or a Cohort's parent."""
    names = {m["metadata"]["name"] for m in declared}
    named = {s["cohort"] for s in client.pages("/api/v1/status/clusterqueues") if s.get("cohort")}
    named |= {str(m["spec"]["parentName"]) for m in declared
              if isinstance(m.get("spec"), dict) and m["spec"].get("parentName")}  # fmt: skip
    implicit = [
        {"apiVersion": BERTH_API_VERSION, "kind": "Cohort", "metadata": {"name": name},
         "declared": False}
        for name in sorted(named - names)
    ]  # fmt: skip
    return sorted([*declared, *implicit], key=lambda m: str(m["metadata"]["name"]))


def _usage(status: Mapping[str, Any]) -> str:
    parts = []
    for flavor in status.get("flavors") or ():
        used = ",".join(f"{r['name']}={r['used']}/{r['nominal']}" for r in flavor["resources"])
        parts.append(f"{flavor['name']}({used})")
    return " ".join(parts) or "-"


def _held(status: Mapping[str, Any], figure: str) -> str:
    """The resources with a non-zero ``figure`` (borrowed, lent), per flavor."""
    parts = []
    for flavor in status.get("flavors") or ():
        amounts = [f"{r['name']}={r[figure]}" for r in flavor["resources"] if r[figure] != "0"]
        if amounts:
            parts.append(f"{flavor['name']}({','.join(amounts)})")
    return " ".join(parts) or "-"


def _names(status: Mapping[str, Any]) -> str:
    return ",".join(status.get("clusterQueues") or ()) or "-"


def _dump(items: list[Any], output: str, *, one: bool) -> str:
    body: Any = items[0] if one else {"apiVersion": "v1", "kind": "List", "items": items}
    if output == "json":
        return json.dumps(body, indent=2) + "\n"
    if one:
        return str(yaml.safe_dump(body, sort_keys=False))
    return str(yaml.safe_dump_all(items, sort_keys=False))
