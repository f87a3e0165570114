"""``berth why``, ``berth get workloads --pending`` and ``berth top`` over REST, against a
real ``berth serve`` (embedded PostgreSQL, admission loop running)."""

from __future__ import annotations

import argparse
from typing import Any

import httpx
import pytest
from builders.waiting_queue import seed_waiting_queue

from berth.cli import why as why_cli
from berth.cli.main import main

Berth = Any  # the `berth` fixture of conftest.py


@pytest.fixture
def url(berth: Berth) -> str:
    berth.serve()
    berth.wait_ready()
    base = f"http://127.0.0.1:{berth.port}"
    with httpx.Client(base_url=base, timeout=10) as http:
        seed_waiting_queue(http)
    return base


def _run(command: str, capsys: pytest.CaptureFixture[str], **args: Any) -> tuple[int, str, str]:
    code = getattr(why_cli, command)(argparse.Namespace(**args))
    out, err = capsys.readouterr()
    return code, out, err


def _main(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_why_explains_reason_numbers_position_and_history(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("why", capsys, workload="team-a/also-waits", server=url)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "team-a/also-waits is Pending in ClusterQueue team-a (LocalQueue main, priority 0)"
    assert lines[1].startswith("Why: WaitingForQuota: insufficient unused quota for nvidia.com/gpu")
    assert "requested 1, available 0, shortfall 1, nominal 4, used 4" in lines[2]
    assert "Position 2 in ClusterQueue team-a (1 ahead)" in lines
    assert "  1. team-a/waits priority 0 nvidia.com/gpu=2 WaitingForQuota" in lines
    assert any(line.startswith("Estimated start: unknown") for line in lines)
    assert any(line.startswith("History: waited ") for line in lines)


@pytest.mark.parametrize(
    ("workload", "code", "message"),
    [
        pytest.param("team-a/ghost", 2, "Workload team-a/ghost not found", id="unknown workload"),
        pytest.param("no-slash", 2, "expected NAMESPACE/NAME", id="not namespace/name"),
    ],
)
def test_why_reports_errors(url: str, capsys: pytest.CaptureFixture[str], workload: str, code: int, message: str) -> None:
    got, out, err = _run("why", capsys, workload=workload, server=url)
    assert (got, out) == (code, "")
    assert message in err


def test_get_workloads_pending_lists_reasons_in_queue_order(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _main(capsys, "get", "workloads", "--pending", "--server", url)
    assert code == 0
    rows = [line.split() for line in out.splitlines()]
    assert rows[0] == ["NAMESPACE", "NAME", "STATE", "CLUSTERQUEUE", "POS", "REASON"]
    assert rows[1:] == [
        ["team-a", "waits", "Pending", "team-a", "1", "WaitingForQuota"],
        ["team-a", "also-waits", "Pending", "team-a", "2", "WaitingForQuota"],
    ]


def test_get_workloads_wide_adds_requests_and_message(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _main(capsys, "get", "workloads", "--pending", "-o", "wide", "--server", url)
    assert code == 0
    assert "nvidia.com/gpu=2" in out.splitlines()[1]
    assert "insufficient unused quota" in out.splitlines()[1]


def test_top_draws_a_full_bar_for_a_full_queue(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run("top", capsys, server=url)
    assert code == 0
    [row] = [line for line in out.splitlines() if line.startswith("team-a")]
    assert "[" + "#" * why_cli.BAR + "]" in row
    assert "4/4" in row and "pending 2 (WaitingForQuota 2)" in row


def test_unreachable_server_fails_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run("top", capsys, server="http://127.0.0.1:9")
    assert code == 1
    assert "no Berth answers at http://127.0.0.1:9" in err and "berth serve --demo" in err
