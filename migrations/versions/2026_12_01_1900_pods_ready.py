"""pods ready: waitForPodsReady's readiness, requeue backoff and deactivation per workload

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 19:00:00+00:00

An admitted workload whose pods are not all Ready in time is evicted (PodsReadyTimeout)
and may not be admitted again before ``requeue_at``; past the limit Berth deactivates it
and says why in ``deactivation``. The loop reads all of it from the row, so a restarted
leader keeps the same deadlines and backoffs.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


_EVENT_TYPES_BEFORE = "'Admitted', 'Evicted', 'Finished', 'Requeued', 'Checkpointed'"
_EVENT_TYPES = f"{_EVENT_TYPES_BEFORE}, 'PodsReady', 'PodsNotReady'"


def _event_types(types: str) -> None:
    op.drop_constraint(op.f("ck_workload_events_type"), "workload_events", type_="check")
    op.create_check_constraint(
        op.f("ck_workload_events_type"), "workload_events", f"type IN ({types})"
    )


def upgrade() -> None:
    # A workload's pods becoming all Ready, or losing it, is an event of its history.
    _event_types(_EVENT_TYPES)
    op.add_column(
        "workloads",
        sa.Column("readiness", sa.Text(), server_default=sa.text("'WaitForStart'"),
                  nullable=False),
    )
    op.add_column(
        "workloads", sa.Column("readiness_since", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column(
        "workloads",
        sa.Column("requeue_count", sa.Integer(), server_default=sa.text("0"), nullable=False),
    )
    op.add_column("workloads", sa.Column("requeue_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("workloads", sa.Column("deactivation", sa.Text(), nullable=True))
    # A PodsReadyTimeout caused by an unhealthy node: its lost time is not charged.
    op.add_column(
        "usage_intervals",
        sa.Column("node_fault", sa.Boolean(), server_default=sa.text("false"), nullable=False),
    )


def downgrade() -> None:
    op.drop_column("usage_intervals", "node_fault")
    op.execute("DELETE FROM workload_events WHERE type IN ('PodsReady', 'PodsNotReady')")
    _event_types(_EVENT_TYPES_BEFORE)
    for column in ("deactivation", "requeue_at", "requeue_count", "readiness_since", "readiness"):
        op.drop_column("workloads", column)
