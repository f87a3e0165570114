"""The ``berth`` command line: parse arguments, dispatch to one command module each."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from berth.bench.arguments import add_arguments as bench_arguments
from berth.cli import audit as audit_cli
from berth.cli import check as check_cli
from berth.cli import mcp as mcp_cli
from berth.cli import node as node_cli
from berth.cli.client import add_server_flag
from quota.core.errors import BerthError

EXIT_INVALID = 2


def config_flag(parser: argparse.ArgumentParser) -> None:
    """``--config FILE``: the settings file (README, Settings); flags and variables win."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="settings file (YAML, README 'Settings'; default $BERTH_CONFIG); "
        "flags and BERTH_* variables win over it",
    )


def _database_flags(parser: argparse.ArgumentParser) -> None:
    config_flag(parser)
    parser.add_argument(
        "--database-url",
        help="external PostgreSQL (e.g. postgresql://postgres@127.0.0.1:5432/berth); "
        "default: $BERTH_DATABASE_URL, else the embedded server",
    )
    parser.add_argument(
        "--home",
        help="where the embedded PostgreSQL keeps its data (default: $BERTH_HOME, else "
        "~/.local/share/berth, or /var/lib/berth when run as root)",
    )


def _rest(commands: Any, name: str, help: str) -> argparse.ArgumentParser:
    """A command over the REST API: ``--server`` and ``--config``."""
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help)
    add_server_flag(parser)
    config_flag(parser)
    return parser


def _files(parser: argparse.ArgumentParser, *, required: bool) -> None:
    parser.add_argument(
        "-f",
        "--filename",
        action="append",
        required=required,
        metavar="FILE|DIR|-",
        help="YAML/JSON manifests (repeatable); a folder takes its *.yaml, *.yml, *.json",
    )


READ_COMMANDS = ("get", "why", "top", "history")  # what `kubectl berth` offers too


def add_read_commands(
    commands: Any, rest: Callable[[Any, str, str], argparse.ArgumentParser]
) -> None:
    """``get``, ``why``, ``top`` and ``history``, each made by ``rest`` (which adds the
    flags that choose the server): ``berth`` and ``kubectl berth`` parse them alike."""
    get = rest(commands, "get", "list objects or workloads of a kind, or show one")
    get.add_argument(
        "kind",
        help="clusterqueues, localqueues, cohorts, resourceflavors, priorityclasses, "
        "namespaces, topologies, nodes, admissionchecks, provisioningrequestconfigs, "
        "workloads (singulars and cq, lq, rf, wl, ac, prc too)",
    )
    get.add_argument("name", nargs="?", help="one by name (workloads: NAME or NAMESPACE/NAME)")
    get.add_argument("-n", "--namespace", help="namespace (LocalQueues, workloads)")
    get.add_argument("-o", "--output", choices=["table", "wide", "yaml", "json"], default="table")
    get.add_argument("--pending", action="store_true", help="workloads: pending only")
    get.add_argument("--cluster-queue", help="workloads: one ClusterQueue")

    why = rest(commands, "why", "why a workload waits, what would help, when it may start")
    why.add_argument("workload", metavar="NAMESPACE/NAME")
    rest(commands, "top", "ClusterQueue quota usage bars")

    history = rest(commands, "history", "a workload's history: time per reason, evictions, rows")
    history.add_argument("workload", metavar="NAMESPACE/NAME")


