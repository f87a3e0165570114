"""admission loop: change tracking, NOTIFY on change, object-change fence, leader terms

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 23:30:00+00:00

- ``workloads.change_xid``: the id of the transaction that last wrote the row (a trigger
  sets it), so the loop reloads only rows written since its last look.
- ``workloads.evicted_at``: when a checkpointing victim was told to stop (grace deadline).
- ``object_changes``: per object table, the last transaction that wrote it; writers also
  take an exclusive transaction-level advisory lock that the loop's decision transaction
  takes shared, so quota cannot change between the loop's check and its commit.
- ``loop_leader``: a fencing term bumped by every new leader and checked by every cycle.
- Statement triggers NOTIFY ``berth_changes`` unless the writer set ``berth.quiet``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Must equal quota.ledger_changes.OBJECTS_LOCK (a migration does not import app code).
OBJECTS_LOCK = 7_266_400_001
OBJECT_TABLES = (
    "resource_flavors",
    "cohorts",
    "cluster_queues",
    "resource_groups",
    "quotas",
    "local_queues",
    "priority_classes",
    "namespaces",
    "topologies",
    "nodes",
)
_XID = "pg_current_xact_id()::text::bigint"


def upgrade() -> None:
    op.add_column(
        "workloads",
        sa.Column("change_xid", sa.BigInteger(), server_default=sa.text("0"), nullable=False),
    )
    op.add_column("workloads", sa.Column("evicted_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_workloads_change_xid", "workloads", ["change_xid"])
    op.create_table(
        "object_changes",
        sa.Column("table_name", sa.Text(), nullable=False),
        sa.Column("change_xid", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_name", name=op.f("pk_object_changes")),
    )
    op.create_table(
        "loop_leader",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("term", sa.BigInteger(), nullable=False),
        sa.Column("holder", sa.Text(), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("id = 1", name=op.f("ck_loop_leader_single_row")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_loop_leader")),
    )
    op.execute(
        f"""
        CREATE FUNCTION berth_stamp_change_xid() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            NEW.change_xid := {_XID};
            RETURN NEW;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE FUNCTION berth_notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF coalesce(current_setting('berth.quiet', true), '') <> 'on' THEN
                PERFORM pg_notify('berth_changes', TG_TABLE_NAME);
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        f"""
        CREATE FUNCTION berth_object_changed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_advisory_xact_lock({OBJECTS_LOCK});
            INSERT INTO object_changes (table_name, change_xid) VALUES (TG_TABLE_NAME, {_XID})
            ON CONFLICT (table_name) DO UPDATE SET change_xid = EXCLUDED.change_xid;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER workloads_change_xid BEFORE INSERT OR UPDATE ON workloads "
        "FOR EACH ROW EXECUTE FUNCTION berth_stamp_change_xid()"
    )
    for table in ("workloads", *OBJECT_TABLES):
        op.execute(
            f"CREATE TRIGGER {table}_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
            f"ON {table} FOR EACH STATEMENT EXECUTE FUNCTION berth_notify_change()"
        )
    for table in OBJECT_TABLES:
        op.execute(
            f"CREATE TRIGGER {table}_object_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE "
            f"ON {table} FOR EACH STATEMENT EXECUTE FUNCTION berth_object_changed()"
        )


def downgrade() -> None:
    for table in OBJECT_TABLES:
        op.execute(f"DROP TRIGGER {table}_object_changed ON {table}")
    for table in ("workloads", *OBJECT_TABLES):
        op.execute(f"DROP TRIGGER {table}_notify ON {table}")
    op.execute("DROP TRIGGER workloads_change_xid ON workloads")
    op.execute("DROP FUNCTION berth_object_changed()")
    op.execute("DROP FUNCTION berth_notify_change()")
    op.execute("DROP FUNCTION berth_stamp_change_xid()")
    op.drop_table("loop_leader")
    op.drop_table("object_changes")
    op.drop_index("ix_workloads_change_xid", table_name="workloads")
    op.drop_column("workloads", "evicted_at")
    op.drop_column("workloads", "change_xid")
