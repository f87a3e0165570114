"""admission checks: AdmissionCheck and ProvisioningRequestConfig objects, QuotaReserved

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 19:10:00+00:00

Kueue's two-phase admission: a workload of a ClusterQueue with admission checks first
reserves quota (state ``QuotaReserved``), and is admitted when every check is Ready. The
workload row keeps its checks' states; after a Retry, ``requeue_at`` (0006) says when it
may reserve again.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_STATES_BEFORE = "'Pending', 'Admitted', 'Evicting', 'Finished', 'Deactivated'"
_STATES = f"{_STATES_BEFORE}, 'QuotaReserved'"
_EVENTS_BEFORE = (
    "'Admitted', 'Evicted', 'Finished', 'Requeued', 'Checkpointed', 'PodsReady', 'PodsNotReady'"
)
_EVENTS = f"{_EVENTS_BEFORE}, 'QuotaReserved', 'CheckChanged'"
_TABLES = ("admission_checks", "provisioning_request_configs")
_ENDS_BEFORE = (
    "'Finished', 'Failed', 'Deleted', 'Reclaimed', 'Preempted', 'NodeUnhealthy', "
    "'ClusterQueueStopped', 'Deactivated', 'PodsReadyTimeout', 'MaximumExecutionTimeExceeded'"
)
_ENDS = f"{_ENDS_BEFORE}, 'AdmissionCheck'"


def _versioned() -> list[sa.Column[object]]:
    now = sa.text("now()")
    return [
        sa.Column("version", sa.Integer(), server_default=sa.text("1"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=now, nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=now, nullable=False),
    ]


def upgrade() -> None:
    op.create_table(
        "admission_checks",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("controller_name", sa.Text(), nullable=False),
        sa.Column("parameters", postgresql.JSONB(none_as_null=True), nullable=True),
        *_versioned(),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_admission_checks")),
    )
    op.create_table(
        "provisioning_request_configs",
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("spec", postgresql.JSONB(none_as_null=True), nullable=False),
        *_versioned(),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_provisioning_request_configs")),
    )
    for table in _TABLES:
        op.execute(
            f"CREATE TRIGGER {table}_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
            f"ON {table} FOR EACH STATEMENT EXECUTE FUNCTION berth_notify_change()"
        )
        op.execute(
            f"CREATE TRIGGER {table}_object_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
            f"ON {table} FOR EACH STATEMENT EXECUTE FUNCTION berth_object_changed()"
        )
    op.add_column("workloads", sa.Column(
        "admission_checks", postgresql.JSONB(none_as_null=True),
        server_default=sa.text("'[]'::jsonb"), nullable=False))
    op.drop_constraint(op.f("ck_workloads_state"), "workloads", type_="check")
    op.create_check_constraint(op.f("ck_workloads_state"), "workloads", f"state IN ({_STATES})")
    op.drop_constraint(op.f("ck_workload_events_type"), "workload_events", type_="check")
    op.create_check_constraint(
        op.f("ck_workload_events_type"), "workload_events", f"type IN ({_EVENTS})"
    )
    _end_reasons(_ENDS)


def _end_reasons(allowed: str) -> None:
    op.drop_constraint(op.f("ck_usage_intervals_end_reason"), "usage_intervals", type_="check")
    op.create_check_constraint(
        op.f("ck_usage_intervals_end_reason"), "usage_intervals", f"end_reason IN ({allowed})"
    )


def downgrade() -> None:
    op.execute("UPDATE usage_intervals SET end_reason = 'Preempted' "
               "WHERE end_reason = 'AdmissionCheck'")
    _end_reasons(_ENDS_BEFORE)
    op.execute("DELETE FROM workload_events WHERE type IN ('QuotaReserved', 'CheckChanged')")
    op.drop_constraint(op.f("ck_workload_events_type"), "workload_events", type_="check")
    op.create_check_constraint(
        op.f("ck_workload_events_type"), "workload_events", f"type IN ({_EVENTS_BEFORE})"
    )
    # A reservation is given back: the workload waits again.
    op.execute(
        "UPDATE workloads SET state = 'Pending', admission = NULL, cluster_queue = NULL "
        "WHERE state = 'QuotaReserved'"
    )
    op.drop_constraint(op.f("ck_workloads_state"), "workloads", type_="check")
    op.create_check_constraint(
        op.f("ck_workloads_state"), "workloads", f"state IN ({_STATES_BEFORE})"
    )
    op.drop_column("workloads", "admission_checks")
    for table in _TABLES:
        op.execute(f"DROP TRIGGER {table}_object_changed ON {table}")
        op.execute(f"DROP TRIGGER {table}_notify ON {table}")
    op.drop_table("provisioning_request_configs")
    op.drop_table("admission_checks")
