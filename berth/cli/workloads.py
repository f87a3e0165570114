"""``berth submit -f FILE``, ``berth finish NS/NAME`` and ``berth delete workload NS/NAME``
over REST: what ``POST /api/v1/workloads``, ``…/finish`` and ``DELETE …`` do."""

from __future__ import annotations

import argparse
import sys

from berth.cli import manifests
from berth.cli.client import EXIT_INVALID, BerthClient, guarded
from berth.cli.kinds import workload_key
from quota.core.errors import InvalidInput


def submit(args: argparse.Namespace) -> int:
    """Submit every Job or Workload of the files as a pending workload."""
    try:
        read = manifests.read(args.filename)
    except InvalidInput as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        return EXIT_INVALID
    if read.objects:
        first = read.objects[0]
        print(f"error: {first.where()}: not a Job or Workload; quota objects go through "
              "`berth apply -f`", file=sys.stderr)  # fmt: skip
        return EXIT_INVALID
    if not read.workloads:
        print("error: no Job or Workload manifest found", file=sys.stderr)
        return EXIT_INVALID

    def send(client: BerthClient) -> None:
        for item in read.workloads:
            done = client.post("/api/v1/workloads", item.doc)  # type: ignore[arg-type]
            print(f"workload/{done['namespace']}/{done['name']} submitted ({done['state']})")

    return guarded(args, send)


def finish(args: argparse.Namespace) -> int:
    """Mark a workload finished: the quota it held is released."""
    namespace, name = workload_key(args.workload, args.namespace)

    def send(client: BerthClient) -> None:
        client.request("POST", f"/api/v1/workloads/{namespace}/{name}/finish")
        print(f"workload/{namespace}/{name} finished")

    return guarded(args, send)
