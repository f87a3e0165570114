"""The ledger's tables (SQLAlchemy 2 declarative); the initial migration creates exactly these.

Quantities are BIGINT milli-units, or JSONB objects of integer milli-units; never floats.
Structured Kubernetes values (taints, selectors, pod sets) are JSONB in their manifest
spelling (camelCase), written and read by ``quota.ledger_codec``.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    Text,
    UniqueConstraint,
    func,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from quota.core.metering import IntervalEnd
from quota.core.model import NodeHealth, QueueingStrategy, StopPolicy
from quota.core.workload import WorkloadState

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Owners of resource groups: quota hangs off a ClusterQueue or a Cohort.
OWNER_KINDS = ("ClusterQueue", "Cohort")
AUDIT_ACTIONS = ("create", "update", "delete")
EVENT_TYPES = (
    "Admitted", "Evicted", "Finished", "Requeued", "Checkpointed", "PodsReady", "PodsNotReady",
    "QuotaReserved", "CheckChanged",
)  # fmt: skip


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: DateTime(timezone=True),
        dict[str, Any]: JSONB(none_as_null=True),
        list[Any]: JSONB(none_as_null=True),
        str: Text(),
        int: BigInteger(),
    }


def _one_of(column: str, values: tuple[str, ...], name: str) -> CheckConstraint:
    allowed = ", ".join(f"'{value}'" for value in values)
    return CheckConstraint(f"{column} IN ({allowed})", name=name)


def _values(
    enum: type[QueueingStrategy | StopPolicy | NodeHealth | WorkloadState | IntervalEnd],
) -> tuple[str, ...]:
    return tuple(str(member) for member in enum)


class Versioned:
    """Columns every object table carries: an optimistic-concurrency version and timestamps."""

    version: Mapped[int] = mapped_column(Integer, server_default=text("1"))
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now())


class ResourceFlavorRow(Versioned, Base):
    __tablename__ = "resource_flavors"

    name: Mapped[str] = mapped_column(primary_key=True)
    node_labels: Mapped[dict[str, Any]]
    node_taints: Mapped[list[Any]]
    tolerations: Mapped[list[Any]]
    topology_name: Mapped[str | None]
    # ``berth.dev/price-per-hour``: {resource: {price: decimal text, per: milli-units}}.
    prices: Mapped[dict[str, Any]] = mapped_column(server_default=text("'{}'::jsonb"))
    min_priority: Mapped[int | None] = mapped_column(Integer)  # ``berth.dev/min-priority``


class CohortRow(Versioned, Base):
    __tablename__ = "cohorts"

    name: Mapped[str] = mapped_column(primary_key=True)
    parent: Mapped[str | None]
    fair_sharing_weight: Mapped[int]  # milli-units


class ClusterQueueRow(Versioned, Base):
    __tablename__ = "cluster_queues"
    __table_args__ = (
        _one_of("queueing_strategy", _values(QueueingStrategy), "queueing_strategy"),
        _one_of("stop_policy", _values(StopPolicy), "stop_policy"),
    )

    name: Mapped[str] = mapped_column(primary_key=True)
    # No foreign keys to cohorts or flavors: Kueue lets a queue name them before they exist.
    cohort: Mapped[str | None]
    queueing_strategy: Mapped[str]
    preemption: Mapped[dict[str, Any]]
    flavor_fungibility: Mapped[dict[str, Any]]
    stop_policy: Mapped[str]
    namespace_selector: Mapped[dict[str, Any] | None]  # NULL selects no namespace
    fair_sharing_weight: Mapped[int]  # milli-units
    admission_checks: Mapped[list[Any]]
    # admissionScope UsageBasedAdmissionFairSharing
    usage_based_admission: Mapped[bool] = mapped_column(server_default=text("false"))
    min_runtime_seconds: Mapped[int | None] = mapped_column(Integer)  # berth.dev/min-runtime


class ResourceGroupRow(Base):
    """One resource group of a ClusterQueue or Cohort, in declaration order (``position``)."""

    __tablename__ = "resource_groups"
    __table_args__ = (_one_of("owner_kind", OWNER_KINDS, "owner_kind"),)

    owner_kind: Mapped[str] = mapped_column(primary_key=True)
    owner_name: Mapped[str] = mapped_column(primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    covered_resources: Mapped[list[Any]]  # resource names, in order


class QuotaRow(Base):
    """Quota of one resource in one flavor of a group; positions keep manifest order exactly."""

    __tablename__ = "quotas"
    __table_args__ = (
        ForeignKeyConstraint(
            ["owner_kind", "owner_name", "group_position"],
            [
                "resource_groups.owner_kind",
                "resource_groups.owner_name",
                "resource_groups.position",
            ],
            ondelete="CASCADE",
        ),
        # Kueue: a flavor appears in one group only, a resource is covered once per flavor.
        UniqueConstraint("owner_kind", "owner_name", "flavor", "resource"),
    )

    owner_kind: Mapped[str] = mapped_column(primary_key=True)
    owner_name: Mapped[str] = mapped_column(primary_key=True)
    group_position: Mapped[int] = mapped_column(Integer, primary_key=True)
    flavor_position: Mapped[int] = mapped_column(Integer, primary_key=True)
    resource_position: Mapped[int] = mapped_column(Integer, primary_key=True)
    flavor: Mapped[str]
    resource: Mapped[str]
    nominal: Mapped[int]
    borrowing_limit: Mapped[int | None]  # NULL: unlimited
    lending_limit: Mapped[int | None]  # NULL: unlimited


class LocalQueueRow(Versioned, Base):
    __tablename__ = "local_queues"
    __table_args__ = (_one_of("stop_policy", _values(StopPolicy), "stop_policy"),)

    namespace: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(primary_key=True)
    cluster_queue: Mapped[str]
    stop_policy: Mapped[str]
    fair_sharing_weight: Mapped[int] = mapped_column(BigInteger, server_default=text("1000"))


class PriorityClassRow(Versioned, Base):
    __tablename__ = "priority_classes"

    name: Mapped[str] = mapped_column(primary_key=True)
    value: Mapped[int]
    description: Mapped[str]
    min_runtime_seconds: Mapped[int | None] = mapped_column(Integer)  # berth.dev/min-runtime


class NamespaceRow(Versioned, Base):
    __tablename__ = "namespaces"

    name: Mapped[str] = mapped_column(primary_key=True)
    labels: Mapped[dict[str, Any]]


class TopologyRow(Versioned, Base):
    __tablename__ = "topologies"

    name: Mapped[str] = mapped_column(primary_key=True)
    levels: Mapped[list[Any]]  # node label keys, outermost first


class AdmissionCheckRow(Versioned, Base):
    __tablename__ = "admission_checks"

    name: Mapped[str] = mapped_column(primary_key=True)
    controller_name: Mapped[str]
    parameters: Mapped[dict[str, Any] | None]  # {apiGroup, kind, name}


class ProvisioningRequestConfigRow(Versioned, Base):
    __tablename__ = "provisioning_request_configs"

    name: Mapped[str] = mapped_column(primary_key=True)
    spec: Mapped[dict[str, Any]]  # the manifest's spec, every default written out


class NodeRow(Versioned, Base):
    __tablename__ = "nodes"
    __table_args__ = (_one_of("health", _values(NodeHealth), "health"),)

    name: Mapped[str] = mapped_column(primary_key=True)
    labels: Mapped[dict[str, Any]]
    taints: Mapped[list[Any]]
    capacity: Mapped[dict[str, Any]]  # resource -> milli-units
    allocatable: Mapped[dict[str, Any]]  # resource -> milli-units
    unschedulable: Mapped[bool]
    conditions: Mapped[list[Any]]
    health: Mapped[str]
    # Maintained by the ledger: when ``health`` last changed, for repair/validation timers.
    health_since: Mapped[datetime] = mapped_column(server_default=func.now())


class NodeHealthTransitionRow(Base):
    """A node's health history: one row per change of state, with who and why."""

    __tablename__ = "node_health_transitions"
    __table_args__ = (
        _one_of("from_state", _values(NodeHealth), "from_state"),
        _one_of("to_state", _values(NodeHealth), "to_state"),
        Index("ix_node_health_transitions_node_at", "node", "at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    # No foreign key: the history outlives a node deleted from the inventory.
    node: Mapped[str]
    from_state: Mapped[str | None]  # NULL: the node entered the inventory in ``to_state``
    to_state: Mapped[str]
    why: Mapped[str]
    actor: Mapped[str]
    at: Mapped[datetime]


class WorkloadRow(Base):
    """A workload; a finished one stays as history, so (namespace, name) is unique only among
    unfinished rows and ``uid`` tells apart a name reused after its predecessor finished."""

    __tablename__ = "workloads"
    __table_args__ = (
        _one_of("state", _values(WorkloadState), "state"),
        Index(
            "uq_workloads_unfinished_namespace_name",
            "namespace",
            "name",
            unique=True,
            postgresql_where=text("state <> 'Finished'"),
        ),
        Index("ix_workloads_namespace_name", "namespace", "name"),
        Index(
            "ix_workloads_pending_order",
            "state",
            "cluster_queue",
            text("priority DESC"),
            "created_at",
        ),
        Index(
            "ix_workloads_pending_reason",
            "cluster_queue",
            "reason_code",
            postgresql_where=text("state = 'Pending'"),
        ),
        Index("ix_workloads_change_xid", "change_xid"),
        # The read API's lookups (see migration 0003).
        Index(
            "ix_workloads_pending_queue_position",
            "namespace",
            "queue_name",
            "queue_position",
            postgresql_where=text("state = 'Pending'"),
        ),
        Index(
            "ix_workloads_pending_local_reason",
            "namespace",
            "queue_name",
            "reason_code",
            postgresql_where=text("state = 'Pending' AND cluster_queue IS NULL"),
        ),
        Index(
            "ix_workloads_finished_runs",
            "cluster_queue",
            "finished_at",
            "admitted_at",
            postgresql_where=text("state = 'Finished'"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    uid: Mapped[uuid.UUID] = mapped_column(
        UUID(as_uuid=True), unique=True, server_default=text("gen_random_uuid()")
    )
    namespace: Mapped[str]
    name: Mapped[str]
    kind: Mapped[str]
    queue_name: Mapped[str]
    cluster_queue: Mapped[str | None]  # resolved at admission
    priority: Mapped[int]
    priority_class: Mapped[str | None]
    pod_sets: Mapped[list[Any]]
    state: Mapped[str]
    active: Mapped[bool]
    admission: Mapped[dict[str, Any] | None]
    # The workload's own creation time: FIFO order, unless its last eviction counts
    # instead (``pending_order_by``).
    created_at: Mapped[datetime]
    admitted_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    eviction_count: Mapped[int] = mapped_column(Integer)
    labels: Mapped[dict[str, Any]]
    annotations: Mapped[dict[str, Any]]
    # The engine's latest verdict on a pending workload (written by the admission loop):
    # the primary reason's code for grouping, every reason with details, hints, and the
    # 1-based place in its ClusterQueue's pending order.
    reason_code: Mapped[str | None]
    reasons: Mapped[list[Any]] = mapped_column(server_default=text("'[]'::jsonb"))
    hints: Mapped[list[Any]] = mapped_column(server_default=text("'[]'::jsonb"))
    queue_position: Mapped[int | None] = mapped_column(Integer)
    evaluated_at: Mapped[datetime | None]
    version: Mapped[int] = mapped_column(Integer, server_default=text("1"))
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now())
    # When it was last evicted (NULL once admitted again): a checkpointing victim's grace
    # runs from here, and a requeued workload may queue from it (``pending_order_by``).
    evicted_at: Mapped[datetime | None]
    # Why it was last evicted: a checkpointing victim's usage is closed with it later, and
    # it says whether ``evicted_at`` orders the queue.
    eviction_reason: Mapped[str | None]
    # waitForPodsReady: its pods' readiness while admitted (quota.core.pods_ready.Readiness)
    # and since when; requeues after PodsReadyTimeout and when the backoff ends (also the
    # end of an admission check's Retry backoff); why Berth deactivated it
    # (WorkloadRequeuingLimitExceeded), NULL when an admin did or it is active.
    readiness: Mapped[str] = mapped_column(server_default=text("'WaitForStart'"))
    readiness_since: Mapped[datetime | None]
    requeue_count: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    requeue_at: Mapped[datetime | None]
    deactivation: Mapped[str | None]
    # Its admission checks' states while it reserves quota ([{name, state, message, ...}]).
    admission_checks: Mapped[list[Any]] = mapped_column(server_default=text("'[]'::jsonb"))
    # The transaction that last wrote the row (set by a trigger): the loop reloads only
    # rows written since it last looked.
    change_xid: Mapped[int] = mapped_column(server_default=text("0"))


class WaitReasonRow(Base):
    """The reason timeline: one row per primary reason a workload had; open while current."""

    __tablename__ = "wait_reasons"
    __table_args__ = (
        Index("ix_wait_reasons_workload_id_since", "workload_id", "since"),
        Index(
            "uq_wait_reasons_open_workload_id",
            "workload_id",
            unique=True,
            postgresql_where=text("until IS NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    workload_id: Mapped[int] = mapped_column(ForeignKey("workloads.id", ondelete="CASCADE"))
    code: Mapped[str]
    message: Mapped[str]
    details: Mapped[dict[str, Any]]
    since: Mapped[datetime]
    until: Mapped[datetime | None]


class AuditRow(Base):
    """Who changed what: append-only (the migration installs a trigger refusing UPDATE/DELETE)."""

    __tablename__ = "audit_log"
    __table_args__ = (
        _one_of("action", AUDIT_ACTIONS, "action"),
        Index("ix_audit_log_kind_name", "kind", "name"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(server_default=func.now())
    actor: Mapped[str]
    action: Mapped[str]
    kind: Mapped[str]
    namespace: Mapped[str | None]
    name: Mapped[str]
    before: Mapped[dict[str, Any] | None]
    after: Mapped[dict[str, Any] | None]


class UsageIntervalRow(Base):
    """Metering: a workload held ``amount`` of a resource in a flavor from start until end."""

    __tablename__ = "usage_intervals"
    __table_args__ = (
        Index("ix_usage_intervals_workload_id", "workload_id"),
        Index("ix_usage_intervals_cluster_queue_started_at", "cluster_queue", "started_at"),
        Index(
            "ix_usage_intervals_open",
            "cluster_queue",
            "flavor",
            "resource",
            "amount",
            postgresql_where=text("ended_at IS NULL"),
        ),
        _one_of("end_reason", _values(IntervalEnd), "end_reason"),
        Index("ix_usage_intervals_ended_at", "ended_at"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    workload_id: Mapped[int] = mapped_column(ForeignKey("workloads.id", ondelete="CASCADE"))
    cluster_queue: Mapped[str]
    flavor: Mapped[str]
    resource: Mapped[str]
    amount: Mapped[int]  # milli-units
    started_at: Mapped[datetime]
    ended_at: Mapped[datetime | None]  # NULL: still held
    end_reason: Mapped[str | None]  # an IntervalEnd; NULL while held
    # Set when an eviction ended it: the unsaved work ran from here (last checkpoint or start).
    lost_from: Mapped[datetime | None]
    # A PodsReadyTimeout whose pods were on a node Berth marked unhealthy: the lost time is
    # the hardware's, not charged to the tenant (as for a NodeUnhealthy eviction).
    node_fault: Mapped[bool] = mapped_column(server_default=text("false"))


class WorkloadEventRow(Base):
    __tablename__ = "workload_events"
    __table_args__ = (
        _one_of("type", EVENT_TYPES, "type"),
        Index("ix_workload_events_workload_id_at", "workload_id", "at"),
        # What node faults displaced (node history, dashboard): few rows among many.
        Index(
            "ix_workload_events_node_unhealthy",
            "at",
            postgresql_where=text("reason = 'NodeUnhealthy'"),
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    workload_id: Mapped[int] = mapped_column(ForeignKey("workloads.id", ondelete="CASCADE"))
    at: Mapped[datetime]
    type: Mapped[str]
    reason: Mapped[str | None]
    details: Mapped[dict[str, Any]]


class ObjectChangeRow(Base):
    """Per object table, the last transaction that wrote it (maintained by triggers)."""

    __tablename__ = "object_changes"

    table_name: Mapped[str] = mapped_column(primary_key=True)
    change_xid: Mapped[int]


class LoopLeaderRow(Base):
    """The admission loop's fencing term (a new leader bumps it, every cycle checks it) and
    the leader's lease (admission.leader: who holds it, its connection, when it ends)."""

    __tablename__ = "loop_leader"
    __table_args__ = (CheckConstraint("id = 1", name="single_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    term: Mapped[int]
    holder: Mapped[str]
    since: Mapped[datetime]
    holder_pid: Mapped[int | None] = mapped_column(Integer)
    lease_expires: Mapped[datetime | None]
