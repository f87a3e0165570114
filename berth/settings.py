"""Berth's settings: one typed tree, and the only reader of ``BERTH_*`` variables.

Every leaf of the tree (``Settings``) is one setting, listed once in ``SETTINGS`` with its
variable, its key in the settings file, its flag (if it has one), its parser and what it
does; the README's Settings table is that list (tests/unit/berth/test_settings.py holds
them equal). A leaf's value is, first found: its command-line flag, its ``BERTH_*``
variable, its key in the settings file (``--config FILE`` or ``BERTH_CONFIG``: YAML, the
same tree in camelCase, as Kueue's configuration file is written), the tree's default.
A value that does not parse, or a key the file should not have, is refused at start
naming the variable (``SettingsError``, ``field`` = the variable, the CLI exits 2): a typo
never runs quietly on the default.

The rest of Berth takes its part of the tree and never reads the environment:
``berth.serve`` builds the runner's ``RunnerConfig``, the Kubernetes ``KubeSettings``, the
leases and the loop (fair sharing included) from it, the CLI's REST client takes
``client``. ``KUBERNETES_SERVICE_HOST`` is not Berth's: the Kubernetes code reads it to
know it runs in a pod, as every in-cluster client does.

Frozen dataclasses rather than pydantic: most leaves are already the core's own values
(``HealthThresholds``, ``ConnectionLimits``, ``SimulationLimits``, the API's ``Grant``),
whose defaults stay where they are; each value arrives as text or YAML from three places;
and a refusal must name the variable an operator sets, not a model path. A table of small
parsers does that in one screen; pydantic would add a model mirroring each core value and
a translation of its errors back to variable names.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from admission.loop.crash_hook import CrashHook
from admission.simulate.limits import SimulationLimits
from berth.embedded import default_home
from berth.settings_parsers import (
    Parser,
    _exit_codes,
    _flag,
    _items,
    _names,
    _path,
    _path_text,
    _seconds,
    _server,
    _text,
    _url,
    _whole,
)
from quota.core.errors import BerthError
from quota.core.node_health import DEFAULT_DEVICE_ERROR_EXIT_CODES, HealthThresholds
from quota.core.pods_ready import DISABLED, PodsReadyPolicy, RequeuingTimestamp, parse_duration
from quota.ledger.connect import ConnectionLimits
from quota.manifests.configuration import (
    FairSharingSettings,
    as_settings,
    parse_go_duration,
    parse_strategies,
    parse_weights,
)

if TYPE_CHECKING:
    from api.auth import Grant

CONFIG_ENV = "BERTH_CONFIG"


class SettingsError(BerthError):
    """A setting refused at start; ``field`` is the ``BERTH_*`` variable that sets it."""

    status = 422
    code = "InvalidSetting"


# The tree. Each field's meaning, variable and file key are in SETTINGS below.


@dataclass(frozen=True, slots=True)
class DatabaseSettings:
    """Where the ledger lives, and every ledger connection's timeouts."""

    url: str | None = None  # None: the embedded PostgreSQL under ``home``
    home: Path = field(default_factory=default_home)
    connection: ConnectionLimits = field(default_factory=ConnectionLimits)


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """The REST API, the dashboard and ``/metrics``."""

    host: str = "127.0.0.1"
    port: int = 8000
    tokens: tuple[Grant, ...] = ()  # none: every request allowed (on a loopback address)
    metrics_open: bool = False


@dataclass(frozen=True, slots=True)
class WebhookSettings:
    """The mutating webhook's HTTPS listener."""

    cert_dir: Path | None = None  # None: no webhook listener
    port: int = 8443
    aggregated_api: bool = False  # Kueue's visibility API there too, for the aggregation layer


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    """Kubernetes mode: which cluster, and the Lease the replicas elect a leader with."""

    kubeconfig: str | None = None  # None: standalone, or the in-cluster config in a pod
    context: str | None = None
    identity: str = field(default_factory=socket.gethostname)
    lease_namespace: str | None = None  # None: admission.kube.runtime.lease_namespace finds it
    lease_name: str = "berth-leader"
    taint_nodes: bool = True  # admission.kube.taints: berth.dev/unhealthy on nodes out of the pool


@dataclass(frozen=True, slots=True)
class LoopSettings:
    """The admission loop's pace, its leader lease and its retries."""

    interval: float = 1.0
    lease_seconds: float = 15.0  # the ledger's lease, and the Lease in Kubernetes mode
    leader_poll: float = 1.0
    reconcile_seconds: float = 60.0
    backoff_first: float = 0.5
    backoff_max: float = 15.0
    crash_at: str = ""  # the crash-safety tests' kill point; "" in production

    def crash_hook(self) -> CrashHook:
        return CrashHook.parse(self.crash_at)


