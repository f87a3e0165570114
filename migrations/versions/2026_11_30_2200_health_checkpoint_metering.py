"""node health and repair, checkpoint-aware preemption, metering

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 22:00:00+00:00

One revision for the health/topology/checkpoint issue, in three sections (one per part) so
that each part's schema change and its reversal sit side by side.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    _upgrade_health()
    _upgrade_checkpoint()
    _upgrade_metering()
    _upgrade_capacity()


def downgrade() -> None:
    _downgrade_capacity()
    _downgrade_metering()
    _downgrade_checkpoint()
    _downgrade_health()


# --- capacity: the per-flavor priority floor -------------------------------------------


def _upgrade_capacity() -> None:
    # ``berth.dev/min-priority`` on a ResourceFlavor: NULL admits every priority.
    op.add_column("resource_flavors", sa.Column("min_priority", sa.Integer(), nullable=True))


def _downgrade_capacity() -> None:
    op.drop_column("resource_flavors", "min_priority")


# --- node health and repair workflow ---------------------------------------------------


_HEALTH_STATES = "'Healthy', 'Degraded', 'Cordoned', 'Repairing', 'Validating'"


def _upgrade_health() -> None:
    # Every change of a node's health state, by whom and why: the repair history.
    op.create_table(
        "node_health_transitions",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("node", sa.Text(), nullable=False),
        sa.Column("from_state", sa.Text(), nullable=True),  # NULL: the node appeared so
        sa.Column("to_state", sa.Text(), nullable=False),
        sa.Column("why", sa.Text(), nullable=False),
        sa.Column("actor", sa.Text(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            f"from_state IN ({_HEALTH_STATES})",
            name=op.f("ck_node_health_transitions_from_state"),
        ),
        sa.CheckConstraint(
            f"to_state IN ({_HEALTH_STATES})", name=op.f("ck_node_health_transitions_to_state")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_node_health_transitions")),
    )
    op.create_index(
        "ix_node_health_transitions_node_at", "node_health_transitions", ["node", "at"]
    )
    op.create_index(
        "ix_workload_events_node_unhealthy",
        "workload_events",
        ["at"],
        postgresql_where=sa.text("reason = 'NodeUnhealthy'"),
    )


def _downgrade_health() -> None:
    op.drop_index("ix_workload_events_node_unhealthy", table_name="workload_events")
    op.drop_table("node_health_transitions")


# --- checkpoint-aware preemption -------------------------------------------------------


_EVENT_TYPES_BEFORE = "'Admitted', 'Evicted', 'Finished', 'Requeued'"
_EVENT_TYPES = f"{_EVENT_TYPES_BEFORE}, 'Checkpointed'"


def _upgrade_checkpoint() -> None:
    # Why the workload was last evicted: a checkpointing victim's quota is released (and its
    # usage closed with this reason) only when its grace ends, cycles later.
    op.add_column("workloads", sa.Column("eviction_reason", sa.Text(), nullable=True))
    op.drop_constraint(op.f("ck_workload_events_type"), "workload_events", type_="check")
    op.create_check_constraint(
        op.f("ck_workload_events_type"), "workload_events", f"type IN ({_EVENT_TYPES})"
    )


def _downgrade_checkpoint() -> None:
    op.execute("DELETE FROM workload_events WHERE type = 'Checkpointed'")
    op.drop_constraint(op.f("ck_workload_events_type"), "workload_events", type_="check")
    op.create_check_constraint(
        op.f("ck_workload_events_type"), "workload_events", f"type IN ({_EVENT_TYPES_BEFORE})"
    )
    op.drop_column("workloads", "eviction_reason")


# --- metering and reclamation ----------------------------------------------------------


_INTERVAL_ENDS = (
    "'Finished', 'Failed', 'Deleted', 'Reclaimed', 'Preempted', 'NodeUnhealthy', "
    "'ClusterQueueStopped', 'Deactivated', 'PodsReadyTimeout', 'MaximumExecutionTimeExceeded'"
)


def _upgrade_metering() -> None:
    # Why each interval ended, and from when its work was lost (the last checkpoint, else
    # its start) when an eviction ended it: preemption waste and hardware-fault time.
    op.add_column("usage_intervals", sa.Column("end_reason", sa.Text(), nullable=True))
    op.add_column(
        "usage_intervals", sa.Column("lost_from", sa.DateTime(timezone=True), nullable=True)
    )
    op.create_check_constraint(
        op.f("ck_usage_intervals_end_reason"),
        "usage_intervals",
        f"end_reason IN ({_INTERVAL_ENDS})",
    )
    op.create_index("ix_usage_intervals_ended_at", "usage_intervals", ["ended_at"])
    from sqlalchemy.dialects.postgresql import JSONB  # the section's own import

    # Prices per resource (``berth.dev/price-per-hour``): {resource: {price, per}}.
    op.add_column(
        "resource_flavors",
        sa.Column(
            "prices",
            JSONB(astext_type=sa.Text()),
            server_default=sa.text("'{}'::jsonb"),
            nullable=False,
        ),
    )


def _downgrade_metering() -> None:
    op.drop_column("resource_flavors", "prices")
    op.drop_index("ix_usage_intervals_ended_at", table_name="usage_intervals")
    op.drop_constraint(
        op.f("ck_usage_intervals_end_reason"), "usage_intervals", type_="check"
    )
    op.drop_column("usage_intervals", "lost_from")
    op.drop_column("usage_intervals", "end_reason")
