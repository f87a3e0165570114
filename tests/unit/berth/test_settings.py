"""The settings tree: defaults, variables, the settings file, flags over all of them, every
refusal naming its variable, the README's table, and no other reader of ``BERTH_*``."""

from __future__ import annotations

import ast
import functools
import math
import re
from dataclasses import MISSING, fields
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from builders.paths import DEPLOY, REPO

from admission.kube.runtime import KubeSettings
from admission.loop.runner import RunnerConfig
from api.auth import Grant, Role
from berth import settings
from berth.cli.main import main
from berth.serve import check_aggregated_api, kube_settings, runner_config
from berth.settings import SETTINGS, Settings, SettingsError
from quota.core.fairness import FINAL, INITIAL, AdmissionFairSharing, Fairness
from quota.core.node_health import DEFAULT_DEVICE_RESOURCES, HealthThresholds
from quota.core.pods_ready import RequeuingTimestamp

README = REPO / "README.md"
SOURCE = ("berth", "api", "admission", "quota", "migrations")
ADMIN = "root-secret-token-1"


def at(tree: object, path: str) -> Any:
    return functools.reduce(getattr, path.split("."), tree)


def written(tmp_path: Path, document: object) -> dict[str, str]:
    """An environment naming a settings file that holds ``document``."""
    path = tmp_path / "berth.yaml"
    path.write_text(yaml.safe_dump(document))
    return {"BERTH_CONFIG": str(path)}


def nested(key: str, value: object) -> dict[str, object]:
    """``{"http": {"port": value}}`` for ``"http.port"`` (and deeper keys likewise)."""
    section, _, rest = key.partition(".")
    return {section: nested(rest, value) if "." in rest else {rest: value}}


def test_without_anything_set_the_tree_is_its_defaults() -> None:
    assert settings.load(env={}) == Settings()


@pytest.mark.parametrize(
    ("path", "default"),
    [
        pytest.param("database.url", None, id="the embedded PostgreSQL unless a URL is given"),
        pytest.param("database.connection.statement_seconds", 30.0, id="statements may run 30 s"),
        pytest.param("http.host", "127.0.0.1", id="the API listens on loopback"),
        pytest.param("http.port", 8000, id="on port 8000"),
        pytest.param("http.tokens", (), id="without tokens"),
        pytest.param("webhook.cert_dir", None, id="no webhook listener"),
        pytest.param("webhook.port", 8443, id="the webhook's port when it has one"),
        pytest.param("kube.lease_name", "berth-leader", id="the leader Lease's name"),
        pytest.param("loop.interval", 1.0, id="a cycle a second when nothing changes"),
        pytest.param("loop.lease_seconds", 15.0, id="a 15 s leader lease"),
        pytest.param("loop.crash_at", "", id="no crash point"),
        pytest.param("health.thresholds", HealthThresholds(2, 25, True, DEFAULT_DEVICE_RESOURCES), id="node health thresholds"),
        pytest.param("health.device_error_exit_codes", frozenset({74}), id="exit code 74 means a bad device"),
        pytest.param("fair_sharing.enable", False, id="fair sharing off, as in Kueue"),
        pytest.param("client.server", "http://127.0.0.1:8000", id="the REST commands talk to the local server"),
    ],
)
def test_defaults(path: str, default: object) -> None:
    assert at(Settings(), path) == default


