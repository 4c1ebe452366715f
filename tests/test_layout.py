"""The package layout of DESIGN.md holds: every package directory is listed in pyproject.

setuptools silently drops unlisted subpackages of package-dir mapped folders from the wheel
while the editable install still imports them (ecosystem.md §4.4 pitfall 1) — this catches it.
"""

from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def _pyproject() -> dict[str, object]:
    with (REPO / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)


def test_every_package_directory_is_listed() -> None:
    tool = _pyproject()["tool"]
    assert isinstance(tool, dict)
    st = tool["setuptools"]
    listed = set(st["packages"])
    mapping: dict[str, str] = st["package-dir"]
    found: set[str] = set()
    for dotted, folder in mapping.items():
        root = REPO / folder
        for init in root.rglob("__init__.py"):
            rel = init.parent.relative_to(root)
            name = ".".join((dotted, *rel.parts)) if rel.parts else dotted
            if not any(part.startswith(".") or part == "__pycache__" for part in rel.parts):
                found.add(name)
    missing = found - listed
    stale = listed - found
    assert not missing, f"package dirs not listed in pyproject [tool.setuptools].packages: {sorted(missing)}"
    assert not stale, f"pyproject lists packages with no __init__.py: {sorted(stale)}"


def test_mapped_folders_are_the_design_layout() -> None:
    mapping = _pyproject()["tool"]["setuptools"]["package-dir"]  # type: ignore[index]
    assert mapping == {
        "skdbg": "skdbg",
        "skdbg.parsers": "parsers",
        "skdbg.codegen": "codegen",
        "skdbg.sessions": "sessions",
    }


def test_source_folders_are_not_imported_as_top_level_modules() -> None:
    """`import parsers` would create a second module identity (and `codegen` is a PyPI name)."""
    offenders = []
    for folder in ("skdbg", "parsers", "codegen", "sessions", "tests", "bench"):
        for py in (REPO / folder).rglob("*.py"):
            for no, line in enumerate(py.read_text(encoding="utf-8").splitlines(), 1):
                stripped = line.strip()
                for bad in ("parsers", "codegen", "sessions"):
                    if stripped.startswith((f"import {bad}", f"from {bad} ", f"from {bad}.")):
                        offenders.append(f"{py.relative_to(REPO)}:{no}: {stripped}")
    assert not offenders, "\n".join(offenders)
