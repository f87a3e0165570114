"""What ``/readyz`` checks for ``berth serve``: the ledger answers at the newest migration
and, on a replica that runs the admission loop, a live leader exists (this replica or
another): a follower that cannot see one is not ready, so a stuck or lost leader shows."""

from __future__ import annotations

import time
from collections.abc import Callable

import sqlalchemy as sa

from admission.loop.leader import CHECK_TIMEOUT, Leadership
from api.deps import Readiness
from berth import migrate
from berth.database import Database

STALE_AFTER = 3 * CHECK_TIMEOUT  # seconds without a look at the lease: the runner is stuck


class ReadinessCheck:
    """Database reachable, schema at the newest migration, a leader in sight."""

    def __init__(
        self, database: Database, *, monotonic: Callable[[], float] = time.monotonic
    ) -> None:
        self.database = database
        self.head = migrate.head()
        self.leadership: Leadership | None = None  # set once the loop runs on this replica
        self.monotonic = monotonic

    def __call__(self) -> Readiness:
        try:
            with self.database.engine.connect() as connection:
                at = connection.execute(sa.text("SELECT version_num FROM alembic_version"))
                revision = at.scalar_one_or_none()
        except sa.exc.SQLAlchemyError as exc:
            return Readiness(False, f"database unreachable: {exc}")
        if revision != self.head:
            return Readiness(False, "database schema is not at the newest migration")
        if self.leadership is None:
            return Readiness(True, self.database.description)
        return self._leader()

    def _leader(self) -> Readiness:
        assert self.leadership is not None
        view = self.leadership.view()
        if view.leading:
            return Readiness(True, f"{self.database.description}; leading the admission loop")
        if view.seen_at is None:
            return Readiness(False, "no leader yet: this replica has not looked at the lease")
        age = self.monotonic() - view.seen_at
        if age > STALE_AFTER:
            return Readiness(False, f"this replica has not looked at the leader lease for "
                                    f"{age:.0f}s (its admission runner is stuck)")
        if view.error is not None or not view.live:
            return Readiness(False, f"no live leader: {view.why_not()}")
        return Readiness(True, f"{self.database.description}; following leader {view.holder}")