# One row per variable at least (test_every_variable_has_an_override_row holds it so).
OVERRIDES = [
    pytest.param("BERTH_DATABASE_URL", "postgresql://u@db:5432/berth", "database.url", "postgresql+psycopg://u@db:5432/berth", id="a plain postgresql URL gets the psycopg driver"),
    pytest.param("BERTH_HOME", "/srv/berth-data", "database.home", Path("/srv/berth-data"), id="the embedded server's home"),
    pytest.param("BERTH_DB_STATEMENT_TIMEOUT", "12.5", "database.connection.statement_seconds", 12.5, id="statement timeout"),
    pytest.param("BERTH_DB_CONNECT_TIMEOUT", "9", "database.connection.connect_seconds", 9, id="connect timeout"),
    pytest.param("BERTH_HOST", "0.0.0.0", "http.host", "0.0.0.0", id="listen on every interface"),
    pytest.param("BERTH_PORT", "9000", "http.port", 9000, id="another port"),
    pytest.param("BERTH_TOKENS", f"{ADMIN}:admin", "http.tokens", (Grant(ADMIN, Role.ADMIN),), id="an admin token"),
    pytest.param("BERTH_METRICS_OPEN", "true", "http.metrics_open", True, id="metrics without a token"),
    pytest.param("BERTH_WEBHOOK_CERT_DIR", "/certs", "webhook.cert_dir", Path("/certs"), id="the webhook's certificates"),
    pytest.param("BERTH_WEBHOOK_PORT", "9443", "webhook.port", 9443, id="the webhook's port"),
    pytest.param("BERTH_AGGREGATED_API", "true", "webhook.aggregated_api", True, id="Kueue's visibility API for the aggregation layer"),
    pytest.param("BERTH_KUBECONFIG", "/etc/kube/config", "kube.kubeconfig", "/etc/kube/config", id="Kubernetes mode by kubeconfig"),
    pytest.param("BERTH_KUBE_CONTEXT", "prod", "kube.context", "prod", id="a kubeconfig context"),
    pytest.param("BERTH_POD_NAME", "berth-0", "kube.identity", "berth-0", id="the pod's name holds the Lease"),
    pytest.param("BERTH_LEASE_NAMESPACE", "ops", "kube.lease_namespace", "ops", id="the Lease's namespace"),
    pytest.param("BERTH_LEASE_NAME", "berth-leader-2", "kube.lease_name", "berth-leader-2", id="the Lease's name"),
    pytest.param("BERTH_TAINT_NODES", "false", "kube.taint_nodes", False, id="Nodes out of the pool left untainted"),
    pytest.param("BERTH_LOOP_INTERVAL", "0.2", "loop.interval", 0.2, id="a faster loop"),
    pytest.param("BERTH_LEADER_LEASE_SECONDS", "9", "loop.lease_seconds", 9.0, id="a shorter lease"),
    pytest.param("BERTH_LEADER_POLL_SECONDS", "2", "loop.leader_poll", 2.0, id="followers poll less often"),
    pytest.param("BERTH_RECONCILE_SECONDS", "30", "loop.reconcile_seconds", 30.0, id="reconcile twice a minute"),
    pytest.param("BERTH_BACKOFF_FIRST_SECONDS", "0.1", "loop.backoff_first", 0.1, id="retry sooner"),
    pytest.param("BERTH_BACKOFF_MAX_SECONDS", "20", "loop.backoff_max", 20.0, id="back off longer"),
    pytest.param("BERTH_CRASH_AT", "after-commit:3", "loop.crash_at", "after-commit:3", id="the crash tests' kill point"),
    pytest.param("BERTH_HEALTH_CORDON_DEVICES", "1", "health.thresholds.cordon_devices", 1, id="cordon at one bad device"),
    pytest.param("BERTH_HEALTH_CORDON_PERCENT", "0", "health.thresholds.cordon_percent", 0, id="no percentage rule"),
    pytest.param("BERTH_HEALTH_CORDON_NOT_READY", "false", "health.thresholds.cordon_not_ready", False, id="NotReady does not cordon"),
    pytest.param("BERTH_HEALTH_DEVICE_RESOURCES", "amd.com/gpu, nvidia.com/*", "health.thresholds.device_resources", ("amd.com/gpu", "nvidia.com/*"), id="other device resources"),
    pytest.param("BERTH_HEALTH_DEVICE_RESOURCES", "", "health.thresholds.device_resources", (), id="empty: no resource is a device"),
    pytest.param("BERTH_DEVICE_ERROR_EXIT_CODES", "74, 75,,139", "health.device_error_exit_codes", frozenset({74, 75, 139}), id="a list of exit codes"),
    pytest.param("BERTH_DEVICE_ERROR_EXIT_CODES", "", "health.device_error_exit_codes", frozenset(), id="empty: no exit code means a bad device"),
    pytest.param("BERTH_SIMULATE_TIME_LIMIT", "2.5", "simulation.time_limit", 2.5, id="simulations stop sooner"),
    pytest.param("BERTH_SIMULATE_CONCURRENCY", "4", "simulation.concurrency", 4, id="more simulations at once"),
    pytest.param("BERTH_FAIR_SHARING", "true", "fair_sharing.enable", True, id="fair sharing on"),
    pytest.param("BERTH_FAIR_SHARING_STRATEGIES", "LessThanInitialShare", "fair_sharing.strategies", (INITIAL,), id="only Kueue's second strategy"),
    pytest.param("BERTH_FAIR_SHARING_HALF_LIFE", "72h", "fair_sharing.memory_half_life", timedelta(hours=72), id="fair sharing remembers three days"),
    pytest.param("BERTH_ADMISSION_FAIR_SHARING_HALF_LIFE", "168h", "fair_sharing.admission_half_life", timedelta(hours=168), id="admission fair sharing with a week's half-life"),
    pytest.param("BERTH_ADMISSION_FAIR_SHARING_SAMPLING", "1m", "fair_sharing.admission_sampling", timedelta(minutes=1), id="usage read every minute"),
    pytest.param("BERTH_ADMISSION_FAIR_SHARING_WEIGHTS", "cpu=2,memory=500m", "fair_sharing.admission_weights", {"cpu": 2000, "memory": 500}, id="CPU weighs twice, memory half"),
    pytest.param("BERTH_WAIT_FOR_PODS_READY", "true", "pods_ready.enable", True, id="waitForPodsReady on"),
    pytest.param("BERTH_PODS_READY_TIMEOUT", "10m", "pods_ready.timeout", timedelta(minutes=10), id="a longer pods-ready timeout"),
    pytest.param("BERTH_PODS_READY_BLOCK_ADMISSION", "true", "pods_ready.block_admission", True, id="admission waits for readiness"),
    pytest.param("BERTH_PODS_READY_RECOVERY_TIMEOUT", "0s", "pods_ready.recovery_timeout", timedelta(0), id="recovery not checked"),
    pytest.param("BERTH_PODS_READY_REQUEUING_TIMESTAMP", "Creation", "pods_ready.timestamp", RequeuingTimestamp.CREATION, id="requeue by creation time"),
    pytest.param("BERTH_PODS_READY_BACKOFF_LIMIT_COUNT", "3", "pods_ready.backoff_limit_count", 3, id="deactivated after three requeues"),
    pytest.param("BERTH_PODS_READY_BACKOFF_BASE_SECONDS", "10", "pods_ready.backoff_base_seconds", 10, id="a shorter first backoff"),
    pytest.param("BERTH_PODS_READY_BACKOFF_MAX_SECONDS", "600", "pods_ready.backoff_max_seconds", 600, id="a shorter longest backoff"),
    pytest.param("BERTH_SERVER", "http://berth:8000/", "client.server", "http://berth:8000", id="the REST commands' server"),
    pytest.param("BERTH_TOKEN", "look-secret-token-2", "client.token", "look-secret-token-2", id="the REST commands' token"),
    pytest.param("BERTH_PORT", "  ", "http.port", 8000, id="a blank variable is unset"),
]  # fmt: skip


