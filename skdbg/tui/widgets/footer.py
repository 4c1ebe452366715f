"""The key bar at the foot of every screen: Textual's ``Footer``, rebuilt once per burst of binding
changes.

Why: Textual's footer answers each ``bindings_updated`` signal of its screen by queueing a rebuild of
its keys (``call_after_refresh(self.recompose)``), and a screen coming up sends several at once (its
mount, the focus moving to its first widget, the mode switch: four on the Log screen of ``skdbg tui
SCENE --screen log``). Each rebuild makes and styles a widget per key, ~22 ms on the 2-core test
machine, and they ran one after another before the log's first line could be painted: that line came
~70 ms later (0.50–0.51 against 0.43 s by the minimum, 0.57–0.63 against 0.50–0.51 s by the median, two
batches of 14 and 16 alternated launches on a 1 GiB plog, issue 18's ``bench/tui_open.py``). Here a
signal asks for the widget's own coalesced rebuild instead (``refresh(recompose=True)``: one pending
rebuild at a time, run on the footer's next turn). A rebuild
reads the screen's bindings as they are when it runs, so the keys shown are those Textual's footer ends
up showing; and the request belongs to the footer itself, so no other screen can drop it (a callback
queued after the refresh waits on whichever screen is on top, and a modal closed before its first
refresh took it with it: with a flag of our own, the bar would then never have been rebuilt again).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer as TextualFooter

if TYPE_CHECKING:
    from textual.screen import Screen


class Footer(TextualFooter):
    """Textual's ``Footer`` whose rebuilds, asked for by its screen's binding changes, are coalesced
    (see the module docstring)."""

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Textual's own answer to a binding change (the same checks, in the same order), with the
        widget's coalesced rebuild in place of one queued per signal."""
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.refresh(recompose=True)


__all__ = ["Footer"]
