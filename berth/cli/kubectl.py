"""``kubectl berth``: the ``kubectl-berth`` console script, which kubectl runs as a plugin
when it is on PATH. It offers ``berth``'s read commands (``get``, ``why``, ``top``,
``history``), parsed and run by the same code, so the output is the same; only the server
is chosen differently.

With ``--server URL`` it talks to that Berth, as ``berth`` does. Otherwise it reaches the
in-cluster Berth through the Kubernetes API server's service proxy
(``/api/v1/namespaces/NS/services/NAME:PORT/proxy/``) as the kubeconfig's user: kubectl
hands a plugin no credentials, so the plugin reads the kubeconfig itself (``--kubeconfig``,
else ``$KUBECONFIG``, else ``~/.kube/config``; ``--context``, else the current context).
The API server authenticates that user (RBAC on ``services/proxy`` decides who may ask) and
drops the Authorization header before proxying, so the Berth token (``BERTH_TOKEN``, as
``berth`` takes it) travels in ``X-Berth-Token``, which the proxy passes on."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from berth.cli.client import EXIT_FAILED, Endpoint, add_server_flag
from berth.cli.main import EXIT_INVALID, add_read_commands, config_flag, dispatch_read
from quota.core.errors import BerthError

# The Service deploy/base/berth.yaml creates (tests/e2e/test_kubectl_plugin.py holds them equal).
SERVICE_NAMESPACE = "berth-system"
SERVICE = "berth"
SERVICE_PORT = "80"


def _rest(commands: Any, name: str, help: str) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(name, help=help)
    add_server_flag(parser)
    config_flag(parser)
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default $KUBECONFIG, else ~/.kube/config)"
    )
    parser.add_argument("--context", help="kubeconfig context (default: the current one)")
    parser.add_argument(
        "--service-namespace",
        default=SERVICE_NAMESPACE,
        help=f"namespace of Berth's Service (default {SERVICE_NAMESPACE})",
    )
    parser.add_argument(
        "--service",
        default=f"{SERVICE}:{SERVICE_PORT}",
        metavar="NAME[:PORT]",
        help=f"Berth's Service and its port, by number or name (default {SERVICE}:{SERVICE_PORT})",
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kubectl berth",
        description="Berth's read commands, reaching the in-cluster Berth through the "
        "Kubernetes API server (or --server URL).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_read_commands(commands, _rest)
    return parser


def proxy_path(namespace: str, service: str) -> str:
    """The API server's service proxy path to ``service`` (``NAME[:PORT]``)."""
    return f"/api/v1/namespaces/{namespace}/services/{service}/proxy"


def in_cluster(args: argparse.Namespace) -> Endpoint:
    """Berth behind the API server's service proxy, as the kubeconfig's user."""
    # Here, not at the top: kubernetes-asyncio is slow to import, and --server needs none.
    from admission.kube.kubeconfig import user_credentials
    from api.auth import TOKEN_HEADER
    from berth import settings

    user = asyncio.run(user_credentials(args.kubeconfig, args.context))
    headers = {"authorization": f"Bearer {user.token}"} if user.token else {}
    if berth_token := settings.load(vars(args)).client.token:
        headers[TOKEN_HEADER] = berth_token
    cert = (user.cert_file, user.key_file) if user.cert_file and user.key_file else None
    verify: bool | str = (user.ca_file or True) if user.verify else False
    url = user.server + proxy_path(args.service_namespace, args.service)
    return Endpoint(url, headers, verify=verify, cert=cert)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    explicit = args.server
    if not explicit:
        try:
            args.endpoint = in_cluster(args)
        except BerthError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return EXIT_INVALID
        except Exception as exc:  # the kubeconfig loader's own errors: no common base
            print(f"error: kubeconfig: {exc}", file=sys.stderr)
            return EXIT_FAILED
    try:
        return dispatch_read(args)
    except BerthError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return EXIT_INVALID if exc.status in (400, 404, 409, 422) else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