@dataclass(frozen=True, slots=True)
class HealthSettings:
    """When a node stops taking work, and which exit codes mean a bad device."""

    thresholds: HealthThresholds = field(default_factory=HealthThresholds)
    device_error_exit_codes: frozenset[int] = DEFAULT_DEVICE_ERROR_EXIT_CODES


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """Where every CLI command that reads or changes objects or workloads finds Berth."""

    server: str = "http://127.0.0.1:8000"
    token: str | None = None


@dataclass(frozen=True, slots=True)
class Settings:
    """The whole tree; ``Settings()`` is every default."""

    database: DatabaseSettings = field(default_factory=DatabaseSettings)
    http: HttpSettings = field(default_factory=HttpSettings)
    webhook: WebhookSettings = field(default_factory=WebhookSettings)
    kube: ClusterSettings = field(default_factory=ClusterSettings)
    loop: LoopSettings = field(default_factory=LoopSettings)
    health: HealthSettings = field(default_factory=HealthSettings)
    simulation: SimulationLimits = field(default_factory=SimulationLimits)
    fair_sharing: FairSharingSettings = field(default_factory=FairSharingSettings)
    pods_ready: PodsReadyPolicy = DISABLED  # Kueue's waitForPodsReady
    client: ClientSettings = field(default_factory=ClientSettings)


def _tokens(raw: object) -> tuple[Grant, ...]:
    from api.auth import parse_tokens  # FastAPI is slow to import; most commands never need it

    # The message names the entry, never the token (parse_tokens sees to that).
    return parse_tokens(",".join(_items(raw)))


def _positive_duration(raw: object) -> object:
    return parse_go_duration(raw, positive=True)


def _timestamp(raw: object) -> RequeuingTimestamp:
    if str(raw) not in tuple(RequeuingTimestamp):
        raise ValueError(f"{raw!r} is not Eviction or Creation")
    return RequeuingTimestamp(str(raw))


def _crash_at(raw: object) -> str:
    text = _text(raw)
    CrashHook.parse(text)
    return text


@dataclass(frozen=True, slots=True)
class Setting:
    """One leaf of the tree: where its value comes from, how it is read, what it does."""

    variable: str  # the BERTH_* variable; also the refusal's ``field``
    path: str  # the leaf in the tree, e.g. "http.port"
    key: str | None  # in the settings file, e.g. "http.port"; None: a variable only
    parse: Parser
    doc: str  # the README's "what it does"
    flag: str | None = None  # the command-line flag, e.g. "--port"
    default: str | None = None  # the README's default, when it is worked out at start
    blank: bool = False  # an empty variable means "none" instead of "unset"

    @property
    def dest(self) -> str | None:
        """The flag's name in an argparse namespace."""
        return self.flag[2:].replace("-", "_") if self.flag else None


