"""Berth's settings: command-line flags over environment variables over defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from admission.simulate.limits import SimulationLimits
from berth.embedded import default_home
from quota.core.errors import BerthError
from quota.core.node_health import DEFAULT_DEVICE_ERROR_EXIT_CODES, HealthThresholds
from quota.ledger.connect import DEFAULT_STATEMENT_SECONDS, ConnectionLimits

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_LEASE_SECONDS = 15.0


@dataclass(frozen=True, slots=True)
class Settings:
    database_url: str | None  # None: the embedded PostgreSQL under ``home``
    home: Path
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    health: HealthThresholds = field(default_factory=HealthThresholds)
    device_error_exit_codes: frozenset[int] = DEFAULT_DEVICE_ERROR_EXIT_CODES
    # Every ledger connection's timeouts (BERTH_DB_STATEMENT_TIMEOUT, seconds).
    connection: ConnectionLimits = field(default_factory=ConnectionLimits)
    # How long the leader's lease lasts unless its loop renews it (BERTH_LEADER_LEASE_SECONDS).
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    # GET /metrics without a token although tokens are set (BERTH_METRICS_OPEN=true).
    metrics_open: bool = False
    simulation: SimulationLimits = field(default_factory=SimulationLimits)


def load(
    *,
    database_url: str | None = None,
    home: str | None = None,
    host: str | None = None,
    port: int | None = None,
) -> Settings:
    """Settings from explicit values, then ``BERTH_*`` environment variables, then defaults."""
    url = database_url or os.environ.get("BERTH_DATABASE_URL") or None
    return Settings(
        database_url=normalise_url(url) if url else None,
        home=Path(home).expanduser() if home else default_home(),
        host=host or os.environ.get("BERTH_HOST") or DEFAULT_HOST,
        port=port or int(os.environ.get("BERTH_PORT") or DEFAULT_PORT),
        health=health_thresholds(os.environ),
        device_error_exit_codes=device_error_exit_codes(os.environ),
        connection=ConnectionLimits(
            statement_seconds=_seconds(
                os.environ, "BERTH_DB_STATEMENT_TIMEOUT", DEFAULT_STATEMENT_SECONDS
            )
        ),
        lease_seconds=_seconds(os.environ, "BERTH_LEADER_LEASE_SECONDS", DEFAULT_LEASE_SECONDS),
        metrics_open=_flag(os.environ, "BERTH_METRICS_OPEN", False),
        simulation=simulation_limits(os.environ),
    )


def simulation_limits(env: Mapping[str, str]) -> SimulationLimits:
    """``BERTH_SIMULATE_TIME_LIMIT`` (seconds) and ``BERTH_SIMULATE_CONCURRENCY`` for
    ``POST /api/v1/simulate``; its size caps are fixed (see README, Limits)."""
    default = SimulationLimits()
    name = "BERTH_SIMULATE_TIME_LIMIT"
    text = env.get(name, "").strip()
    try:
        time_limit = float(text) if text else default.time_limit
    except ValueError:
        time_limit = -1.0
    if not 0 < time_limit < float("inf"):
        raise BerthError(f"{name}: {text!r} is not a number of seconds above 0", field=name)
    name = "BERTH_SIMULATE_CONCURRENCY"
    text = env.get(name, "").strip()
    if text and (not text.isdigit() or int(text) < 1):
        raise BerthError(f"{name}: {text!r} is not a whole number of simulations (1 or more)",
                         field=name)  # fmt: skip
    concurrency = int(text) if text else default.concurrency
    return replace(default, time_limit=time_limit, concurrency=concurrency)


def health_thresholds(env: Mapping[str, str]) -> HealthThresholds:
    """When a node stops taking work (``BERTH_HEALTH_*``; see README, node health)."""
    default = HealthThresholds()
    resources = env.get("BERTH_HEALTH_DEVICE_RESOURCES")
    return HealthThresholds(
        cordon_devices=_count(env, "BERTH_HEALTH_CORDON_DEVICES", default.cordon_devices),
        cordon_percent=_count(env, "BERTH_HEALTH_CORDON_PERCENT", default.cordon_percent, 100),
        cordon_not_ready=_flag(env, "BERTH_HEALTH_CORDON_NOT_READY", default.cordon_not_ready),
        device_resources=(
            tuple(r.strip() for r in resources.split(",") if r.strip())
            if resources is not None
            else default.device_resources
        ),
    )


def device_error_exit_codes(env: Mapping[str, str]) -> frozenset[int]:
    """``BERTH_DEVICE_ERROR_EXIT_CODES``: comma-separated exit codes meaning "bad device"."""
    name = "BERTH_DEVICE_ERROR_EXIT_CODES"
    text = env.get(name)
    if text is None:
        return DEFAULT_DEVICE_ERROR_EXIT_CODES
    codes = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if not part.isdigit() or not 1 <= int(part) <= 255:
            raise BerthError(f"{name}: {part!r} is not an exit code (1-255)", field=name)
        codes.add(int(part))
    return frozenset(codes)


def _count(env: Mapping[str, str], name: str, default: int, maximum: int | None = None) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or (maximum is not None and int(text) > maximum):
        limit = f"0-{maximum}" if maximum is not None else "0 or more; 0 disables it"
        raise BerthError(f"{name}: {text!r} is not a whole number ({limit})", field=name)
    return int(text)


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.1 <= value <= 86_400:
        raise BerthError(f"{name}: {text!r} is not a number of seconds (0.1-86400)", field=name)
    return value


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    text = env.get(name, "").strip().lower()
    if not text:
        return default
    if text not in ("true", "false", "1", "0"):
        raise BerthError(f"{name}: {text!r} is not true or false", field=name)
    return text in ("true", "1")


def normalise_url(url: str) -> str:
    """Accept plain ``postgresql://`` URLs and use the psycopg 3 driver for them."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url
