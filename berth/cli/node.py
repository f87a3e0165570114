"""``berth node``: move a node through the repair workflow and show its health history,
over REST (``--server``, ``$BERTH_TOKEN`` with the admin role for moves)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from berth.cli.client import BerthClient, add_server_flag, guarded

# Verb -> the health state it moves the node to.
MOVES = {
    "cordon": "Cordoned",
    "repair": "Repairing",
    "validate": "Validating",
    "return": "Healthy",
}


def add_parser(commands: Any) -> argparse.ArgumentParser:
    node = commands.add_parser(
        "node", help="node repair workflow: cordon, repair, validate, return; history"
    )
    node.add_argument("action", choices=[*MOVES, "history"])
    node.add_argument("name", metavar="NODE")
    node.add_argument("--why", default="", help="why (kept in the node's history)")
    add_server_flag(node)
    parser: argparse.ArgumentParser = node
    return parser


def run(args: argparse.Namespace) -> int:
    return guarded(args, lambda client: sys.stdout.write(_act(client, args)))


def _act(client: BerthClient, args: argparse.Namespace) -> str:
    if args.action == "history":
        return render_history(client.get(f"/api/v1/nodes/{args.name}/history"))
    body = {"state": MOVES[args.action], "why": args.why}
    moved = client.post(f"/api/v1/nodes/{args.name}/health", body)
    return f"node {moved['node']}: {moved['from']} -> {moved['to']} ({moved['why']})\n"


def render_history(history: dict[str, Any]) -> str:
    """The node's state, its transitions and the workloads its faults evicted."""
    lines = [f"node {history['node']}: {history['health']} since {history['healthSince']}"]
    for t in history["transitions"]:
        lines.append(f"  {t['at']}  {t['from'] or '-'} -> {t['to']}  by {t['actor']}: {t['why']}")
    if history["displaced"]:
        lines.append("evicted by its faults:")
        lines.extend(f"  {d['at']}  {d['namespace']}/{d['name']}" for d in history["displaced"])
    return "\n".join(lines) + "\n"
