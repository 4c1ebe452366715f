"""Start the TUI on a scan: the Ranks screen, with the first failing rank's folder already opened.

Why a module of its own: ``skdbg scan --open`` (after a scan run headless, :mod:`skdbg.fleet`) and
``skdbg tui --scan scan.json`` start the same app the same way; the scan document is handed to the app
(``SkdbgApp(scan=…)``) and the rank opened through its ordinary scene path (no second analysis path).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from skdbg.fleet.scandoc import is_openable, open_note, rank_name

if TYPE_CHECKING:
    from skdbg.tui.app import SkdbgApp


def start_rank(doc: dict[str, Any]) -> int | None:
    """The rank the TUI opens first: the first failing rank (None: there is none, or it is unreadable)."""
    first = doc["first_failing"]
    if first is None:
        return None
    index = int(first["index"])
    return index if is_openable(doc["ranks"][index]) else None


def opening_message(doc: dict[str, Any]) -> str:
    """What ``--open`` says before the UI starts (and what the user sees on quitting)."""
    index = start_rank(doc)
    if index is None:
        why = (
            "no failing rank in this scan (no rank shows a fault or a follow-up error)"
            if doc["first_failing"] is None
            else "the first failing rank is unreadable"
        )
        return f"{why}: opening the Ranks screen without a scene — Enter on a rank opens it"
    r = doc["ranks"][index]
    return f"opening {rank_name(r)} (first failing): {r['folder']} — {open_note(r)}; 9 shows the Ranks screen"


def scan_app(doc: dict[str, Any], *, screen: str = "ranks") -> SkdbgApp:
    """The app on ``doc``: the first failing rank opened (its analysis runs at once), ``screen`` shown."""
    from skdbg.tui.app import SkdbgApp

    index = start_rank(doc)
    if index is None:
        return SkdbgApp(
            None, scan=doc, start_mode=screen, missing="no rank opened: Enter on a rank (9) opens it"
        )
    r = doc["ranks"][index]
    folder = Path(r["folder"])
    app = SkdbgApp(folder, scan=doc, pid=r["pid"], start_mode=screen)
    app.sub_title = f"{rank_name(r)} · {folder.name}"
    return app


def launch_scan(doc: dict[str, Any], *, screen: str = "ranks") -> None:
    """Run the TUI on a scan document (blocks until the user quits)."""
    app = scan_app(doc, screen=screen)
    app.restore_choices()
    app.run()


__all__ = ["launch_scan", "opening_message", "scan_app", "start_rank"]