S = Setting
_W, _R = "waitForPodsReady.", "waitForPodsReady.requeuingStrategy."
SETTINGS: tuple[Setting, ...] = (
    S("BERTH_DATABASE_URL", "database.url", "database.url", _url,
      "external PostgreSQL (`postgresql://…`); unset: the embedded server", "--database-url"),
    S("BERTH_HOME", "database.home", "database.home", _path,
      "where the embedded PostgreSQL keeps its data (`<home>/pgdata`)", "--home",
      "`~/.local/share/berth`; `/var/lib/berth` as root"),
    S("BERTH_DB_STATEMENT_TIMEOUT", "database.connection.statement_seconds",
      "database.statementTimeoutSeconds", _seconds(),
      "seconds a ledger statement may run before it fails (a 503)"),
    S("BERTH_DB_CONNECT_TIMEOUT", "database.connection.connect_seconds",
      "database.connectTimeoutSeconds", _whole(1, 3600, unit=" of seconds"),
      "seconds to wait for a ledger connection"),
    S("BERTH_HOST", "http.host", "http.host", _text,
      "address the API listens on; not loopback needs `BERTH_TOKENS`", "--host"),
    S("BERTH_PORT", "http.port", "http.port", _whole(1, 65535), "port the API listens on",
      "--port"),
    S("BERTH_TOKENS", "http.tokens", "http.tokens", _tokens,
      "API bearer tokens, `tok1:admin,tok2:read,tok3:read:ns-a\\|ns-b`; unset: no auth "
      "(loopback only)"),
    S("BERTH_METRICS_OPEN", "http.metrics_open", "http.metricsOpen", _flag,
      "`GET /metrics` without a token although tokens are set"),
    S("BERTH_WEBHOOK_CERT_DIR", "webhook.cert_dir", "webhook.certDir", _path,
      "serve the mutating webhook over HTTPS with `tls.crt`/`tls.key` from this folder",
      "--webhook-cert-dir"),
    S("BERTH_WEBHOOK_PORT", "webhook.port", "webhook.port", _whole(1, 65535),
      "HTTPS port of the webhook", "--webhook-port"),
    S("BERTH_AGGREGATED_API", "webhook.aggregated_api", "webhook.aggregatedApi", _flag,
      "serve Kueue's visibility API on the webhook's HTTPS listener to the API server's "
      "aggregation layer (front-proxy certificate, SubjectAccessReview); needs the webhook "
      "certificates and Kubernetes mode"),
    S("BERTH_KUBECONFIG", "kube.kubeconfig", "kube.kubeconfig", _path_text,
      "Kubernetes mode against this cluster (in a pod: the in-cluster config without it)",
      "--kubeconfig"),
    S("BERTH_KUBE_CONTEXT", "kube.context", "kube.context", _text,
      "the kubeconfig context to use; unset: its current context", "--kube-context"),
    S("BERTH_POD_NAME", "kube.identity", "kube.identity", _text,
      "this replica's name as the Lease holder (deploy/base/berth.yaml sets the pod's name)",
      default="the host name"),
    S("BERTH_LEASE_NAMESPACE", "kube.lease_namespace", "kube.leaseNamespace", _text,
      "namespace of the leader Lease", "--lease-namespace",
      "in a pod its own namespace; else the kubeconfig context's namespace, else `default`"),
    S("BERTH_LEASE_NAME", "kube.lease_name", "kube.leaseName", _text,
      "name of the leader Lease"),
    S("BERTH_TAINT_NODES", "kube.taint_nodes", "kube.taintNodes", _flag,
      "taint a Node Berth takes out of the pool (Cordoned, Repairing, Validating) "
      "`berth.dev/unhealthy=<state>:NoSchedule`, untaint it when it returns"),
    S("BERTH_LOOP_INTERVAL", "loop.interval", "loop.intervalSeconds", _seconds(0.01),
      "seconds between admission cycles when nothing changes", "--loop-interval"),
    S("BERTH_LEADER_LEASE_SECONDS", "loop.lease_seconds", "loop.leaseSeconds", _seconds(),
      "seconds a leader holds its lease (ledger row or Lease) without renewing it"),
    S("BERTH_LEADER_POLL_SECONDS", "loop.leader_poll", "loop.leaderPollSeconds", _seconds(),
      "seconds between a follower's attempts to become leader"),
    S("BERTH_RECONCILE_SECONDS", "loop.reconcile_seconds", "loop.reconcileSeconds",
      _seconds(), "seconds between the leader's reconcile passes over the ledger"),
    S("BERTH_BACKOFF_FIRST_SECONDS", "loop.backoff_first", "loop.backoffFirstSeconds",
      _seconds(0.01), "first wait after the ledger fails; doubles on each failure"),
    S("BERTH_BACKOFF_MAX_SECONDS", "loop.backoff_max", "loop.backoffMaxSeconds", _seconds(),
      "longest wait between retries"),
    S("BERTH_CRASH_AT", "loop.crash_at", None, _crash_at,
      "test hook (tests/loop/test_crash_safety.py): SIGKILL the N-th time the loop passes "
      "`before-commit`, `after-commit` or `mid-actuation` (`<point>[:N]`)"),
    S("BERTH_HEALTH_CORDON_DEVICES", "health.thresholds.cordon_devices",
      "health.cordonDevices", _whole(0, note="; 0 disables it"),
      "cordon a node with this many unhealthy devices"),
    S("BERTH_HEALTH_CORDON_PERCENT", "health.thresholds.cordon_percent",
      "health.cordonPercent", _whole(0, 100),
      "cordon a node with this percent of its devices unhealthy (0 disables it)"),
    S("BERTH_HEALTH_CORDON_NOT_READY", "health.thresholds.cordon_not_ready",
      "health.cordonNotReady", _flag, "cordon a node whose Ready condition is not True"),
    S("BERTH_HEALTH_DEVICE_RESOURCES", "health.thresholds.device_resources",
      "health.deviceResources", _names, "resources that count as devices (patterns)",
      blank=True),
    S("BERTH_DEVICE_ERROR_EXIT_CODES", "health.device_error_exit_codes",
      "health.deviceErrorExitCodes", _exit_codes,
      "container exit codes meaning \"bad device\": requeue, mark the node (empty: none)",
      blank=True),
    S("BERTH_SIMULATE_TIME_LIMIT", "simulation.time_limit", "simulation.timeLimitSeconds",
      _seconds(0.01), "seconds a `POST /api/v1/simulate` may take, parsing included"),
    S("BERTH_SIMULATE_CONCURRENCY", "simulation.concurrency", "simulation.concurrency",
      _whole(1, unit=" of simulations"), "REST simulations at once; one more is a 503"),
    S("BERTH_FAIR_SHARING", "fair_sharing.enable", "fairSharing.enable", _flag,
      "Kueue's fair sharing: borrowers go first, and preempt, by their weighted share of "
      "what the cohort lends (see below)",
      "--fair-sharing"),
    S("BERTH_FAIR_SHARING_STRATEGIES", "fair_sharing.strategies",
      "fairSharing.preemptionStrategies", parse_strategies,
      "fair-sharing preemption strategies, in order: `LessThanOrEqualToFinalShare`, "
      "`LessThanInitialShare` or both (Kueue's three accepted lists)",
      default="both, in that order"),
    S("BERTH_FAIR_SHARING_HALF_LIFE", "fair_sharing.memory_half_life",
      "berth.fairSharingHalfLife", _positive_duration,
      "fair sharing with memory: shares count usage decayed with this half-life (`72h`); "
      "needs fair sharing on"),
    S("BERTH_ADMISSION_FAIR_SHARING_HALF_LIFE", "fair_sharing.admission_half_life",
      "admissionFairSharing.usageHalfLifeTime", parse_go_duration,
      "admission fair sharing on: LocalQueue usage decays with this half-life (`168h`; "
      "`0s`: only what is held now)"),
    S("BERTH_ADMISSION_FAIR_SHARING_SAMPLING", "fair_sharing.admission_sampling",
      "admissionFairSharing.usageSamplingInterval", _positive_duration,
      "how often usage is read again, and the entry penalty's interval", default="`5m`"),
    S("BERTH_ADMISSION_FAIR_SHARING_WEIGHTS", "fair_sharing.admission_weights",
      "admissionFairSharing.resourceWeights", parse_weights,
      "resource weights of LocalQueue usage, `cpu=2,memory=1` (others weigh 1)"),
    S("BERTH_WAIT_FOR_PODS_READY", "pods_ready.enable", _W + "enable", _flag, "all-or-nothing "
      "start: evict and requeue with backoff a workload whose pods are not all Ready in time"),
    S("BERTH_PODS_READY_TIMEOUT", "pods_ready.timeout", _W + "timeout", parse_duration,
      "from admission to all pods Ready (`5m`, `90s`, `1h30m`)", default="`5m`"),
    S("BERTH_PODS_READY_BLOCK_ADMISSION", "pods_ready.block_admission", _W + "blockAdmission",
      _flag, "admit nothing while an admitted workload's pods are not all Ready"),
    S("BERTH_PODS_READY_RECOVERY_TIMEOUT", "pods_ready.recovery_timeout", _W + "recoveryTimeout",
      parse_duration, "how long a Ready workload may lack Ready pods; `0s`: not checked",
      default="the timeout"),
    S("BERTH_PODS_READY_REQUEUING_TIMESTAMP", "pods_ready.timestamp", _R + "timestamp",
      _timestamp, "`Eviction` or `Creation`: the time a PodsReadyTimeout requeue queues by"),
    S("BERTH_PODS_READY_BACKOFF_LIMIT_COUNT", "pods_ready.backoff_limit_count",
      _R + "backoffLimitCount", _whole(0), "requeues before it is deactivated; unset: no limit"),
    S("BERTH_PODS_READY_BACKOFF_BASE_SECONDS", "pods_ready.backoff_base_seconds",
      _R + "backoffBaseSeconds", _whole(1), "first requeue backoff; the n-th is base × 2^(n-1)"),
    S("BERTH_PODS_READY_BACKOFF_MAX_SECONDS", "pods_ready.backoff_max_seconds",
      _R + "backoffMaxSeconds", _whole(1), "longest requeue backoff"),
    S("BERTH_SERVER", "client.server", "client.server", _server,
      "the Berth API every object and workload command talks to", "--server"),
    S("BERTH_TOKEN", "client.token", "client.token", _text,
      "the bearer token those commands send"),
)  # fmt: skip
BY_KEY = {s.key: s for s in SETTINGS if s.key is not None}



