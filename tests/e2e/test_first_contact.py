"""The README's first command, `.venv/bin/berth serve`, works where people clone: as root
from a clone under a private (0700) home, then as one ordinary user and then another on the
same machine, each on the embedded PostgreSQL, each reaching ``/readyz``.

It needs root (to be root, and to create the two users with ``useradd`` and run as them with
``runuser``); the users are left in place for the next run. The clones are offline copies
(``builders.clone``), each identity's data folder is its own, and nothing is loaded (no
``--demo``): the point is that the server starts, not what it serves.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from builders.clone import interpreter_for_everyone, make_clone
from builders.ports import free_port

USERS = ("berth-ci-first", "berth-ci-second")
READY_WITHIN = 120.0  # seconds: generous, initdb and migrations on a busy machine

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not (shutil.which("useradd") and shutil.which("runuser")),
    reason="needs root with useradd and runuser: it runs Berth as root and as two users it creates",
)


@dataclass
class Identity:
    """Who runs Berth, from which clone, with which data folder."""

    user: str
    home: Path  # the clone's parent folder, private to the user
    data: Path  # BERTH_HOME

    @property
    def is_root(self) -> bool:
        return self.user == "root"


def _ensure_user(name: str) -> Path:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True)
        entry = pwd.getpwnam(name)
    home = Path(entry.pw_dir)
    if not home.is_dir():
        home.mkdir(mode=0o700, parents=True)
        shutil.chown(home, name, name)
    return home


@pytest.fixture
def identities() -> Iterator[list[Identity]]:
    made: list[Path] = []
    # root's "home": private like /root; its data in a folder of its own outside it (the
    # default /var/lib/berth is the machine's, not the test's).
    root_home = Path(tempfile.mkdtemp(prefix="berth-first-contact-root-"))
    root_data = Path(tempfile.mkdtemp(prefix="berth-first-contact-data-"))
    made += [root_home, root_data]
    people = [Identity("root", root_home, root_data)]
    for user in USERS:
        work = _ensure_user(user) / "berth-first-contact"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(mode=0o700)
        shutil.chown(work, user, user)
        made.append(work)
        people.append(Identity(user, work, work / "data"))
    assert root_home.stat().st_mode & 0o777 == 0o700
    yield people
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


def _serve(identity: Identity, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start `.venv/bin/berth serve` in the identity's clone, as that identity; its port."""
    python = sys.executable if identity.is_root else interpreter_for_everyone()
    if python is None:
        pytest.skip("no Python of this version that other users may run")
    clone = identity.home / "berth"
    berth = make_clone(clone, python, owner=None if identity.is_root else identity.user)
    port = free_port()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(Path(pwd.getpwnam(identity.user).pw_dir)),
        "LANG": "C.UTF-8",
        "BERTH_HOME": str(identity.data),
        "BERTH_PORT": str(port),
    }
    command = [str(berth), "serve"]
    if not identity.is_root:
        # No XDG_RUNTIME_DIR, as on the login nodes where the wheel fell back to /tmp.
        command = [shutil.which("runuser") or "runuser", "-u", identity.user, "--", "env", "-i",
                   *(f"{k}={v}" for k, v in env.items()), *command]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT)
    return process, port


def _ready(process: subprocess.Popen[bytes], port: int, log: Path) -> int | str:
    """``/readyz``'s status once it answers 200, or what the server printed when it exited."""
    url = f"http://127.0.0.1:{port}/readyz"
    deadline = time.monotonic() + READY_WITHIN
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return log.read_text(errors="replace")
        try:
            status = httpx.get(url, timeout=2).status_code
        except httpx.HTTPError:
            status = 0
        if status == 200:
            return status
        time.sleep(0.2)
    return f"not ready within {READY_WITHIN}s:\n" + log.read_text(errors="replace")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def test_the_readme_serve_runs_as_root_from_a_private_home_then_as_two_users(
    identities: list[Identity], tmp_path: Path
) -> None:
    answers = {}
    for identity in identities:  # in order: root, then one user, then the other
        log = tmp_path / f"serve-{identity.user}.log"
        process, port = _serve(identity, log)
        try:
            answers[identity.user] = _ready(process, port, log)
        finally:
            _stop(process)
        assert answers[identity.user] == 200, f"{identity.user}: {answers[identity.user]}"
        output = log.read_text(errors="replace")
        assert "Traceback" not in output, f"{identity.user} printed a traceback:\n{output}"