# What a setting needs beside it to be taken (the rest stand alone).
NEEDS = {
    "BERTH_AGGREGATED_API": {"BERTH_WEBHOOK_CERT_DIR": "/certs"},
    "BERTH_FAIR_SHARING_HALF_LIFE": {"BERTH_FAIR_SHARING": "true"},
    "BERTH_ADMISSION_FAIR_SHARING_SAMPLING": {"BERTH_ADMISSION_FAIR_SHARING_HALF_LIFE": "1h"},
    "BERTH_ADMISSION_FAIR_SHARING_WEIGHTS": {"BERTH_ADMISSION_FAIR_SHARING_HALF_LIFE": "1h"},
}


@pytest.mark.parametrize(("variable", "text", "path", "value"), OVERRIDES)
def test_a_variable_sets_its_leaf(variable: str, text: str, path: str, value: object) -> None:
    env = {**NEEDS.get(variable, {}), variable: text}
    assert at(settings.load(env=env), path) == value


def test_every_variable_has_an_override_row() -> None:
    assert {p.values[0] for p in OVERRIDES} == {s.variable for s in SETTINGS}


@pytest.mark.parametrize(("variable", "text", "path", "value"), OVERRIDES)
def test_the_settings_file_sets_the_same_leaves(
    tmp_path: Path, variable: str, text: str, path: str, value: object
) -> None:
    setting = next(s for s in SETTINGS if s.variable == variable)
    if setting.key is None:
        pytest.skip(f"{variable} is a variable only")
    if not text.strip() and not setting.blank:
        pytest.skip("a blank variable is unset; a file says so by leaving the key out")
    env = {**NEEDS.get(variable, {}), **written(tmp_path, nested(setting.key, text))}
    assert at(settings.load(env=env), path) == value


@pytest.mark.parametrize(
    ("flag", "variable", "in_file", "port"),
    [
        pytest.param(None, None, None, 8000, id="nothing set: the default"),
        pytest.param(None, None, 7001, 7001, id="the file over the default"),
        pytest.param(None, "7002", 7001, 7002, id="the variable over the file"),
        pytest.param(None, "", 7001, 7001, id="a blank variable leaves the file's value"),
        pytest.param(7003, "7002", 7001, 7003, id="the flag over the variable"),
        pytest.param(7003, None, None, 7003, id="the flag over the default"),
    ],
)
def test_precedence(
    tmp_path: Path, flag: int | None, variable: str | None, in_file: int | None, port: int
) -> None:
    env = written(tmp_path, {} if in_file is None else {"http": {"port": in_file}})
    if variable is not None:
        env["BERTH_PORT"] = variable
    assert settings.load({"port": flag}, env=env).http.port == port


