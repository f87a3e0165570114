"""initial ledger: objects, quotas, workloads, reason timeline, audit log, metering, events

Revision ID: 0001
Revises:
Create Date: 2026-11-29 22:41:26+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import SchemaItem

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STOP_POLICIES = "('None', 'Hold', 'HoldAndDrain')"


def _jsonb(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, postgresql.JSONB(none_as_null=True), nullable=nullable)


def _text(name: str, *, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.Text(), nullable=nullable)


def _at(name: str, *, nullable: bool = False, now: bool = False) -> sa.Column[object]:
    default = sa.text("now()") if now else None
    return sa.Column(name, sa.DateTime(timezone=True), server_default=default, nullable=nullable)


def _versioned() -> list[sa.Column[object]]:
    return [
        sa.Column("version", sa.Integer(), server_default=sa.text("1"), nullable=False),
        _at("created_at", now=True),
        _at("updated_at", now=True),
    ]


def _serial_id() -> sa.Column[object]:
    return sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False)


def _workload_id(table: str) -> list[SchemaItem]:
    return [
        sa.Column("workload_id", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workload_id"],
            ["workloads.id"],
            name=op.f(f"fk_{table}_workload_id_workloads"),
            ondelete="CASCADE",
        ),
    ]


def _create_objects() -> None:
    op.create_table(
        "resource_flavors",
        _text("name"),
        _jsonb("node_labels"),
        _jsonb("node_taints"),
        _jsonb("tolerations"),
        _text("topology_name", nullable=True),
        *_versioned(),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_resource_flavors")),
    )
    op.create_table(
        "cohorts",
        _text("name"),
        _text("parent", nullable=True),
        sa.Column("fair_sharing_weight", sa.BigInteger(), nullable=False),
        *_versioned(),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_cohorts")),
    )
    op.create_table(
        "cluster_queues",
        _text("name"),
        _text("cohort", nullable=True),
        _text("queueing_strategy"),
        _jsonb("preemption"),
        _jsonb("flavor_fungibility"),
        _text("stop_policy"),
        _jsonb("namespace_selector", nullable=True),
        sa.Column("fair_sharing_weight", sa.BigInteger(), nullable=False),
        _jsonb("admission_checks"),
        *_versioned(),
        sa.CheckConstraint(
            "queueing_strategy IN ('BestEffortFIFO', 'StrictFIFO')",
            name=op.f("ck_cluster_queues_queueing_strategy"),
        ),
        sa.CheckConstraint(
            f"stop_policy IN {STOP_POLICIES}", name=op.f("ck_cluster_queues_stop_policy")
        ),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_cluster_queues")),
    )
    op.create_table(
        "resource_groups",
        _text("owner_kind"),
        _text("owner_name"),
        sa.Column("position", sa.Integer(), nullable=False),
        _jsonb("covered_resources"),
        sa.CheckConstraint(
            "owner_kind IN ('ClusterQueue', 'Cohort')", name=op.f("ck_resource_groups_owner_kind")
        ),
        sa.PrimaryKeyConstraint(
            "owner_kind", "owner_name", "position", name=op.f("pk_resource_groups")
        ),
    )
    op.create_table(
        "quotas",
        _text("owner_kind"),
        _text("owner_name"),
        sa.Column("group_position", sa.Integer(), nullable=False),
        sa.Column("flavor_position", sa.Integer(), nullable=False),
        sa.Column("resource_position", sa.Integer(), nullable=False),
        _text("flavor"),
        _text("resource"),
        sa.Column("nominal", sa.BigInteger(), nullable=False),
        sa.Column("borrowing_limit", sa.BigInteger(), nullable=True),
        sa.Column("lending_limit", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["owner_kind", "owner_name", "group_position"],
            [
                "resource_groups.owner_kind",
                "resource_groups.owner_name",
                "resource_groups.position",
            ],
            name=op.f("fk_quotas_owner_kind_owner_name_group_position_resource_groups"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "owner_kind",
            "owner_name",
            "group_position",
            "flavor_position",
            "resource_position",
            name=op.f("pk_quotas"),
        ),
        sa.UniqueConstraint(
            "owner_kind",
            "owner_name",
            "flavor",
            "resource",
            name=op.f("uq_quotas_owner_kind_owner_name_flavor_resource"),
        ),
    )
    op.create_table(
        "local_queues",
        _text("namespace"),
        _text("name"),
        _text("cluster_queue"),
        _text("stop_policy"),
        *_versioned(),
        sa.CheckConstraint(
            f"stop_policy IN {STOP_POLICIES}", name=op.f("ck_local_queues_stop_policy")
        ),
        sa.PrimaryKeyConstraint("namespace", "name", name=op.f("pk_local_queues")),
    )
    op.create_table(
        "priority_classes",
        _text("name"),
        sa.Column("value", sa.BigInteger(), nullable=False),
        _text("description"),
        *_versioned(),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_priority_classes")),
    )
    op.create_table(
        "namespaces",
        _text("name"),
        _jsonb("labels"),
        *_versioned(),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_namespaces")),
    )
    op.create_table(
        "topologies",
        _text("name"),
        _jsonb("levels"),
        *_versioned(),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_topologies")),
    )
    op.create_table(
        "nodes",
        _text("name"),
        _jsonb("labels"),
        _jsonb("taints"),
        _jsonb("capacity"),
        _jsonb("allocatable"),
        sa.Column("unschedulable", sa.Boolean(), nullable=False),
        _jsonb("conditions"),
        _text("health"),
        _at("health_since", now=True),
        *_versioned(),
        sa.CheckConstraint(
            "health IN ('Healthy', 'Degraded', 'Cordoned', 'Repairing', 'Validating')",
            name=op.f("ck_nodes_health"),
        ),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_nodes")),
    )


def _create_workloads() -> None:
    op.create_table(
        "workloads",
        _serial_id(),
        sa.Column("uid", sa.UUID(), server_default=sa.text("gen_random_uuid()"), nullable=False),
        _text("namespace"),
        _text("name"),
        _text("kind"),
        _text("queue_name"),
        _text("cluster_queue", nullable=True),
        sa.Column("priority", sa.BigInteger(), nullable=False),
        _text("priority_class", nullable=True),
        _jsonb("pod_sets"),
        _text("state"),
        sa.Column("active", sa.Boolean(), nullable=False),
        _jsonb("admission", nullable=True),
        _at("created_at"),
        _at("admitted_at", nullable=True),
        _at("finished_at", nullable=True),
        sa.Column("eviction_count", sa.Integer(), nullable=False),
        _jsonb("labels"),
        _jsonb("annotations"),
        _text("reason_code", nullable=True),
        sa.Column(
            "reasons", postgresql.JSONB(), server_default=sa.text("'[]'::jsonb"), nullable=False
        ),
        sa.Column(
            "hints", postgresql.JSONB(), server_default=sa.text("'[]'::jsonb"), nullable=False
        ),
        sa.Column("queue_position", sa.Integer(), nullable=True),
        _at("evaluated_at", nullable=True),
        sa.Column("version", sa.Integer(), server_default=sa.text("1"), nullable=False),
        _at("updated_at", now=True),
        sa.CheckConstraint(
            "state IN ('Pending', 'Admitted', 'Evicting', 'Finished', 'Deactivated')",
            name=op.f("ck_workloads_state"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workloads")),
        sa.UniqueConstraint("uid", name=op.f("uq_workloads_uid")),
    )
    op.create_index("ix_workloads_namespace_name", "workloads", ["namespace", "name"])
    op.create_index(
        "ix_workloads_pending_order",
        "workloads",
        ["state", "cluster_queue", sa.literal_column("priority DESC"), "created_at"],
    )
    op.create_index(
        "ix_workloads_pending_reason",
        "workloads",
        ["cluster_queue", "reason_code"],
        postgresql_where=sa.text("state = 'Pending'"),
    )
    op.create_index(
        "uq_workloads_unfinished_namespace_name",
        "workloads",
        ["namespace", "name"],
        unique=True,
        postgresql_where=sa.text("state <> 'Finished'"),
    )
    op.create_table(
        "wait_reasons",
        _serial_id(),
        *_workload_id("wait_reasons"),
        _text("code"),
        _text("message"),
        _jsonb("details"),
        _at("since"),
        _at("until", nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wait_reasons")),
    )
    op.create_index("ix_wait_reasons_workload_id_since", "wait_reasons", ["workload_id", "since"])
    op.create_index(
        "uq_wait_reasons_open_workload_id",
        "wait_reasons",
        ["workload_id"],
        unique=True,
        postgresql_where=sa.text("until IS NULL"),
    )
    op.create_table(
        "usage_intervals",
        _serial_id(),
        *_workload_id("usage_intervals"),
        _text("cluster_queue"),
        _text("flavor"),
        _text("resource"),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        _at("started_at"),
        _at("ended_at", nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_usage_intervals")),
    )
    op.create_index("ix_usage_intervals_workload_id", "usage_intervals", ["workload_id"])
    op.create_index(
        "ix_usage_intervals_cluster_queue_started_at",
        "usage_intervals",
        ["cluster_queue", "started_at"],
    )
    op.create_table(
        "workload_events",
        _serial_id(),
        *_workload_id("workload_events"),
        _at("at"),
        _text("type"),
        _text("reason", nullable=True),
        _jsonb("details"),
        sa.CheckConstraint(
            "type IN ('Admitted', 'Evicted', 'Finished', 'Requeued')",
            name=op.f("ck_workload_events_type"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workload_events")),
    )
    op.create_index("ix_workload_events_workload_id_at", "workload_events", ["workload_id", "at"])


def _create_audit_log() -> None:
    op.create_table(
        "audit_log",
        _serial_id(),
        _at("at", now=True),
        _text("actor"),
        _text("action"),
        _text("kind"),
        _text("namespace", nullable=True),
        _text("name"),
        _jsonb("before", nullable=True),
        _jsonb("after", nullable=True),
        sa.CheckConstraint(
            "action IN ('create', 'update', 'delete')", name=op.f("ck_audit_log_action")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index("ix_audit_log_kind_name", "audit_log", ["kind", "name"])
    # The audit log is evidence: rewriting or erasing it must fail, not just be discouraged.
    op.execute(
        """
        CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP
                USING ERRCODE = 'insufficient_privilege';
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER audit_log_no_update_or_delete BEFORE UPDATE OR DELETE ON audit_log "
        "FOR EACH ROW EXECUTE FUNCTION audit_log_append_only()"
    )
    op.execute(
        "CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log "
        "FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only()"
    )


def upgrade() -> None:
    _create_objects()
    _create_workloads()
    _create_audit_log()


def downgrade() -> None:
    # Dropping a table drops its indexes and triggers with it.
    for table in (
        "workload_events",
        "usage_intervals",
        "wait_reasons",
        "workloads",
        "audit_log",
        "nodes",
        "topologies",
        "namespaces",
        "priority_classes",
        "local_queues",
        "quotas",
        "resource_groups",
        "cluster_queues",
        "cohorts",
        "resource_flavors",
    ):
        op.drop_table(table)
    op.execute("DROP FUNCTION audit_log_append_only()")
