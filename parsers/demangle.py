"""Itanium C++ demangling for display (artifacts.md §4.4, row 74).

Why a shell-out: SK variants are mangled template instances (``_Z13add_custom_skILj0EEvv``) and
pyelftools does not demangle. ``c++filt`` is the reference demangler and handles a whole batch
through one process (ecosystem.md §3.4 item 5: optional accelerator, detected with
``shutil.which``, batched, time-boxed). Without it the raw name is shown — never a guess.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable

TOOL = "c++filt"
TIMEOUT_S = 30.0

_cache: dict[str, str] = {}


def demangler_path() -> str | None:
    """Where ``c++filt`` is, looked up on every call so tests can monkeypatch ``shutil.which``."""
    return shutil.which(TOOL)


def _mangled(name: str) -> bool:
    return name.startswith("_Z") and "\n" not in name and "\r" not in name and name.isprintable()


def demangle_many(names: Iterable[str]) -> list[str]:
    """Demangle a batch; names that are not Itanium-mangled, or any failure, give the raw name back."""
    items = list(names)
    todo = sorted({n for n in items if _mangled(n) and n not in _cache})
    tool = demangler_path() if todo else None
    fresh: dict[str, str] = {}
    if todo and tool is not None:
        try:
            out = subprocess.run(
                [tool],
                input="\n".join(todo) + "\n",
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            out = None
        if out is not None and out.returncode == 0:
            lines = out.stdout.splitlines()
            if len(lines) == len(todo):
                fresh = dict(zip(todo, lines, strict=True))
                _cache.update(fresh)
    return [_cache.get(n, fresh.get(n, n)) for n in items]


def demangle(name: str) -> str:
    """One name; see :func:`demangle_many`."""
    return demangle_many([name])[0]