def load(
    flags: Mapping[str, object] | None = None, env: Mapping[str, str] | None = None
) -> Settings:
    """The tree: ``flags`` (an argparse namespace's ``vars``; None: not given) over ``env``
    (default ``os.environ``) over the settings file over the defaults."""
    flags = flags or {}
    env = os.environ if env is None else env
    document, source = _file(flags, env)
    tree: Any = Settings()
    for setting in SETTINGS:
        found = _raw(setting, flags, env, document, source)
        if found is None:
            continue
        raw, where = found
        try:
            value = setting.parse(raw)
        except ValueError as exc:
            raise SettingsError(f"{where}: {exc}", field=setting.variable) from None
        tree = _replaced(tree, setting.path.split("."), value)
    return _checked(tree)


def _raw(
    setting: Setting,
    flags: Mapping[str, object],
    env: Mapping[str, str],
    document: Mapping[str, object],
    source: str,
) -> tuple[object, str] | None:
    """The value that wins and where it came from (for the message), or None."""
    flag = flags.get(setting.dest) if setting.dest else None
    if flag is not None:
        return flag, str(setting.flag)
    text = env.get(setting.variable)
    if text is not None and (text.strip() or setting.blank):
        return text, setting.variable
    if setting.key is not None and document.get(setting.key) is not None:  # null: unset
        return document[setting.key], f"{source}: {setting.key}"
    return None


