"""``berth check set NS/NAME CHECK --state Ready [--message ...]``: answer an external
admission check over REST (``--server``, ``$BERTH_TOKEN`` with the admin role)."""

from __future__ import annotations

import argparse
from typing import Any

from berth.cli.client import BerthClient, add_server_flag, guarded
from berth.cli.kinds import workload_key
from quota.core.checks import CheckState


def add_parser(commands: Any) -> argparse.ArgumentParser:
    check = commands.add_parser("check", help="set an external admission check's state")
    actions = check.add_subparsers(dest="action", required=True, metavar="ACTION")
    set_ = actions.add_parser("set", help="set a check's state on a workload reserving quota")
    set_.add_argument("workload", metavar="NAMESPACE/NAME")
    set_.add_argument("check", metavar="CHECK", help="the AdmissionCheck's name")
    set_.add_argument("--state", required=True, choices=[str(s) for s in CheckState])
    set_.add_argument("--message", default="", help="what the check says (shown in berth why)")
    set_.add_argument("--requeue-after", type=int, metavar="SECONDS",
                      help="with Retry: how long it waits before it is queued again")
    set_.add_argument("-n", "--namespace", help="the namespace, when only NAME is given")
    add_server_flag(set_)
    parser: argparse.ArgumentParser = set_
    return parser


def run(args: argparse.Namespace) -> int:
    namespace, name = workload_key(args.workload, args.namespace)
    body: dict[str, object] = {"state": args.state, "message": args.message}
    if args.requeue_after is not None:
        body["requeueAfterSeconds"] = args.requeue_after

    def send(client: BerthClient) -> None:
        path = f"/api/v1/workloads/{namespace}/{name}/admission-checks/{args.check}"
        done: dict[str, Any] = client.post(path, body)
        print(f"workload/{namespace}/{name} check {args.check} {args.state} "
              f"({done['state']})")

    return guarded(args, send)
