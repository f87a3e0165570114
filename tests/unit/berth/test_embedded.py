"""The embedded PostgreSQL never widens folder permissions behind the user's back, keeps the
wheel's lock in a folder of the user's own, and explains every refusal with path, owner and
mode."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from berth.embedded import EmbeddedPostgres, default_home
from berth.embedded_files import closed_parents, private_install, prune_installs, runtime_dir
from quota.core.errors import EmbeddedPostgresError

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root's server runs as 'pgserver'")


@pytest.mark.parametrize(
    ("mode", "closed"),
    [
        pytest.param(0o700, True, id="a private folder blocks the system user"),
        pytest.param(0o711, True, id="traversable but the wheel would add g+rx,o+rx"),
        pytest.param(0o755, False, id="an open folder is fine"),
    ],
)
def test_finds_parents_the_wheel_would_widen(tmp_path: Path, mode: int, closed: bool) -> None:
    folder = tmp_path / "folder"
    inner = folder / "open" / "data"
    inner.mkdir(parents=True)
    folder.chmod(mode)
    (folder / "open").chmod(0o755)
    assert (folder in closed_parents(inner)) is closed
    assert folder / "open" not in closed_parents(inner)


@as_root
def test_refuses_a_home_below_a_closed_folder_and_changes_nothing(tmp_path: Path) -> None:
    closed = tmp_path / "private"
    closed.mkdir()
    closed.chmod(0o700)
    server = EmbeddedPostgres(closed / "berth")
    with pytest.raises(EmbeddedPostgresError) as error:
        server.prepare()
    assert f"{closed} (owner root, mode 700)" in error.value.message
    assert "BERTH_HOME" in error.value.message and "unset it for the default" in error.value.message
    assert closed.stat().st_mode & 0o777 == 0o700, "the closed folder was widened"


def test_root_keeps_its_data_outside_home_folders() -> None:
    expected = Path("/var/lib/berth") if os.geteuid() == 0 else Path.home() / ".local/share/berth"
    assert default_home() == expected


def test_the_wheels_lock_lives_in_a_folder_of_the_users_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    folder = runtime_dir()
    assert folder == tmp_path / f"berth-{os.geteuid()}"
    assert folder.stat().st_uid == os.geteuid()
    assert folder.stat().st_mode & 0o777 == (0o755 if os.geteuid() == 0 else 0o700)


def test_refuses_a_lock_folder_someone_else_put_in_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    squatted = tmp_path / f"berth-{os.geteuid()}"
    squatted.symlink_to(tmp_path)  # not a folder of the user's own: a link elsewhere
    with pytest.raises(EmbeddedPostgresError) as error:
        runtime_dir()
    assert f"{squatted} (owner " in error.value.message and ", mode " in error.value.message
    assert "XDG_RUNTIME_DIR" in error.value.message


def _fake_wheel(root: Path) -> Path:
    """A wheel's layout: package/pginstall/{bin,lib,share} beside package.libs."""
    install = root / "site" / "pkg" / "pginstall"
    for part in ("bin", "lib", "share"):
        (install / part).mkdir(parents=True)
    (install / "bin" / "initdb").write_text("#!/bin/sh\n")
    (install / "bin" / "initdb").chmod(0o700)  # as under umask 077
    (install / "share" / "postgres.bki").write_text("data")
    (install / "share" / "postgres.bki").chmod(0o600)
    (root / "site" / "pkg.libs").mkdir()
    (root / "site" / "pkg.libs" / "libpq.so").write_text("lib")
    return install / "bin"


def test_root_copy_keeps_the_wheels_layout_and_is_readable_by_all(tmp_path: Path) -> None:
    source = _fake_wheel(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    copy = private_install(source, home, "1.0-pg18")
    assert copy == home / "postgres" / "1.0-pg18" / "pkg" / "pginstall" / "bin"
    # the binaries find bundled libraries through $ORIGIN/../../../pkg.libs
    assert (copy / ".." / ".." / ".." / "pkg.libs" / "libpq.so").resolve().is_file()
    assert (copy / "initdb").stat().st_mode & 0o777 == 0o755
    assert (copy.parent / "share" / "postgres.bki").stat().st_mode & 0o777 == 0o644
    assert (source / "initdb").stat().st_mode & 0o777 == 0o700, "the wheel's own files changed"


def test_root_copy_is_made_once_per_version_and_old_ones_pruned(tmp_path: Path) -> None:
    source = _fake_wheel(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    first = private_install(source, home, "1.0-pg18")
    (first / "marker").write_text("kept")
    assert private_install(source, home, "1.0-pg18") == first
    assert (first / "marker").exists(), "an existing copy was made again"
    second = private_install(source, home, "1.1-pg18")
    prune_installs(home, keep="1.1-pg18")
    assert sorted(p.name for p in (home / "postgres").iterdir()) == ["1.1-pg18"]
    assert second.is_dir()


@pytest.mark.parametrize(
    ("error", "says", "never"),
    [
        pytest.param(
            PermissionError(13, "Permission denied", b"LOCK"),
            ["LOCK (owner ", ", mode 644)", "BERTH_HOME"], "log",
            id="a file of another user names the file, its owner and mode",
        ),
        pytest.param(
            subprocess.CalledProcessError(1, ("/x/bin/initdb", "-D", "/d")),
            ["initdb exited with status 1", "wrote no log"], "Its log is",
            id="a failed initdb does not name a log it never wrote",
        ),
    ],
)
def test_start_failures_say_what_and_where(
    tmp_path: Path, error: Exception, says: list[str], never: str
) -> None:
    lock = tmp_path / ".lockfile"  # as another user's /tmp/.lockfile
    lock.touch()
    lock.chmod(0o644)
    if isinstance(error, PermissionError):
        error.filename = os.fsencode(lock)
    message = EmbeddedPostgres(tmp_path / "home")._failure(error).message
    says = [words.replace("LOCK", str(lock)) for words in says]
    for words in says:
        assert words in message
    assert never not in message
