"""The key bar at the foot of every screen: Textual's ``Footer``, rebuilt once per burst of binding
changes.

Why: Textual's footer answers each ``bindings_updated`` signal of its screen by queueing a rebuild of
its keys (``recompose``), and a screen coming up sends several at once (its mount, the focus moving to
its first widget, the mode switch: four on the Log screen of ``skdbg tui SCENE --screen log``). Each
rebuild makes and styles a widget per key, ~20 ms on the 2-core test machine, and they ran one after
another before the log's first line could be painted: that line came ~75 ms later (0.534 against
0.459 s median of 12 alternated launches on a 1 GiB plog, issue 18's ``bench/tui_open.py``). A rebuild
reads the screen's bindings as they are when it runs, so one queued rebuild answers every signal sent
before it starts; a signal sent while it runs queues the next one. The keys shown are the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Footer as TextualFooter

if TYPE_CHECKING:
    from textual.screen import Screen


class Footer(TextualFooter):
    """Textual's ``Footer`` whose rebuilds, asked for by its screen's binding changes, are coalesced:
    at most one is queued at a time (see the module docstring)."""

    _rebuild_queued = False

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Textual's own answer to a binding change (the same checks, in the same order), but for a
        rebuild that is queued already: that one will read the bindings as they are by then."""
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._rebuild_queued:
            self._rebuild_queued = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        """The queued rebuild. The flag is cleared first: a binding change from now on is not covered
        by the bindings this rebuild reads, and queues the next."""
        self._rebuild_queued = False
        await self.recompose()


__all__ = ["Footer"]
