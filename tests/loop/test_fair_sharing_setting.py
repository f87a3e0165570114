"""Fair sharing turned on in the settings changes who the loop admits, as the engine's
fair-sharing tests say it should (tests/unit/admission/engine/test_fairshare.py,
``test_fair_sharing_orders_admission``): two ClusterQueues borrow from one lender, ``a``
already borrows, and one more borrower fits. Without fair sharing the older workload goes
first (``a/x``); with it, the queue with the lower share (``b/y``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from builders.loop import Ledgered, RecordingActuator, pool
from builders.manifests import job
from builders.serve_process import ServeProcess, wait_for

from admission.intake.workloads import submit_workloads
from berth import settings
from berth.serve import admission_loop
from quota.ledger.repository import Ledger

# a and b lend nothing and borrow from lender, whose 4 GPUs take two 2-GPU workloads.
POOL = pool(("a", 0), ("b", 0), ("lender", 4), cohort="c")


def _contenders(ledgered: Ledgered) -> None:
    """x (queue a) and y (queue b), x the older, in one transaction: one cycle sees both."""
    start = datetime.now(UTC)
    with ledgered.sessions() as session:
        submit_workloads(
            Ledger(session),
            [(job("x", 2, namespace="a"), start), (job("y", 2, namespace="b"),
                                                    start + timedelta(seconds=1))],
            actor="test",
        )  # fmt: skip


def _state(ledgered: Ledgered, name: str) -> str:
    return str(ledgered.workload(name)["state"])


@pytest.mark.parametrize(
    ("flags", "env", "in_file", "first"),
    [
        pytest.param({}, {}, None, "x", id="off by default: the older borrower goes first"),
        pytest.param({}, {"BERTH_FAIR_SHARING": "true"}, None, "y", id="on by variable: the queue with the lower share goes first"),
        pytest.param({}, {}, "fairSharing:\n  enable: true\n", "y", id="on in the settings file, spelt as Kueue spells it"),
        pytest.param({"fair_sharing": True}, {"BERTH_FAIR_SHARING": "false"}, None, "y", id="on by --fair-sharing over the variable"),
    ],
)  # fmt: skip
async def test_the_setting_decides_who_the_loop_admits(
    ledgered: Ledgered,
    actuator: RecordingActuator,
    tmp_path: Path,
    flags: dict[str, object],
    env: dict[str, str],
    in_file: str | None,
    first: str,
) -> None:
    if in_file is not None:
        (tmp_path / "berth.yaml").write_text(in_file)
        env = {**env, "BERTH_CONFIG": str(tmp_path / "berth.yaml")}
    # The loop berth serve builds, from the settings berth serve loads.
    loop = admission_loop(ledgered.sessions, actuator, settings.load(flags, env=env))
    ledgered.apply(POOL)
    ledgered.submit(job("held", 2, namespace="a"))
    await loop.begin()
    await loop.cycle()
    assert _state(ledgered, "held") == "Admitted"
    _contenders(ledgered)

    summary = await loop.cycle()

    other = "y" if first == "x" else "x"
    assert summary.admitted == 1
    assert (_state(ledgered, first), _state(ledgered, other)) == ("Admitted", "Pending")


def test_berth_serve_with_fair_sharing_on_admits_by_share(
    ledgered: Ledgered, tmp_path: Path
) -> None:
    server = ServeProcess(ledgered.url, tmp_path / "serve.log", env={"BERTH_FAIR_SHARING": "true"})
    try:
        server.start()
        ledgered.apply(POOL)
        ledgered.submit(job("held", 2, namespace="a"))
        wait_for(lambda: _state(ledgered, "held") == "Admitted", 30, "held admitted")
        _contenders(ledgered)
        wait_for(lambda: "Admitted" in (_state(ledgered, "x"), _state(ledgered, "y")), 30,
                 "one contender admitted")  # fmt: skip
        assert (_state(ledgered, "x"), _state(ledgered, "y")) == ("Pending", "Admitted")
        assert server.admitted() == ["a/held", "b/y"]
        assert "fair sharing on" in server.output()
    finally:
        server.stop()
