"""The README's promises, through the real CLI and the embedded PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builders.paths import REPO

POOL = REPO / "examples" / "gpu-pool.yaml"
Berth = Any  # the `berth` fixture of conftest.py: runs the real CLI

NEGATIVE = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: -5}]}]
"""


def _queues(berth: Berth) -> dict[str, dict]:  # type: ignore[type-arg]
    result = berth.run("get", "clusterqueues", "-o", "json")
    assert result.returncode == 0, result.stderr
    return {item["metadata"]["name"]: item for item in json.loads(result.stdout)["items"]}


def test_serve_apply_get_and_restart_keeps_the_ledger(berth: Berth) -> None:
    server = berth.serve()
    berth.wait_ready()
    applied = berth.run("apply", "-f", str(POOL))
    assert applied.returncode == 0, applied.stderr
    assert "clusterqueue/llm-training created" in applied.stdout

    queues = _queues(berth)
    assert set(queues) == {"llm-training", "inference"}
    h100 = queues["llm-training"]["spec"]["resourceGroups"][0]["flavors"][0]
    gpu = next(r for r in h100["resources"] if r["name"] == "nvidia.com/gpu")
    assert (h100["name"], gpu["nominalQuota"], gpu["borrowingLimit"]) == ("h100-80gb", "32", "16")

    output = berth.stop(server)
    assert "embedded PostgreSQL" in output and str(berth.home) in output

    berth.serve()
    berth.wait_ready()
    assert set(_queues(berth)) == {"llm-training", "inference"}, "restart lost the ledger"


def test_negative_quota_exits_2_naming_object_and_field_and_writes_nothing(
    berth: Berth, tmp_path: Path
) -> None:
    berth.serve()
    berth.wait_ready()
    bad = tmp_path / "bad.yaml"
    bad.write_text(NEGATIVE)
    result = berth.run("apply", "-f", str(bad))
    assert result.returncode == 2
    assert "ClusterQueue/team-a" in result.stderr
    assert "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota" in result.stderr
    assert "Traceback" not in result.stderr
    listed = berth.run("get", "resourceflavors", "-o", "json")
    assert json.loads(listed.stdout)["items"] == [], "the valid flavor was written anyway"


def test_apply_reads_standard_input_and_delete_removes(berth: Berth) -> None:
    berth.serve()
    berth.wait_ready()
    flavor = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: spot}\n"
    assert berth.run("apply", "-f", "-", stdin=flavor).returncode == 0
    assert "spot" in berth.run("get", "flavors").stdout
    deleted = berth.run("delete", "resourceflavor", "spot")
    assert deleted.returncode == 0, deleted.stderr
    assert berth.run("get", "rf", "spot").returncode == 2


def test_missing_file_is_a_clear_error(berth: Berth) -> None:
    result = berth.run("apply", "-f", "does-not-exist.yaml")
    assert result.returncode == 2
    assert "does-not-exist.yaml: no such file or folder" in result.stderr


def test_db_commands_report_the_revision(berth: Berth) -> None:
    upgraded = berth.run("db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stderr
    current = berth.run("db", "current")
    assert current.returncode == 0
    # Alembic's start-up chatter ("setup plugin alembic.autogenerate...") is not news.
    assert "setup plugin" not in current.stderr + upgraded.stderr
    history = berth.run("db", "history")
    revision = current.stdout.strip().splitlines()[-1].split()[0]
    assert revision in history.stdout
