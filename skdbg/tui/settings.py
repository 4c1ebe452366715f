"""The TUI's remembered choices (the theme, the log bookmarks), in ``tui.json`` next to the keymap.

Why a file of its own: the keymap is the user's hand-written TOML; remembered choices are written
by the app, so they live in a separate small JSON the app may rewrite (atomically) without touching
anything the user wrote. An unreadable file is ignored — a preference never blocks the TUI.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import platformdirs


def settings_path() -> Path:
    """``<platformdirs user_config_dir("skdbg")>/tui.json`` (honours ``$XDG_CONFIG_HOME`` on Linux)."""
    return Path(platformdirs.user_config_dir("skdbg")) / "tui.json"


def load_settings(path: Path | None = None) -> dict[str, object]:
    """The stored choices, or ``{}`` if the file is missing or unreadable."""
    try:
        data = json.loads((path or settings_path()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def saved_theme(path: Path | None = None) -> str | None:
    theme = load_settings(path).get("theme")
    return theme if isinstance(theme, str) else None


def save_theme(name: str, path: Path | None = None) -> None:
    """Remember ``name``."""
    _update("theme", name, path)


def _file_identity(log: Path) -> dict[str, object] | None:
    """What makes a bookmark still valid: the same file (real path), size and mtime (None: unreadable)."""
    try:
        st = log.stat()
    except OSError:
        return None
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def saved_bookmarks(log: Path, path: Path | None = None) -> list[int]:
    """1-based lines bookmarked in ``log`` in an earlier run; [] when none or the file changed since
    (a rewritten log's line numbers point at other lines: the old marks are dropped, not moved)."""
    table = load_settings(path).get("bookmarks")
    entry = table.get(str(log.resolve())) if isinstance(table, dict) else None
    if not isinstance(entry, dict) or {k: entry.get(k) for k in ("size", "mtime_ns")} != _file_identity(log):
        return []
    lines = entry.get("lines")
    return sorted({v for v in lines if isinstance(v, int) and v > 0}) if isinstance(lines, list) else []


def save_bookmarks(log: Path, lines: list[int], path: Path | None = None) -> None:
    """Remember the bookmarked 1-based ``lines`` of ``log`` (an empty list forgets the file)."""
    target = path or settings_path()
    table = load_settings(target).get("bookmarks")
    table = dict(table) if isinstance(table, dict) else {}
    ident = _file_identity(log)
    key = str(log.resolve())
    if lines and ident is not None:
        table[key] = {**ident, "lines": sorted(set(lines))}
    else:
        table.pop(key, None)
    _update("bookmarks", table, target)


def _update(key: str, value: object, path: Path | None) -> None:
    """Set one key; written to a temp file then renamed, so a crash never leaves half a file."""
    target = path or settings_path()
    data = load_settings(target)
    data[key] = value
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tui.", suffix=".json", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, target)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


__all__ = [
    "load_settings",
    "save_bookmarks",
    "save_theme",
    "saved_bookmarks",
    "saved_theme",
    "settings_path",
]
