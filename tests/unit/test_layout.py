"""The layout is the architecture: checks import-linter cannot express.

The pure core imports only the standard library (and itself), every package says what its
modules are in its docstring, and no module runs past 500 lines."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from builders.paths import REPO

PACKAGES = ("quota", "admission", "api", "berth")


def _modules(top: str) -> list[Path]:
    return sorted(p for p in (REPO / top).rglob("*.py") if "__pycache__" not in p.parts)


def _imported(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
    return found


def test_the_core_imports_only_the_standard_library_and_itself() -> None:
    foreign = {
        f"{path.relative_to(REPO)}: {name}"
        for path in _modules("quota/core")
        for name in _imported(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not (name == "quota.core" or name.startswith("quota.core."))
    }
    assert foreign == set()


@pytest.mark.parametrize("top", PACKAGES)
def test_every_package_lists_its_modules_in_its_docstring(top: str) -> None:
    silent = []
    for init in (REPO / top).rglob("__init__.py"):
        if "static" in init.parts:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        modules = sorted(p.stem for p in init.parent.glob("*.py") if p.stem != "__init__")
        modules += sorted(d.name for d in init.parent.iterdir() if (d / "__init__.py").exists())
        missing = [m for m in modules if f"``{m}``" not in doc]
        if missing:
            silent.append(f"{init.relative_to(REPO)}: {', '.join(missing)}")
    assert silent == []


# A module longer than this holds more than one concept: split it where the concepts part.
LONGEST_MODULE = 500


@pytest.mark.parametrize("top", (*PACKAGES, "migrations"))
def test_no_module_is_over_500_lines(top: str) -> None:
    long = {
        f"{path.relative_to(REPO)}: {lines} lines"
        for path in _modules(top)
        if (lines := len(path.read_text().splitlines())) > LONGEST_MODULE
    }
    assert long == set()
