"""leader lease: the loop's leadership expires unless the leader's loop renews it

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 12:00:00+00:00

A session advisory lock stays held by a leader that is alive but stuck (a frozen process
keeps its connection), so nothing was ever admitted again. The lease in ``loop_leader`` is
renewed by the loop itself and ends on the database's clock; ``holder_pid`` names the
backend of the holder's lease connection, so a crashed holder is replaced at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("loop_leader", sa.Column("holder_pid", sa.Integer(), nullable=True))
    op.add_column(
        "loop_leader", sa.Column("lease_expires", sa.DateTime(timezone=True), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("loop_leader", "lease_expires")
    op.drop_column("loop_leader", "holder_pid")