def _file(flags: Mapping[str, object], env: Mapping[str, str]) -> tuple[dict[str, object], str]:
    """The settings file's leaves by dotted key (nothing without a file), and its name."""
    named = flags.get("config") or env.get(CONFIG_ENV, "").strip()
    if not named:
        return {}, ""
    where = "--config" if flags.get("config") else CONFIG_ENV
    path = Path(str(named)).expanduser()
    try:
        document = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SettingsError(f"{where}: {path}: {exc}", field=CONFIG_ENV) from None
    if document is None:
        return {}, str(path)
    if not isinstance(document, dict):
        raise SettingsError(f"{path}: expected a mapping of sections", field=CONFIG_ENV)
    try:
        document = as_settings(document)
    except ValueError as exc:
        raise SettingsError(f"{path}: {exc}", field=CONFIG_ENV) from None
    leaves = dict(_leaves(document))
    for key in leaves:
        if key not in BY_KEY:
            known = ", ".join(sorted({k.split(".")[0] for k in BY_KEY}))
            raise SettingsError(
                f"{path}: {key} is not a setting (sections: {known}; README, Settings)",
                field=CONFIG_ENV,
            )
    return leaves, str(path)


def _leaves(document: Mapping[object, object], prefix: str = "") -> Iterator[tuple[str, object]]:
    for name, value in document.items():
        key = f"{prefix}{name}"
        if isinstance(value, dict) and key not in BY_KEY:
            yield from _leaves(value, key + ".")
        else:
            yield key, value


def _replaced(node: Any, path: list[str], value: object) -> Any:
    head, *rest = path
    return replace(node, **{head: _replaced(getattr(node, head), rest, value) if rest else value})


def _checked(tree: Settings) -> Settings:
    """What no single value shows."""
    loop = tree.loop
    if loop.backoff_first > loop.backoff_max:
        raise SettingsError(
            f"BERTH_BACKOFF_FIRST_SECONDS: {loop.backoff_first:g} is more than "
            f"BERTH_BACKOFF_MAX_SECONDS ({loop.backoff_max:g})",
            field="BERTH_BACKOFF_FIRST_SECONDS",
        )
    if tree.webhook.aggregated_api and tree.webhook.cert_dir is None:
        raise SettingsError(
            "BERTH_AGGREGATED_API: the aggregated API is served on the webhook's HTTPS "
            "listener; give its certificates with BERTH_WEBHOOK_CERT_DIR (--webhook-cert-dir)",
            field="BERTH_AGGREGATED_API",
        )
    wrong = tree.fair_sharing.problem()
    if wrong is not None:
        variable = next(s.variable for s in SETTINGS if s.key == wrong[0])
        raise SettingsError(f"{variable} ({wrong[0]}): {wrong[1]}", field=variable)
    if not tree.pods_ready.timeout:
        raise SettingsError("BERTH_PODS_READY_TIMEOUT: must be longer than 0s",
                            field="BERTH_PODS_READY_TIMEOUT")
    return tree