def test_the_config_flag_names_the_file_over_the_variable(tmp_path: Path) -> None:
    env = written(tmp_path, {"http": {"port": 7001}})
    other = tmp_path / "other.yaml"
    other.write_text("http: {port: 7004}\n")
    assert settings.load({"config": str(other)}, env=env).http.port == 7004


def test_the_readme_example_file_loads(tmp_path: Path) -> None:
    section = README.read_text().split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    example = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert example is not None, "README, Settings: no YAML example"
    path = tmp_path / "berth.yaml"
    path.write_text(example.group(1))
    loaded = settings.load(env={"BERTH_CONFIG": str(path)})
    assert loaded.fair_sharing.enable
    assert loaded != Settings()


# Each row is refused; the refusal names the variable. A file row puts its value at the
# setting's key (YAML values: text variables can only be wrong there).
BAD = [
    pytest.param("env", "BERTH_DATABASE_URL", "mysql://db/berth", "is not a PostgreSQL URL", id="a URL of another database"),
    pytest.param("file", "BERTH_HOME", 7, "is not a text value", id="a home that is a number"),
    pytest.param("env", "BERTH_DB_STATEMENT_TIMEOUT", "soon", "is not a number of seconds", id="timeout not a number"),
    pytest.param("env", "BERTH_DB_STATEMENT_TIMEOUT", "0", "(0.1-86400)", id="timeout of zero"),
    pytest.param("env", "BERTH_DB_CONNECT_TIMEOUT", "0.5", "whole number of seconds", id="connect timeout in fractions"),
    pytest.param("file", "BERTH_HOST", ["0.0.0.0"], "is not a text value", id="a host that is a list"),
    pytest.param("env", "BERTH_PORT", "http", "(1-65535)", id="a port that is a word"),
    pytest.param("env", "BERTH_PORT", "70000", "(1-65535)", id="a port over 65535"),
    pytest.param("env", "BERTH_TOKENS", "short:admin", "entry 1: a token must be at least 16", id="a weak token"),
    pytest.param("env", "BERTH_METRICS_OPEN", "maybe", "not true or false", id="open is true or false"),
    pytest.param("file", "BERTH_WEBHOOK_CERT_DIR", True, "is not a text value", id="a cert dir that is a flag"),
    pytest.param("env", "BERTH_WEBHOOK_PORT", "0", "(1-65535)", id="webhook port zero"),
    pytest.param("file", "BERTH_AGGREGATED_API", "on", "not true or false", id="the aggregated API is true or false"),
    pytest.param("file", "BERTH_KUBECONFIG", 1, "is not a text value", id="a kubeconfig that is a number"),
    pytest.param("file", "BERTH_KUBE_CONTEXT", [], "is not a text value", id="a context that is a list"),
    pytest.param("file", "BERTH_POD_NAME", {"name": "x"}, "is not a text value", id="an identity that is a mapping"),
    pytest.param("file", "BERTH_LEASE_NAMESPACE", 5, "is not a text value", id="a namespace that is a number"),
    pytest.param("file", "BERTH_LEASE_NAME", "", "is not a text value", id="an empty Lease name"),
    pytest.param("env", "BERTH_TAINT_NODES", "off", "not true or false", id="tainting is true or false"),
    pytest.param("env", "BERTH_LOOP_INTERVAL", "0", "(0.01-86400)", id="a loop that never waits"),
    pytest.param("env", "BERTH_LEADER_LEASE_SECONDS", "-3", "is not a number of seconds", id="negative lease"),
    pytest.param("env", "BERTH_LEADER_POLL_SECONDS", "never", "is not a number of seconds", id="poll not a number"),
    pytest.param("env", "BERTH_RECONCILE_SECONDS", "nan", "is not a number of seconds", id="reconcile every nan"),
    pytest.param("env", "BERTH_BACKOFF_FIRST_SECONDS", "20", "more than BERTH_BACKOFF_MAX_SECONDS", id="first backoff over the longest"),
    pytest.param("env", "BERTH_BACKOFF_MAX_SECONDS", "1e9", "(0.1-86400)", id="backoff of decades"),
    pytest.param("env", "BERTH_CRASH_AT", "during-lunch", "is not <point>[:N]", id="an unknown crash point"),
    pytest.param("env", "BERTH_CRASH_AT", "after-commit:x", "is not <point>[:N]", id="a crash count that is a word"),
    pytest.param("env", "BERTH_HEALTH_CORDON_DEVICES", "-1", "BERTH_HEALTH_CORDON_DEVICES: '-1' is not a whole number (0 or more; 0 disables it)", id="negative count"),
    pytest.param("env", "BERTH_HEALTH_CORDON_PERCENT", "150", "(0-100)", id="percent over 100"),
    pytest.param("env", "BERTH_HEALTH_CORDON_NOT_READY", "maybe", "not true or false", id="not a flag"),
    pytest.param("file", "BERTH_HEALTH_DEVICE_RESOURCES", 7, "is not a list", id="device resources that are a number"),
    pytest.param("env", "BERTH_DEVICE_ERROR_EXIT_CODES", "0", "BERTH_DEVICE_ERROR_EXIT_CODES: '0' is not an exit code (1-255)", id="exit code zero"),
    pytest.param("env", "BERTH_DEVICE_ERROR_EXIT_CODES", "74,256", "'256' is not an exit code", id="exit code over 255"),
    pytest.param("env", "BERTH_DEVICE_ERROR_EXIT_CODES", "x1", "'x1' is not an exit code", id="exit code a word"),
    pytest.param("env", "BERTH_SIMULATE_TIME_LIMIT", "10s", "is not a number of seconds", id="a time limit with a unit"),
    pytest.param("env", "BERTH_SIMULATE_CONCURRENCY", "0", "whole number of simulations (1 or more)", id="no simulations at all"),
    pytest.param("env", "BERTH_FAIR_SHARING", "yes", "not true or false", id="fair sharing is true or false"),
    pytest.param("file", "BERTH_FAIR_SHARING", "sometimes", "not true or false", id="fair sharing in the file likewise"),
    pytest.param("file", "BERTH_FAIR_SHARING_STRATEGIES", ["LessThanInitialShare", "LessThanOrEqualToFinalShare"], "is not one of Kueue's accepted lists", id="the strategies in the wrong order"),
    pytest.param("env", "BERTH_FAIR_SHARING_STRATEGIES", "LessThanFinalShare", "unknown strategy 'LessThanFinalShare'", id="a misspelt strategy"),
    pytest.param("env", "BERTH_FAIR_SHARING_HALF_LIFE", "0s", "must be longer than 0s", id="memory without a half-life"),
    pytest.param("env", "BERTH_ADMISSION_FAIR_SHARING_HALF_LIFE", "a week", "is not a duration", id="a half-life in words"),
    pytest.param("file", "BERTH_ADMISSION_FAIR_SHARING_SAMPLING", "0s", "must be longer than 0s", id="sampling never"),
    pytest.param("file", "BERTH_ADMISSION_FAIR_SHARING_WEIGHTS", {"cpu": "-1"}, "cpu: must not be negative", id="a negative resource weight"),
    pytest.param("env", "BERTH_WAIT_FOR_PODS_READY", "on", "not true or false", id="waitForPodsReady is true or false"),
    pytest.param("file", "BERTH_PODS_READY_BLOCK_ADMISSION", "yes", "not true or false", id="blockAdmission is true or false"),
    pytest.param("env", "BERTH_PODS_READY_RECOVERY_TIMEOUT", "-1m", "is not a duration", id="a negative recovery timeout"),
    pytest.param("env", "BERTH_PODS_READY_BACKOFF_LIMIT_COUNT", "-1", "(0 or more)", id="a negative requeue limit"),
    pytest.param("file", "BERTH_PODS_READY_BACKOFF_MAX_SECONDS", "1h", "is not a whole number", id="a longest backoff with a unit"),
    pytest.param("env", "BERTH_PODS_READY_TIMEOUT", "5 minutes", "is not a duration", id="a timeout in words"),
    pytest.param("file", "BERTH_PODS_READY_TIMEOUT", 300, "is not a duration", id="a timeout without a unit"),
    pytest.param("env", "BERTH_PODS_READY_TIMEOUT", "0s", "must be longer than 0s", id="a zero pods-ready timeout"),
    pytest.param("env", "BERTH_PODS_READY_REQUEUING_TIMESTAMP", "Admission", "not Eviction or Creation", id="an unknown requeuing timestamp"),
    pytest.param("env", "BERTH_PODS_READY_BACKOFF_BASE_SECONDS", "0", "(1 or more)", id="a zero backoff"),
    pytest.param("file", "BERTH_SERVER", 8000, "is not a text value", id="a server that is a port"),
    pytest.param("file", "BERTH_TOKEN", ["a"], "is not a text value", id="a token that is a list"),
]  # fmt: skip


