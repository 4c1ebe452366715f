"""Every key binding of the TUI, with ids, and the user's keymap override.

Why a table: bindings are data (posting, harlequin). Each has an ``id`` so a user can remap it
without code — ``App.set_keymap`` applies ``{id: "keys"}`` — and the F1 help is checked against
this table (tests/tui/test_help.py), so no binding goes undocumented.

Override file (TOML): ``$SKDBG_KEYMAP`` if set, else ``<platformdirs user_config_dir("skdbg")>/keymap.toml``::

    [keymap]
    "log.next_fault" = "j"
    "app.screenshot" = "f8,ctrl+s"
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs
from textual.binding import Binding

from skdbg.tui.prompt import EXPORT_BINDINGS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

#: the default key of ``app.retry`` (the screens name the key in use after a failed analysis)
RETRY_KEY = "ctrl+r"

APP_BINDINGS: list[Binding] = [
    Binding("f1", "help", "Help", id="app.help", tooltip="Explain every key"),
    Binding("1", "show('overview')", "Overview", id="screen.overview"),
    Binding("2", "show('evidence')", "Evidence", id="screen.evidence"),
    Binding("3", "show('log')", "Log", id="screen.log"),
    Binding("4", "show('scope')", "Scope", id="screen.scope"),
    Binding("5", "show('proposal')", "Proposal", id="screen.proposal"),
    Binding("6", "show('session')", "Session", id="screen.session", show=False),
    Binding("7", "show('candidate')", "Candidate", id="screen.candidate", show=False),
    Binding("8", "show('timeline')", "Timeline", id="screen.timeline", show=False),
    Binding("9", "show('ranks')", "Ranks", id="screen.ranks", show=False),
    Binding("c", "copy", "Copy", id="app.copy", tooltip="Copy the current item to the clipboard"),
    Binding("f8", "svg_screenshot", "SVG", id="app.screenshot", tooltip="Save an SVG screenshot"),
    Binding(
        "question_mark",
        "explain_here",
        "Explain",
        id="app.explain",
        show=False,
        tooltip="Explain the ids on the current row (C3, T4, §4.4 rule 3, V2 …)",
    ),
    Binding("ctrl+t", "next_theme", "Theme", id="app.theme", show=False),
    Binding("escape", "cancel", "Cancel", id="app.cancel", show=False, tooltip="Cancel running work"),
    Binding(RETRY_KEY, "retry", "Retry", id="app.retry", show=False, tooltip="Analyse the scene again"),
    Binding("q", "quit", "Quit", id="app.quit"),
]

EVIDENCE_BINDINGS: list[Binding] = [
    Binding("j", "jump", "Jump to file:line", id="evidence.jump"),
]


SCOPE_BINDINGS: list[Binding] = [
    Binding("g", "toggle_graph", "Graph/Tables", id="scope.graph"),
]

RANKS_BINDINGS: list[Binding] = [
    Binding("o", "open_rank", "Open", id="ranks.open"),
    Binding("e", "cores", "Cores", id="ranks.cores", tooltip="Open the rank and show its exception cores"),
    Binding("f", "first", "First failing", id="ranks.first", show=False),
    Binding("a", "all", "All ranks", id="ranks.all", show=False),
]

SOURCE_BINDINGS: list[Binding] = [
    Binding("escape", "close", "Close", id="source.close"),
]

PROPOSAL_BINDINGS: list[Binding] = [
    Binding("space", "toggle_child", "Toggle", id="proposal.toggle"),
    Binding("m", "mechanism", "Mech", id="proposal.mechanism"),
    Binding("a", "accept", "Accept", id="proposal.accept"),
    Binding("b", "block", "Block", id="proposal.block"),
    Binding("x", "export", "Export", id="proposal.export"),
    Binding("r", "reset", "Reset", id="proposal.reset"),
]

SESSION_BINDINGS: list[Binding] = [
    Binding("p", "propose", "Propose", id="session.propose"),
    Binding("P", "propose_narrowing", "Narrowing", id="session.narrowing", show=False),
    Binding("o", "open_candidate", "Candidate", id="session.candidate", show=False),
    Binding("r", "relaunch", "Relaunch", id="session.relaunch"),
    Binding("x", "export", "Export", id="session.export"),
    Binding("n", "note", "Note", id="session.note"),
    Binding("d", "diff", "Diff", id="session.diff", show=False),
]

RELAUNCH_BINDINGS: list[Binding] = [
    Binding("escape", "cancel_or_close", "Cancel/Close", id="relaunch.cancel"),
]

CANDIDATE_BINDINGS: list[Binding] = [
    Binding("w", "write", "Write", id="candidate.write", tooltip="Write the candidate folder"),
    Binding(
        "s", "source_root", "Source", id="candidate.source_root", tooltip="Where the marker source lives"
    ),
]

#: the "replace the non-empty folder?" question of the Candidate screen (the CLI's --force)
CANDIDATE_REPLACE_BINDINGS: list[Binding] = [
    Binding("y", "replace", "Replace", id="candidate.replace"),
    Binding("n,escape", "keep", "Keep", id="candidate.keep"),
]

HELP_BINDINGS: list[Binding] = [
    Binding("escape,f1,q", "close", "Close", id="help.close"),
]

#: ``?`` again on an explanation closes it (the key that opened it)
EXPLAIN_BINDINGS: list[Binding] = [
    Binding("question_mark", "close", "Close", id="explain.close", show=False),
]


def _logview_bindings() -> list[Binding]:
    """The plog viewer's own bindings (part 1's LogView): documented and remappable like ours."""
    from skdbg.tui.logview import LogView

    return [b for b in LogView.BINDINGS if isinstance(b, Binding)]


ALL_BINDINGS: list[Binding] = [
    *APP_BINDINGS,
    *EVIDENCE_BINDINGS,
    *SCOPE_BINDINGS,
    *RANKS_BINDINGS,
    *SOURCE_BINDINGS,
    *PROPOSAL_BINDINGS,
    *SESSION_BINDINGS,
    *RELAUNCH_BINDINGS,
    *CANDIDATE_BINDINGS,
    *CANDIDATE_REPLACE_BINDINGS,
    *HELP_BINDINGS,
    *EXPLAIN_BINDINGS,
    *EXPORT_BINDINGS,
    *_logview_bindings(),
]


class KeymapError(ValueError):
    """The keymap file is unreadable or names a binding id that does not exist."""


def keymap_path() -> Path:
    """Where the override lives: ``$SKDBG_KEYMAP`` or the platform config dir."""
    env = os.environ.get("SKDBG_KEYMAP")
    if env:
        return Path(env)
    return Path(platformdirs.user_config_dir("skdbg")) / "keymap.toml"


def load_keymap(path: Path | None = None) -> dict[str, str]:
    """The ``[keymap]`` table of the override file ({} when there is none).

    Unknown ids and non-string keys are errors (a typo would otherwise silently do nothing)."""
    p = path if path is not None else keymap_path()
    if not p.is_file():
        if path is not None or os.environ.get("SKDBG_KEYMAP"):
            raise KeymapError(f"{p}: keymap file not found")
        return {}
    try:
        doc = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise KeymapError(f"{p}: not a TOML keymap ({exc})") from exc
    table = doc.get("keymap", {})
    if not isinstance(table, dict):
        raise KeymapError(f'{p}: [keymap] must be a table of binding id = "keys"')
    ids = {b.id for b in ALL_BINDINGS}
    out: dict[str, str] = {}
    for key, value in table.items():
        if key not in ids:
            raise KeymapError(f"{p}: unknown binding id {key!r} (see F1 for the ids)")
        if not isinstance(value, str) or not value.strip():
            raise KeymapError(f'{p}: {key} must be a non-empty string of keys, e.g. "j" or "f8,ctrl+s"')
        out[key] = value
    return out


__all__ = [
    "ALL_BINDINGS",
    "APP_BINDINGS",
    "CANDIDATE_BINDINGS",
    "CANDIDATE_REPLACE_BINDINGS",
    "EVIDENCE_BINDINGS",
    "EXPORT_BINDINGS",
    "HELP_BINDINGS",
    "PROPOSAL_BINDINGS",
    "RANKS_BINDINGS",
    "RELAUNCH_BINDINGS",
    "SESSION_BINDINGS",
    "RETRY_KEY",
    "SCOPE_BINDINGS",
    "SOURCE_BINDINGS",
    "KeymapError",
    "keymap_path",
    "load_keymap",
]
