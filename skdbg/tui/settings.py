"""The TUI's remembered choices (today: the theme), in ``tui.json`` next to the keymap.

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
    """Remember ``name``; written to a temp file then renamed, so a crash never leaves half a file."""
    target = path or settings_path()
    data = load_settings(target)
    data["theme"] = name
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tui.", suffix=".json", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, target)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


__all__ = ["load_settings", "save_theme", "saved_theme", "settings_path"]