@pytest.mark.parametrize(("source", "variable", "value", "words"), BAD)
def test_a_bad_value_is_refused_naming_its_variable(
    tmp_path: Path, source: str, variable: str, value: object, words: str
) -> None:
    setting = next(s for s in SETTINGS if s.variable == variable)
    if source == "env":
        assert isinstance(value, str)
        env, where = {variable: value}, variable
    else:
        assert setting.key is not None
        env = written(tmp_path, nested(setting.key, value))
        where = f"{tmp_path / 'berth.yaml'}: {setting.key}"
    with pytest.raises(SettingsError) as refused:
        settings.load(env=env)
    assert refused.value.field == variable
    assert refused.value.message.startswith(f"{where}: ")
    assert words in refused.value.message


def test_every_variable_has_a_bad_value_row() -> None:
    assert {p.values[1] for p in BAD} == {s.variable for s in SETTINGS}


def test_a_bad_flag_is_refused_naming_the_flag_and_its_variable() -> None:
    with pytest.raises(SettingsError) as refused:
        settings.load({"port": 0}, env={})
    assert refused.value.field == "BERTH_PORT"
    assert refused.value.message.startswith("--port: 0 is not a whole number")


@pytest.mark.parametrize(
    ("text", "words"),
    [
        pytest.param("http: {prot: 8000}\n", "http.prot is not a setting", id="a misspelt key"),
        pytest.param("queueing: {enable: true}\n", "queueing.enable is not a setting", id="an unknown section"),
        pytest.param("resources: {excludeResourcePrefixes: []}\n", "resources.excludeResourcePrefixes is not a setting", id="a Kueue field Berth does not implement"),
        pytest.param("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {enable: true}\n",
                     "fairSharing.enable: not a v1beta2 field", id="v1beta2 has no fairSharing.enable"),
        pytest.param("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n", "expected kind Configuration",
                     id="a manifest is not a settings file"),
        pytest.param("loop: {crashAt: after-commit}\n", "loop.crashAt is not a setting", id="the crash hook is not a file setting"),
        pytest.param("- http\n", "expected a mapping of sections", id="a list, not a mapping"),
        pytest.param("http: {port: [1\n", "while parsing", id="YAML that does not parse"),
    ],
)  # fmt: skip
def test_a_bad_settings_file_is_refused_naming_berth_config(
    tmp_path: Path, text: str, words: str
) -> None:
    path = tmp_path / "berth.yaml"
    path.write_text(text)
    with pytest.raises(SettingsError) as refused:
        settings.load(env={"BERTH_CONFIG": str(path)})
    assert refused.value.field == "BERTH_CONFIG"
    assert words in refused.value.message


