"""The embedded PostgreSQL never widens folder permissions behind the user's back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from berth.embedded import EmbeddedPostgres, closed_parents, default_home
from quota.core.errors import EmbeddedPostgresError


def test_finds_parents_other_users_cannot_traverse(tmp_path: Path) -> None:
    closed = tmp_path / "private"
    inner = closed / "open" / "data"
    inner.mkdir(parents=True)
    closed.chmod(0o700)
    (closed / "open").chmod(0o755)
    assert closed in closed_parents(inner)
    assert closed / "open" not in closed_parents(inner)


@pytest.mark.skipif(os.geteuid() != 0, reason="the permission check only matters when run as root")
def test_refuses_a_home_below_a_closed_folder_and_changes_nothing(tmp_path: Path) -> None:
    closed = tmp_path / "private"
    closed.mkdir(mode=0o700)
    closed.chmod(0o700)
    server = EmbeddedPostgres(closed / "berth")
    with pytest.raises(EmbeddedPostgresError) as error:
        server.prepare()
    assert str(closed) in error.value.message
    assert "BERTH_HOME" in error.value.message
    assert closed.stat().st_mode & 0o777 == 0o700, "the closed folder was widened"


def test_root_keeps_its_data_outside_home_folders() -> None:
    expected = Path("/var/lib/berth") if os.geteuid() == 0 else Path.home() / ".local/share/berth"
    assert default_home() == expected