def dispatch_read(args: argparse.Namespace) -> int:
    """Run one of ``READ_COMMANDS``."""
    if args.command == "get":
        from berth.cli import get as get_cli

        return get_cli.get(args)
    from berth.cli import why as why_cli

    run = {"why": why_cli.why, "top": why_cli.top, "history": why_cli.history}
    return run[args.command](args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="berth",
        description="Job queueing and quota admission for shared GPU clusters.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the API server (and the ledger)")
    _database_flags(serve)
    serve.add_argument(
        "--host", help="address to listen on (default $BERTH_HOST, else 127.0.0.1)"
    )
    serve.add_argument(
        "--port", type=int, help="port to listen on (default $BERTH_PORT, else 8000)"
    )
    serve.add_argument(
        "--no-loop",
        action="store_true",
        help="serve the API only; never run admission cycles on this replica",
    )
    serve.add_argument(
        "--loop-interval",
        type=float,
        metavar="SECONDS",
        help="seconds between admission cycles when nothing changes (default "
        "$BERTH_LOOP_INTERVAL, else 1)",
    )
    serve.add_argument(
        "--fair-sharing",
        action=argparse.BooleanOptionalAction,
        help="Kueue's fair sharing: admit and preempt by weighted share (default "
        "$BERTH_FAIR_SHARING, else off)",
    )
    serve.add_argument(
        "--demo",
        action="store_true",
        help="load a demo GPU pool and feed it a stream of synthetic jobs (see the dashboard at /)",
    )
    serve.add_argument(
        "--kubeconfig",
        help="Kubernetes mode: watch Jobs, Berth's CRDs and Nodes in this cluster "
        "(default $BERTH_KUBECONFIG; in a pod, the in-cluster config is used without it)",
    )
    serve.add_argument(
        "--kube-context", help="the kubeconfig's context (default $BERTH_KUBE_CONTEXT)"
    )
    serve.add_argument(
        "--lease-namespace",
        help="namespace of the leader Lease (default $BERTH_LEASE_NAMESPACE; else the pod's "
        "namespace in a pod, the kubeconfig context's namespace, or default)",
    )
    serve.add_argument(
        "--webhook-cert-dir",
        help="serve the mutating webhook over HTTPS with tls.crt/tls.key from this folder "
        "(default: $BERTH_WEBHOOK_CERT_DIR)",
    )
    serve.add_argument(
        "--webhook-port",
        type=int,
        help="HTTPS port of the webhook (default $BERTH_WEBHOOK_PORT, else 8443)",
    )

    db = commands.add_parser("db", help="ledger migrations")
    _database_flags(db)
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    db_commands.add_parser("upgrade", help="migrate to a revision (default head)").add_argument(
        "revision", nargs="?", default="head"
    )
    db_commands.add_parser("downgrade", help="migrate down to a revision").add_argument("revision")
    db_commands.add_parser("current", help="print the current revision")
    db_commands.add_parser("history", help="list revisions")

    # Every command below that reads or changes objects or workloads talks to one server
    # (kubectl's rule, berth.cli.client): --server, else $BERTH_SERVER, else the default.
    apply = _rest(commands, "apply", "create or replace objects, submit Jobs, from manifests")
    _files(apply, required=True)
    apply.add_argument(
        "--dry-run",
        action="store_true",
        help="show what would change, as a diff, and change nothing",
    )

    add_read_commands(commands, _rest)

    delete = _rest(commands, "delete", "delete objects or workloads by kind and name, or -f")
    delete.add_argument("kind", nargs="?", help="a kind, as berth get takes it (workload too)")
    delete.add_argument("name", nargs="?", help="workloads: NAME with -n, or NAMESPACE/NAME")
    delete.add_argument("-n", "--namespace")
    _files(delete, required=False)

    submit = _rest(commands, "submit", "submit Jobs or Kueue Workloads as pending workloads")
    _files(submit, required=True)
    finish = _rest(commands, "finish", "mark a workload finished, releasing its quota")
    finish.add_argument("workload", metavar="NAMESPACE/NAME")
    finish.add_argument("-n", "--namespace", help="the namespace, when only NAME is given")

    config_flag(node_cli.add_parser(commands))
    config_flag(audit_cli.add_parser(commands))
    config_flag(check_cli.add_parser(commands))
    _database_flags(mcp_cli.add_parser(commands))

    simulate = commands.add_parser("simulate", help="run a what-if scenario offline")
    simulate.add_argument("file", help="scenario YAML (- for standard input)")
    simulate.add_argument("--format", choices=["json", "table"], default="json")

    bench_arguments(commands.add_parser(
        "bench", help="Kueue's performance shapes through the durable loop, against the ideal"
    ))  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # httpx logs every request at INFO; the REST-backed commands print their own output.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    if args.command != "db":
        # Alembic narrates every migration step at INFO; only `berth db` wants that.
        logging.getLogger("alembic").setLevel(logging.WARNING)
    # Alembic names each plugin it sets up at INFO: noise for `berth db` too.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    # platformdirs warns on every start when XDG_RUNTIME_DIR is unset (servers, CI); harmless.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    try:
        return _dispatch(args)
    except BerthError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return EXIT_INVALID if exc.status in (400, 404, 409, 422) else 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`berth get ... | head`): stop quietly, as kubectl does;
        # point stdout at nothing so that the interpreter's final flush does not complain.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _dispatch(args: argparse.Namespace) -> int:
    if args.command == "serve":
        from berth import serve

        return serve.run(args)
    if args.command == "db":
        from berth.cli import db as db_cli

        return db_cli.run(args)
    if args.command in READ_COMMANDS:
        return dispatch_read(args)
    if args.command in ("apply", "delete"):
        from berth.cli import objects as objects_cli

        return objects_cli.apply(args) if args.command == "apply" else objects_cli.delete(args)
    if args.command in ("submit", "finish"):
        from berth.cli import workloads as workloads_cli

        if args.command == "submit":
            return workloads_cli.submit(args)
        return workloads_cli.finish(args)
    if args.command == "node":
        return node_cli.run(args)
    if args.command == "audit":
        return audit_cli.run(args)
    if args.command == "check":
        return check_cli.run(args)
    if args.command == "mcp":
        return mcp_cli.run(args)
    if args.command == "simulate":
        from berth.cli import simulate as simulate_cli

        return simulate_cli.run(args.file, args.format)
    if args.command == "bench":
        from berth.bench import command

        return command.run(args)
    raise AssertionError(f"unhandled command {args.command}")  # argparse prevents this


if __name__ == "__main__":
    sys.exit(main())