def test_a_missing_settings_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as refused:
        settings.load({"config": str(tmp_path / "absent.yaml")}, env={})
    assert (refused.value.field, refused.value.message.split(":")[0]) == ("BERTH_CONFIG", "--config")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("# nothing yet\n", id="an empty file"),
        pytest.param("database:\n  url:\nhttp: {port: null}\n", id="keys left empty are unset"),
    ],
)
def test_a_file_that_sets_nothing_gives_the_defaults(tmp_path: Path, text: str) -> None:
    (tmp_path / "berth.yaml").write_text(text)
    assert settings.load(env={"BERTH_CONFIG": str(tmp_path / "berth.yaml")}) == Settings()


@pytest.mark.parametrize(
    ("argv", "variable", "value"),
    [
        pytest.param(["serve", "--port", "0"], None, None, id="berth serve with a bad flag"),
        pytest.param(["serve"], "BERTH_LEADER_LEASE_SECONDS", "-3", id="berth serve with a bad variable"),
        pytest.param(["top"], "BERTH_FAIR_SHARING", "maybe", id="a REST command refuses a bad variable too, before it calls"),
        pytest.param(["serve", "--webhook-cert-dir", "/certs"], "BERTH_AGGREGATED_API", "true", id="the aggregated API outside Kubernetes mode"),
    ],
)  # fmt: skip
def test_the_cli_exits_2_on_a_bad_setting(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    variable: str | None,
    value: str | None,
) -> None:
    for name in [s.variable for s in SETTINGS] + ["BERTH_CONFIG", "KUBERNETES_SERVICE_HOST"]:
        monkeypatch.delenv(name, raising=False)
    if variable is not None and value is not None:
        monkeypatch.setenv(variable, value)
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert said.startswith(f"error: {variable or '--port'}: ")


