"""Where ``kubectl berth`` sends its requests when no ``--server`` is given: the kubeconfig
context's API server, the service proxy path of Berth's Service, and that user's
credentials (a token, a client certificate, the cluster's CA), read as kubectl reads them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
import yaml

from berth.cli import kubectl as plugin
from berth.cli.client import Endpoint

PROXY = "/api/v1/namespaces/berth-system/services/berth:80/proxy"


@pytest.fixture(autouse=True)
def no_berth_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BERTH_TOKEN", raising=False)


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """Two contexts: ``token`` (a CA file, a bearer token) is current; ``certs`` (TLS not
    verified, a client certificate and key)."""
    for name in ("ca.crt", "me.crt", "me.key"):
        (tmp_path / name).write_text("PEM, not read until a request\n")
    clusters = {
        "token": {"server": "https://api.one:6443/", "certificate-authority": str(tmp_path / "ca.crt")},
        "certs": {"server": "https://api.two:6443", "insecure-skip-tls-verify": True},
    }
    users = {
        "token": {"token": "s3cret"},
        "certs": {"client-certificate": str(tmp_path / "me.crt"), "client-key": str(tmp_path / "me.key")},
    }
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "token",
        "clusters": [{"name": n, "cluster": c} for n, c in clusters.items()],
        "users": [{"name": n, "user": u} for n, u in users.items()],
        "contexts": [{"name": n, "context": {"cluster": n, "user": n}} for n in users],
    }))  # fmt: skip
    return path


def args(**given: Any) -> argparse.Namespace:
    defaults = {"kubeconfig": None, "context": None, "service_namespace": "berth-system", "service": "berth:80"}
    return argparse.Namespace(**{**defaults, **given})


@pytest.mark.parametrize(
    ("given", "url"),
    [
        pytest.param({}, f"https://api.one:6443{PROXY}", id="the current context's server, Berth's Service by default"),
        pytest.param({"service_namespace": "ops", "service": "queue:http"}, "https://api.one:6443/api/v1/namespaces/ops/services/queue:http/proxy", id="another Service, its port by name"),
    ],
)
def test_token_user_goes_through_the_service_proxy(config: Path, given: dict[str, Any], url: str) -> None:
    endpoint = plugin.in_cluster(args(kubeconfig=str(config), **given))
    assert endpoint == Endpoint(url, {"authorization": "Bearer s3cret"}, verify=str(config.parent / "ca.crt"))


def test_context_flag_picks_another_user_and_cluster(config: Path) -> None:
    endpoint = plugin.in_cluster(args(kubeconfig=str(config), context="certs"))
    cert = (str(config.parent / "me.crt"), str(config.parent / "me.key"))
    assert endpoint == Endpoint(f"https://api.two:6443{PROXY}", {}, verify=False, cert=cert)


def test_kubeconfig_variable_is_read_when_no_flag(config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{config}")  # merged, as kubectl does
    assert plugin.in_cluster(args()).url == f"https://api.one:6443{PROXY}"


def test_the_berth_token_travels_in_its_own_header(config: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The API server strips Authorization before proxying; X-Berth-Token is passed on."""
    monkeypatch.setenv("BERTH_TOKEN", "berth-secret-token-0")
    endpoint = plugin.in_cluster(args(kubeconfig=str(config)))
    assert endpoint.headers == {"authorization": "Bearer s3cret", "X-Berth-Token": "berth-secret-token-0"}
