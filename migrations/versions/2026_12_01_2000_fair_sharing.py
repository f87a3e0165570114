"""fair sharing: admissionScope and LocalQueue weights, min-runtime on queues and classes

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 20:00:00+00:00

``admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}`` lets LocalQueue usage
order a ClusterQueue's workloads, each LocalQueue's by its ``spec.fairSharing.weight``;
``berth.dev/min-runtime`` on a ClusterQueue or a
WorkloadPriorityClass protects victims younger than that from preemption.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "cluster_queues",
        sa.Column("usage_based_admission", sa.Boolean(), server_default=sa.text("false"),
                  nullable=False),
    )
    op.add_column("cluster_queues", sa.Column("min_runtime_seconds", sa.Integer(), nullable=True))
    op.add_column("priority_classes",
                  sa.Column("min_runtime_seconds", sa.Integer(), nullable=True))
    op.add_column(
        "local_queues",
        sa.Column("fair_sharing_weight", sa.BigInteger(), server_default=sa.text("1000"),
                  nullable=False),
    )


def downgrade() -> None:
    op.drop_column("local_queues", "fair_sharing_weight")
    op.drop_column("priority_classes", "min_runtime_seconds")
    op.drop_column("cluster_queues", "min_runtime_seconds")
    op.drop_column("cluster_queues", "usage_based_admission")