def test_kube_settings_and_the_runner_config_are_built_from_the_tree() -> None:
    tree = settings.load(
        env={"BERTH_POD_NAME": "berth-0", "BERTH_LEASE_NAMESPACE": "ops",
             "BERTH_LEADER_LEASE_SECONDS": "2.5", "BERTH_HEALTH_CORDON_DEVICES": "1",
             "BERTH_KUBECONFIG": "/k", "BERTH_LOOP_INTERVAL": "0.3", "BERTH_RECONCILE_SECONDS": "7"}
    )  # fmt: skip
    kube = kube_settings(tree, status_seconds=0.2)
    assert (kube.identity, kube.lease_namespace, kube.lease_name, kube.kubeconfig) == (
        "berth-0", "ops", "berth-leader", "/k")  # fmt: skip
    assert kube.lease_seconds == math.ceil(2.5)  # a Lease counts whole seconds
    assert kube.health.cordon_devices == 1
    assert kube.status_seconds == 0.2
    runner = runner_config(tree.loop, holder="me")
    assert (runner.interval, runner.reconcile_every, runner.backoff_max) == (0.3, 7.0, 15.0)


@pytest.mark.parametrize(
    ("kind", "from_the_tree"),
    [
        pytest.param(KubeSettings, {"kubeconfig", "context", "identity", "lease_namespace", "lease_name",
                                    "lease_seconds", "taint_nodes", "health", "device_error_exit_codes",
                                    "pods_ready"},
                     id="KubeSettings"),
        pytest.param(RunnerConfig, {"holder", "interval", "leader_poll", "reconcile_every", "backoff_first",
                                    "backoff_max"}, id="RunnerConfig"),
    ],
)  # fmt: skip
def test_what_comes_from_the_tree_has_no_second_default(kind: type, from_the_tree: set[str]) -> None:
    without = {f.name for f in fields(kind) if f.default is MISSING and f.default_factory is MISSING}
    assert without == from_the_tree


def test_the_deploy_example_uses_the_default_device_error_codes() -> None:
    example = DEPLOY / "examples" / "job-device-errors.yaml"
    job = yaml.safe_load(example.read_text())
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    [rule] = [r for r in job["spec"]["podFailurePolicy"]["rules"] if "onExitCodes" in r]
    assert rule["action"] == "Ignore"  # FailJob would end the Job instead of requeueing it
    assert rule["onExitCodes"]["operator"] == "In"
    assert set(rule["onExitCodes"]["values"]) == Settings().health.device_error_exit_codes


# The README's Settings table is the list of settings, row for row.


def _shown(value: object) -> str:
    if value is None or value == "" or value == ():
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, float):
        return f"`{value:g}`"
    if isinstance(value, frozenset):
        return f"`{','.join(str(v) for v in sorted(value))}`"
    if isinstance(value, tuple):
        return f"`{','.join(str(v) for v in value)}`"
    return f"`{value}`"


def table_rows() -> list[str]:
    """The Settings table as the README must have it."""
    defaults = Settings()
    rows = []
    for s in SETTINGS:
        key = f"`{s.key}`" if s.key else "—"
        flag = f"`{s.flag}`" if s.flag else "—"
        default = s.default if s.default is not None else _shown(at(defaults, s.path))
        rows.append(f"| `{s.variable}` | {key} | {flag} | {default} | {s.doc} |")
    return rows


def test_the_readme_lists_every_setting_with_its_default() -> None:
    text = README.read_text()
    assert "\n## Settings\n" in text
    section = text.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    listed = [line for line in section.splitlines() if line.startswith("| `BERTH_")]
    expected = table_rows()
    assert listed == expected, "README, Settings, should read:\n" + "\n".join(expected)


# No module but berth/settings.py reads a BERTH_* variable.


def _reads_berth_variables(source: str) -> list[str]:
    """Where ``source`` touches the environment and names a ``BERTH_*`` variable: a module
    doing both could read one however it spells the read (an alias, a constant, a loop)."""
    tree = ast.parse(source)
    touches = [
        node.lineno
        for node in ast.walk(tree)
        if (isinstance(node, ast.Attribute) and node.attr in ("environ", "environb", "getenv"))
        or (isinstance(node, ast.Name) and node.id in ("environ", "getenv"))
        or (isinstance(node, ast.alias) and node.name in ("environ", "getenv"))
    ]
    names = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value.startswith("BERTH_")
    ]
    return [f"environ at line {touches[0]}, BERTH_ at line {names[0]}"] if touches and names else []


