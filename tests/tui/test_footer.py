"""The key bar rebuilds once per burst of binding changes (skdbg/tui/widgets/footer.py, issue 18).

Textual's footer queues a rebuild per ``bindings_updated`` signal; a screen coming up sends several at
once, and each rebuild made and styled every key again before the first frame. Expectations: a burst
of signals rebuilds the bar once, a signal sent while a rebuild runs is answered by another one, the
keys shown (and which are disabled) are those Textual's own footer shows for the same changes, and a
modal that closes before its first refresh does not leave the bar of the screen below stuck (a review
found that with a first version, which queued its rebuild after the refresh, on whichever screen was
on top).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.pilot import Pilot
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer as TextualFooter
from textual.widgets import Static

from skdbg.tui.widgets.footer import Footer

SIZE = (120, 10)


class _Bar(App[None]):
    ENABLE_COMMAND_PALETTE = False  # (its key would be one more on the bar)
    BINDINGS = [
        Binding("a", "noop('a')", "Alpha"),
        Binding("b", "toggle", "Bravo"),
        Binding("c", "noop('c')", "Charlie", show=False),
    ]

    def __init__(self, footer: type[TextualFooter]) -> None:
        super().__init__()
        self.footer_type = footer
        self.rebuilds = 0
        self.bravo = True

    def compose(self) -> ComposeResult:
        yield Static("body")
        yield self.footer_type()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return (True if self.bravo else None) if action == "toggle" else True

    def action_noop(self, key: str) -> None:
        pass

    def action_toggle(self) -> None:
        pass


async def _until(pilot: Pilot[None], done: Callable[[], bool], turns: int = 50) -> None:
    """Pause until ``done()`` (at most ``turns`` pauses), then once more: what was queued has run."""
    for _ in range(turns):
        if done():
            break
        await pilot.pause()
    await pilot.pause()


def _idle(footer: TextualFooter) -> Callable[[], bool]:
    """No rebuild of ``footer`` pending (ours, or Textual's queued after the refresh)."""
    return lambda: not footer._recompose_required and not footer.screen._callbacks


def _count_rebuilds(app: _Bar) -> TextualFooter:
    footer = app.screen.query_one(TextualFooter)
    real = footer.recompose

    async def counted() -> None:
        app.rebuilds += 1
        await real()

    footer.recompose = counted  # type: ignore[method-assign]
    return footer


def _keys(app: App[None]) -> list[tuple[str, str, bool]]:
    return [(k.key, k.description, k.has_class("-disabled")) for k in app.screen.query("FooterKey")]


async def _burst(footer_type: type[TextualFooter], least: int) -> tuple[int, list[tuple[str, str, bool]]]:
    """The rebuilds four signals at once give a bar of ``footer_type`` (waiting for ``least`` of them and
    then for the bar to be idle), and the keys it shows after them."""
    app = _Bar(footer_type)
    async with app.run_test(size=SIZE) as pilot:
        footer = app.screen.query_one(TextualFooter)
        await _until(pilot, _idle(footer))
        _count_rebuilds(app)
        for _ in range(4):
            app.screen.bindings_updated_signal.publish(app.screen)
        await _until(pilot, lambda: app.rebuilds >= least and _idle(footer)())
        return app.rebuilds, _keys(app)


async def test_a_burst_of_binding_changes_rebuilds_the_bar_once() -> None:
    assert await _burst(Footer, 1) == (1, [("a", "Alpha", False), ("b", "Bravo", False)])


async def test_textual_s_own_bar_rebuilds_once_per_change() -> None:
    """The behaviour the subclass changes (if Textual ever coalesces itself, the subclass can go)."""
    assert (await _burst(TextualFooter, 4))[0] == 4


async def test_a_change_during_a_rebuild_queues_the_next() -> None:
    app = _Bar(Footer)
    async with app.run_test(size=SIZE) as pilot:
        footer = app.screen.query_one(Footer)
        await _until(pilot, _idle(footer))
        real = footer.recompose
        started = asyncio.Event()
        release = asyncio.Event()

        async def slow() -> None:
            app.rebuilds += 1
            if app.rebuilds == 1:
                started.set()
                await release.wait()  # the first rebuild is under way: a change now needs another
            await real()

        footer.recompose = slow  # type: ignore[method-assign]
        app.screen.bindings_updated_signal.publish(app.screen)
        await asyncio.wait_for(started.wait(), 5)
        app.screen.bindings_updated_signal.publish(app.screen)
        release.set()
        await _until(pilot, lambda: app.rebuilds >= 2 and _idle(footer)())
        assert app.rebuilds == 2


async def test_a_burst_that_changes_the_bindings_ends_as_textual_s_bar_does() -> None:
    shown = []
    for footer_type in (TextualFooter, Footer):
        app = _Bar(footer_type)
        async with app.run_test(size=SIZE) as pilot:
            footer = app.screen.query_one(TextualFooter)
            await _until(pilot, _idle(footer))
            before = _keys(app)
            app.bravo = False  # Bravo disabled between two signals of one burst
            app.screen.bindings_updated_signal.publish(app.screen)
            app.screen.bindings_updated_signal.publish(app.screen)
            await _until(pilot, _idle(footer))
            shown.append((before, _keys(app)))
    enabled = [("a", "Alpha", False), ("b", "Bravo", False)]
    disabled = [("a", "Alpha", False), ("b", "Bravo", True)]
    assert shown[0] == shown[1] == (enabled, disabled)


class _Gone(ModalScreen[None]):
    """A modal that closes before its first refresh (nothing to show)."""

    def compose(self) -> ComposeResult:
        yield Static("gone")

    def on_mount(self) -> None:
        self.dismiss(None)


class _Base(Screen[None]):
    BINDINGS = [Binding("p", "open", "Open"), Binding("b", "toggle", "Toggle")]
    enabled = True

    def compose(self) -> ComposeResult:
        yield Static("base")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return (True if self.enabled else None) if action == "toggle" else True

    def action_open(self) -> None:
        self.app.push_screen(_Gone())

    def action_toggle(self) -> None:
        self.enabled = not self.enabled
        self.refresh_bindings()


class _Stacked(App[None]):
    ENABLE_COMMAND_PALETTE = False

    def on_mount(self) -> None:
        self.push_screen(_Base())


async def test_the_bar_follows_its_screen_after_a_modal_closed_before_its_first_refresh() -> None:
    app = _Stacked()
    async with app.run_test(size=(100, 10)) as pilot:
        await pilot.pause()
        base = app.screen
        await pilot.press("p")  # the modal comes and goes: the base's suspend signal comes meanwhile
        await _until(pilot, lambda: app.screen is base)
        assert app.screen is base
        await pilot.press("b")
        footer = base.query_one(Footer)
        await _until(
            pilot,
            lambda: _idle(footer)() and any(k.has_class("-disabled") for k in footer.query("FooterKey")),
        )
        shown = {k.key: k.has_class("-disabled") for k in footer.query("FooterKey")}
        assert shown == {"p": False, "b": True}
