"""The folders the embedded PostgreSQL needs, checked before the wheel touches them.

Two places besides the data folder: a per-user runtime folder for the wheel's inter-process
lock (the wheel would keep one ``/tmp/.lockfile`` for every user of the machine), and, as
root, a copy of the wheel's PostgreSQL installation inside Berth's home, so the system user
``pgserver`` never has to reach into the virtualenv (often under a private ``/root``).
Nothing here widens a folder Berth did not make; a refusal names the path, its owner and
mode, and the fix.
"""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import tempfile
from pathlib import Path

from quota.core.errors import EmbeddedPostgresError

# The wheel adds g+rx,o+rx to every folder above the data (as root); Berth refuses instead
# when one of them lacks them.
OPEN = stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def describe(path: Path) -> str:
    """``/root (owner root, mode 700)``: what a refusal says about a path; for a path behind a
    folder this user cannot enter, that folder (``..., inside /home/alice (owner alice, ...)``)."""
    try:
        info = path.lstat()
    except PermissionError:
        closed = next((p for p in reversed(path.parents) if not os.access(p, os.X_OK)), None)
        return f"{path}, inside {describe(closed)}" if closed else f"{path} (unreadable)"
    except OSError:
        return f"{path} (missing)"
    return f"{path} (owner {user_name(info.st_uid)}, mode {stat.S_IMODE(info.st_mode):o})"


def exists(path: Path) -> bool:
    """``path.exists()`` that says False, not raises, behind a folder this user cannot enter."""
    try:
        return path.exists()
    except OSError:
        return False


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def closed_parents(path: Path) -> list[Path]:
    """Existing folders above ``path`` that lack g+rx or o+rx (the wheel would add them)."""
    return [
        parent
        for parent in path.resolve().parents
        if parent.exists() and (parent.stat().st_mode & OPEN) != OPEN
    ]


def runtime_dir() -> Path:
    """This user's folder for the wheel's lock (and its socket fallback), created on first use.

    ``$XDG_RUNTIME_DIR/berth`` when that folder is the user's own, else ``/tmp/berth-<uid>``.
    Mode 700, but 755 as root, whose PostgreSQL runs as ``pgserver`` and may put its socket
    here; root always uses ``/tmp/berth-0``, since the wheel would open every folder above a
    socket folder (``/run/user/0`` among them) to ``pgserver``.
    """
    uid = os.geteuid()
    xdg = os.environ.get("XDG_RUNTIME_DIR", "")
    base = Path(xdg) if xdg and not is_root() and _owned_dir(Path(xdg), uid) else None
    folder = base / "berth" if base else Path(tempfile.gettempdir()) / f"berth-{uid}"
    mode = 0o755 if is_root() else 0o700
    try:
        folder.mkdir(mode=mode, exist_ok=True)
    except OSError as exc:
        raise EmbeddedPostgresError(
            f"cannot create the embedded PostgreSQL's runtime folder {folder}: {exc.strerror}; "
            f"{describe(folder.parent)}. Set XDG_RUNTIME_DIR to a folder of yours."
        ) from exc
    if not _owned_dir(folder, uid):
        raise EmbeddedPostgresError(
            f"the embedded PostgreSQL keeps its lock in {describe(folder)}, which is not a folder "
            f"of yours ({user_name(uid)}). Remove it (as its owner or root) or set XDG_RUNTIME_DIR "
            "to a folder of yours."
        )
    if stat.S_IMODE(folder.stat().st_mode) != mode:
        folder.chmod(mode)  # narrows a folder of ours that others could write to
    return folder


def _owned_dir(path: Path, uid: int) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == uid


def private_install(source_bin: Path, home: Path, key: str) -> Path:
    """The ``bin`` folder of a root-owned copy of the installation above ``source_bin``,
    kept in ``<home>/postgres/<key>`` (made once per wheel version; older copies removed).

    The copy keeps the wheel's layout (``<package>/<install>/{bin,lib,share}`` beside the
    ``<package>.libs`` folder of bundled libraries) because the binaries find those libraries
    through ``$ORIGIN``-relative paths.
    """
    install = source_bin.parent
    package = install.parent
    copies = home / "postgres"
    copies.mkdir(mode=0o755, exist_ok=True)
    copies.chmod(0o755)
    target = copies / key
    if not target.is_dir():
        staging = Path(tempfile.mkdtemp(prefix=".copy-", dir=copies))
        try:
            for part in ("bin", "lib", "share"):
                destination = staging / package.name / install.name / part
                shutil.copytree(install / part, destination, symlinks=True)
            libs = package.with_name(package.name + ".libs")
            if libs.is_dir():
                shutil.copytree(libs, staging / libs.name, symlinks=True)
            _open_for_all(staging)
            try:
                staging.rename(target)
            except OSError:
                if not target.is_dir():  # not just another Berth that copied first
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target / package.name / install.name / "bin"


def prune_installs(home: Path, keep: str) -> None:
    """Remove copies made for other wheel versions (call only while no server runs)."""
    for old in (home / "postgres").glob("*"):
        if old.name != keep and not old.name.startswith(".") and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def _open_for_all(root: Path) -> None:
    """Folders 755, files 755 or 644 after their owner's execute bit: readable by
    ``pgserver``, writable only by root, whatever the umask was."""
    root.chmod(0o755)
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            os.chmod(os.path.join(folder, name), 0o755)
        for name in files:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                continue
            executable = os.stat(path).st_mode & stat.S_IXUSR
            os.chmod(path, 0o755 if executable else 0o644)
