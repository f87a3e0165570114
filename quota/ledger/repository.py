"""The ledger repository: every query over the ledger's tables, on a caller-owned session.

The ledger never commits: the caller's transaction (one per request, one per admission
cycle) decides. Every real change of an object writes an audit row in the same transaction.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, Table, delete, func, insert, select, update
from sqlalchemy.orm import Session

from quota.core.errors import Conflict, InvalidInput, NotFound, Problem
from quota.core.model import ClusterQueue, Cohort, Node, NodeHealth, ResourceGroup
from quota.core.pods_ready import RequeuingTimestamp
from quota.core.workload import Workload, WorkloadState
from quota.ledger.audit import AuditEntry, write_audit
from quota.ledger.errors import translated
from quota.ledger.nodes import record_transition
from quota.ledger.objects import (
    KINDS,
    KindSpec,
    LedgerObject,
    Row,
    delete_groups,
    groups_json,
    read_groups,
    spec_of,
    table_of,
    write_groups,
)
from quota.ledger.schema import AuditRow
from quota.ledger.workloads import (
    WORKLOADS,
    audit_json,
    change_values,
    current_id,
    from_workload_row,
    pending_order_by,
    workload_row,
)
from quota.manifests.kinds import HEALTH_ANNOTATION

__all__ = ["Ledger", "LedgerObject"]

_AUDIT = table_of(AuditRow)
WORKLOAD_KIND = "Workload"


class Ledger:
    """Reads and writes the ledger through ``session``; never commits."""

    def __init__(self, session: Session) -> None:
        self.session = session

    # -- objects ---------------------------------------------------------------------------

    @translated
    def upsert(self, obj: LedgerObject, *, actor: str, expected_version: int | None = None) -> str:
        """Create or replace ``obj``: ``"created"``, ``"configured"`` or ``"unchanged"``.

        With ``expected_version``, ``Conflict`` unless the stored object is at that version.
        """
        spec = spec_of(obj)
        if spec is None:
            raise TypeError(f"the ledger does not store {type(obj).__name__} objects")
        row = spec.to_row(obj)
        key = tuple(row[column] for column in spec.key_columns)
        stored = self._load(spec, key, for_update=True)
        found = None if stored is None else stored[1]
        if expected_version is not None and found != expected_version:
            at = "does not exist" if found is None else f"is at version {found}"
            raise Conflict(
                f"{spec.kind} {'/'.join(key)} {at}, not {expected_version}: reload and retry"
            )
        if stored is None:
            self.session.execute(insert(spec.table).values(**row))
            if isinstance(obj, Node) and obj.health is not NodeHealth.HEALTHY:
                _health_set(self.session, obj, None, actor)
            if spec.has_groups:
                write_groups(self.session, spec.kind, row["name"], _groups(obj))
            self._audit(actor, "create", spec, row, before=None, after=_snapshot(spec, obj, 1))
            return "created"
        before, version = stored
        if before == obj:
            return "unchanged"
        values: dict[str, Any] = {
            **row,
            "version": spec.table.c.version + 1,
            "updated_at": func.now(),
        }
        if isinstance(before, Node) and isinstance(obj, Node) and obj.health != before.health:
            values["health_since"] = func.now()
            _health_set(self.session, obj, before.health, actor)
        self.session.execute(update(spec.table).where(*_match(spec, key)).values(**values))
        if spec.has_groups:
            write_groups(self.session, spec.kind, row["name"], _groups(obj))
        self._audit(
            actor,
            "update",
            spec,
            row,
            before=_snapshot(spec, before, version),
            after=_snapshot(spec, obj, version + 1),
        )
        return "configured"

    @translated
    def delete(self, kind: str, name: str, namespace: str | None = None, *, actor: str) -> bool:
        """Delete one object; ``False`` when there was none."""
        spec, key = _spec_and_key(kind, name, namespace)
        stored = self._load(spec, key, for_update=True)
        if stored is None:
            return False
        before, version = stored
        if spec.has_groups:
            delete_groups(self.session, spec.kind, name)
        self.session.execute(delete(spec.table).where(*_match(spec, key)))
        row = spec.to_row(before)
        self._audit(actor, "delete", spec, row, before=_snapshot(spec, before, version), after=None)
        return True

    @translated
    def get(self, kind: str, name: str, namespace: str | None = None) -> LedgerObject | None:
        """One object by kind and name (and namespace for LocalQueue), or ``None``."""
        spec, key = _spec_and_key(kind, name, namespace)
        stored = self._load(spec, key, for_update=False)
        return None if stored is None else stored[0]

    @translated
    def list(self, kind: str) -> builtins.list[LedgerObject]:
        """Every object of ``kind``, ordered by (namespace and) name."""
        spec = _spec(kind)
        order = [spec.table.c[column] for column in spec.key_columns]
        rows = self.session.execute(select(spec.table).order_by(*order)).mappings().all()
        groups = read_groups(self.session, spec.kind) if spec.has_groups else {}
        return [spec.from_row(row, groups.get(row["name"], ())) for row in rows]

    @translated
    def version(self, kind: str, name: str, namespace: str | None = None) -> int | None:
        """The stored version of an object (or of a workload, kind ``"Workload"``)."""
        if kind == WORKLOAD_KIND:
            if namespace is None:
                raise _needs_namespace(kind)
            found = self.session.execute(
                select(WORKLOADS.c.version).where(
                    WORKLOADS.c.id == current_id(namespace, name).scalar_subquery()
                )
            ).scalar_one_or_none()
            return found
        spec, key = _spec_and_key(kind, name, namespace)
        query = select(spec.table.c.version).where(*_match(spec, key))
        result: int | None = self.session.execute(query).scalar_one_or_none()
        return result

    def _load(
        self, spec: KindSpec, key: tuple[str, ...], *, for_update: bool
    ) -> tuple[LedgerObject, int] | None:
        query = select(spec.table).where(*_match(spec, key))
        if for_update:
            query = query.with_for_update()
        row = self.session.execute(query).mappings().one_or_none()
        if row is None:
            return None
        groups = read_groups(self.session, spec.kind, [row["name"]]) if spec.has_groups else {}
        return spec.from_row(row, groups.get(row["name"], ())), row["version"]

    # -- workloads -------------------------------------------------------------------------

    @translated
    def add_workload(self, workload: Workload, *, actor: str) -> int:
        """Record a new workload; its id. ``Conflict`` if an unfinished one has the name."""
        row = workload_row(workload)
        values: dict[str, Any] = dict(row)
        if workload.state == WorkloadState.FINISHED:
            values["finished_at"] = func.now()
        new_id: int = self.session.execute(
            insert(WORKLOADS).values(**values).returning(WORKLOADS.c.id)
        ).scalar_one()
        write_audit(self.session, actor, [AuditEntry(
            "create", WORKLOAD_KIND, workload.namespace, workload.name, None, audit_json(row, 1),
        )])  # fmt: skip
        return new_id

    @translated
    def get_workload(self, namespace: str, name: str) -> Workload | None:
        """The workload a name means now: the unfinished one, else the latest finished one."""
        row = (
            self.session.execute(
                select(WORKLOADS).where(
                    WORKLOADS.c.id == current_id(namespace, name).scalar_subquery()
                )
            )
            .mappings()
            .one_or_none()
        )
        return None if row is None else from_workload_row(row)

    @translated
    def list_workloads(
        self,
        states: Iterable[WorkloadState] | None = None,
        *,
        namespace: str | None = None,
        cluster_queue: str | None = None,
        timestamp: RequeuingTimestamp = RequeuingTimestamp.EVICTION,
    ) -> builtins.list[Workload]:
        """Workloads in ``states`` (all when ``None``), in pending order (``pending_order``,
        requeued ones by ``timestamp``: waitForPodsReady's, Kueue's default Eviction)."""
        query = select(WORKLOADS)
        if states is not None:
            query = query.where(WORKLOADS.c.state.in_([str(s) for s in states]))
        if namespace is not None:
            query = query.where(WORKLOADS.c.namespace == namespace)
        if cluster_queue is not None:
            query = query.where(WORKLOADS.c.cluster_queue == cluster_queue)
        query = query.order_by(*pending_order_by(timestamp))
        return [from_workload_row(row) for row in self.session.execute(query).mappings()]

    @translated
    def set_workload_state(
        self, namespace: str, name: str, expected_version: int, **changes: object
    ) -> bool:
        """Change a workload only if it is still at ``expected_version``; ``False`` if stale.

        Accepts the ``Workload`` field names plus ``finished_at`` and ``cluster_queue``.
        Finishing without ``finished_at`` stamps the transaction time.
        """
        values = change_values(changes)
        result = self.session.execute(
            update(WORKLOADS)
            .where(
                WORKLOADS.c.id == current_id(namespace, name).scalar_subquery(),
                WORKLOADS.c.version == expected_version,
            )
            .values(**values)
        )
        return cast("CursorResult[Any]", result).rowcount == 1

    # -- audit -----------------------------------------------------------------------------

    @translated
    def audit_entries(
        self, kind: str | None = None, name: str | None = None
    ) -> builtins.list[dict[str, Any]]:
        """Audit rows, oldest first, optionally of one kind and/or name."""
        query = select(_AUDIT).order_by(_AUDIT.c.id)
        if kind is not None:
            query = query.where(_AUDIT.c.kind == kind)
        if name is not None:
            query = query.where(_AUDIT.c.name == name)
        return [dict(row) for row in self.session.execute(query).mappings()]

    def _audit(
        self,
        actor: str,
        action: str,
        spec: KindSpec,
        row: Row,
        *,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
    ) -> None:
        namespace = row["namespace"] if spec.namespaced else None
        entry = AuditEntry(action, spec.kind, namespace, row["name"], before, after)
        write_audit(self.session, actor, [entry])


def _health_set(session: Session, node: Node, before: NodeHealth | None, actor: str) -> None:
    why = f"set by manifest annotation {HEALTH_ANNOTATION}"
    record_transition(session, node.name, before, node.health, why=why, actor=actor)


def _spec(kind: str) -> KindSpec:
    spec = KINDS.get(kind)
    if spec is None:
        choices = ", ".join(KINDS)
        raise NotFound(f"unknown kind {kind!r}; expected one of: {choices}", field="kind")
    return spec


def _needs_namespace(kind: str) -> InvalidInput:
    return InvalidInput(
        [Problem(f"{kind} is namespaced: a namespace is required", field="namespace")]
    )


def _spec_and_key(kind: str, name: str, namespace: str | None) -> tuple[KindSpec, tuple[str, ...]]:
    spec = _spec(kind)
    if spec.namespaced:
        if not namespace:
            raise _needs_namespace(kind)
        return spec, (namespace, name)
    if namespace:
        problem = Problem(f"{kind} is cluster-scoped: it has no namespace", field="namespace")
        raise InvalidInput([problem])
    return spec, (name,)


def _match(spec: KindSpec, key: tuple[str, ...]) -> builtins.list[ColumnElement[bool]]:
    table: Table = spec.table
    return [table.c[column] == value for column, value in zip(spec.key_columns, key, strict=True)]


def _snapshot(spec: KindSpec, obj: LedgerObject, version: int) -> dict[str, Any]:
    """The stored form of ``obj`` for the audit log: its row, its version, its quota."""
    snapshot: dict[str, Any] = {**spec.to_row(obj), "version": version}
    if spec.has_groups:
        snapshot["resource_groups"] = groups_json(_groups(obj))
    return snapshot


def _groups(obj: LedgerObject) -> tuple[ResourceGroup, ...]:
    return obj.resource_groups if isinstance(obj, ClusterQueue | Cohort) else ()
