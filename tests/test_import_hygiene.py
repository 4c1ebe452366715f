"""Headless core: parsers, codegen, sessions, the triage engine and the scene builder never import textual.

Run in a subprocess so modules imported by other tests cannot hide a violation (harlequin's
test_import_hygiene pattern, ecosystem.md §4.5).
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import skdbg.codegen
import skdbg.parsers
import skdbg.scenebuilder
import skdbg.sessions
import skdbg.triage

HEADLESS = [skdbg.parsers, skdbg.codegen, skdbg.sessions, skdbg.triage, skdbg.scenebuilder]


def _all_modules() -> list[str]:
    names: list[str] = []
    for pkg in HEADLESS:
        names.append(pkg.__name__)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=pkg.__name__ + "."):
            names.append(info.name)
    return names


def test_headless_packages_do_not_import_textual() -> None:
    modules = _all_modules()
    assert "skdbg.parsers.plog_line" in modules  # the walk really sees the mapped folders
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    leaked = json.loads(out.stdout.strip().splitlines()[-1])
    assert leaked == [], f"textual imported by the headless core: {leaked[:5]}"


def test_hygiene_check_detects_a_violation() -> None:
    """The subprocess probe itself works: importing textual shows up."""
    code = "import json, sys, textual\nprint(json.dumps([m for m in sys.modules if m == 'textual']))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip()) == ["textual"]
