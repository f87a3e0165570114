"""read API indexes: a workload's queue neighbours, pending counts, run history, open usage

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 00:15:00+00:00

Pending workloads reach their ClusterQueue through their LocalQueue, so the read side looks
them up per (namespace, LocalQueue): by queue position (who is ahead) and by primary reason
(counts). Finished runs per ClusterQueue feed start estimates; open usage intervals give
what each queue holds now. All partial, so they cover only the rows those reads touch.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_workloads_pending_queue_position",
        "workloads",
        ["namespace", "queue_name", "queue_position"],
        postgresql_where=sa.text("state = 'Pending'"),
    )
    op.create_index(
        "ix_workloads_pending_local_reason",
        "workloads",
        ["namespace", "queue_name", "reason_code"],
        postgresql_where=sa.text("state = 'Pending' AND cluster_queue IS NULL"),
    )
    op.create_index(
        "ix_workloads_finished_runs",
        "workloads",
        ["cluster_queue", "finished_at", "admitted_at"],
        postgresql_where=sa.text("state = 'Finished'"),
    )
    op.create_index(
        "ix_usage_intervals_open",
        "usage_intervals",
        ["cluster_queue", "flavor", "resource", "amount"],
        postgresql_where=sa.text("ended_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_usage_intervals_open", table_name="usage_intervals")
    op.drop_index("ix_workloads_finished_runs", table_name="workloads")
    op.drop_index("ix_workloads_pending_local_reason", table_name="workloads")
    op.drop_index("ix_workloads_pending_queue_position", table_name="workloads")