@pytest.mark.parametrize(
    ("source", "flagged"),
    [
        pytest.param('import os\nos.environ.get("BERTH_PORT")\n', True, id="environ.get"),
        pytest.param('import os\nos.getenv("BERTH_PORT")\n', True, id="getenv"),
        pytest.param('from os import environ\nNAME = "BERTH_PORT"\nenviron[NAME]\n', True, id="a constant and an alias"),
        pytest.param('import os\nos.environ.get("KUBERNETES_SERVICE_HOST")\n', False, id="another program's variable"),
        pytest.param('MESSAGE = "BERTH_TOKENS: set it"\n', False, id="a variable named in a message"),
    ],
)  # fmt: skip
def test_the_reader_check_finds_reads(source: str, flagged: bool) -> None:
    assert bool(_reads_berth_variables(source)) is flagged


def test_no_module_but_settings_reads_a_berth_variable() -> None:
    readers = [
        f"{path.relative_to(REPO)}: {where}"
        for top in SOURCE
        for path in sorted((REPO / top).rglob("*.py"))
        if path != REPO / "berth" / "settings.py"
        for where in _reads_berth_variables(path.read_text())
    ]
    assert readers == []


@pytest.mark.parametrize(
    ("text", "fairness"),
    [
        pytest.param("fairSharing: {enable: true}\n", Fairness(True, (FINAL, INITIAL)),
                     id="fair sharing on takes both strategies, Kueue's default"),
        pytest.param("fairSharing:\n  enable: true\n  preemptionStrategies: [LessThanOrEqualToFinalShare]\n",
                     Fairness(True, (FINAL,)), id="Kueue's configuration as written, one strategy"),
        pytest.param("admissionFairSharing: {usageHalfLifeTime: 168h, usageSamplingInterval: 5m, resourceWeights: {cpu: 2.0, memory: 1.0}}\n",
                     Fairness(admission=AdmissionFairSharing(timedelta(hours=168), timedelta(minutes=5), {"cpu": 2000, "memory": 1000})),
                     id="Kueue's admission fair sharing example"),
        pytest.param("fairSharing: {enable: true}\nberth: {fairSharingHalfLife: 72h}\n",
                     Fairness(True, memory_half_life=timedelta(hours=72)), id="fair sharing with memory"),
    ],
)  # fmt: skip
def test_the_settings_file_takes_kueues_fair_sharing_fields(
    tmp_path: Path, text: str, fairness: Fairness
) -> None:
    path = tmp_path / "berth.yaml"
    path.write_text(text)
    assert settings.load(env={"BERTH_CONFIG": str(path)}).fair_sharing.fairness() == fairness


@pytest.mark.parametrize(
    ("env", "variable", "words"),
    [
        pytest.param({"BERTH_FAIR_SHARING_HALF_LIFE": "72h"}, "BERTH_FAIR_SHARING_HALF_LIFE",
                     "needs fair sharing on", id="memory without fair sharing"),
        pytest.param({"BERTH_ADMISSION_FAIR_SHARING_SAMPLING": "1m"},
                     "BERTH_ADMISSION_FAIR_SHARING_HALF_LIFE", "required with the other",
                     id="a sampling interval without a half-life"),
    ],
)  # fmt: skip
def test_fair_sharing_settings_that_need_another_are_refused(
    env: dict[str, str], variable: str, words: str
) -> None:
    with pytest.raises(SettingsError) as refused:
        settings.load(env=env)
    assert refused.value.field == variable
    assert words in refused.value.message


def test_the_aggregated_api_needs_the_webhooks_certificates() -> None:
    with pytest.raises(SettingsError) as refused:
        settings.load(env={"BERTH_AGGREGATED_API": "true"})
    assert refused.value.field == "BERTH_AGGREGATED_API"
    assert "BERTH_WEBHOOK_CERT_DIR" in refused.value.message


def test_the_aggregated_api_needs_kubernetes_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    config = settings.load(env={"BERTH_AGGREGATED_API": "true", "BERTH_WEBHOOK_CERT_DIR": "/c"})
    with pytest.raises(SettingsError) as refused:
        check_aggregated_api(config)
    assert refused.value.field == "BERTH_AGGREGATED_API"
    assert "Kubernetes mode" in refused.value.message
    check_aggregated_api(settings.load(env={"BERTH_AGGREGATED_API": "true", "BERTH_WEBHOOK_CERT_DIR": "/c", "BERTH_KUBECONFIG": "/k"}))
