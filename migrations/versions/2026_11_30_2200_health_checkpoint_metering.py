"""node health and repair, checkpoint-aware preemption, metering

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30 22:00:00+00:00

One revision for the health/topology/checkpoint issue, in three sections (one per part) so
that each part's schema change and its reversal sit side by side.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa  # noqa: F401  (used by the sections as they grow)
from alembic import op  # noqa: F401

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    _upgrade_health()
    _upgrade_checkpoint()
    _upgrade_metering()


def downgrade() -> None:
    _downgrade_metering()
    _downgrade_checkpoint()
    _downgrade_health()


# --- node health and repair workflow ---------------------------------------------------


def _upgrade_health() -> None:
    pass


def _downgrade_health() -> None:
    pass


# --- checkpoint-aware preemption -------------------------------------------------------


def _upgrade_checkpoint() -> None:
    pass


def _downgrade_checkpoint() -> None:
    pass


# --- metering and reclamation ----------------------------------------------------------


def _upgrade_metering() -> None:
    pass


def _downgrade_metering() -> None:
    pass
