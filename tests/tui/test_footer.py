"""The key bar rebuilds once per burst of binding changes (skdbg/tui/widgets/footer.py, issue 18).

Textual's footer queues a rebuild per ``bindings_updated`` signal; a screen coming up sends several at
once, and each rebuild made and styled every key again before the first frame. Expectations: a burst
of signals rebuilds the bar once, a signal sent while a rebuild runs is answered by another one, and
the keys shown are those Textual's own footer shows for the same bindings.
"""

from __future__ import annotations

import asyncio

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer as TextualFooter
from textual.widgets import Static

from skdbg.tui.widgets.footer import Footer

SIZE = (120, 10)


class _Bar(App[None]):
    ENABLE_COMMAND_PALETTE = False  # (its key would be one more on the bar)
    BINDINGS = [
        Binding("a", "noop('a')", "Alpha"),
        Binding("b", "noop('b')", "Bravo"),
        Binding("c", "noop('c')", "Charlie", show=False),
    ]

    def __init__(self, footer: type[TextualFooter]) -> None:
        super().__init__()
        self.footer_type = footer
        self.rebuilds = 0

    def compose(self) -> ComposeResult:
        yield Static("body")
        yield self.footer_type()

    def action_noop(self, key: str) -> None:
        pass


def _count_rebuilds(app: _Bar) -> None:
    footer = app.screen.query_one(TextualFooter)
    real = footer.recompose

    async def counted() -> None:
        app.rebuilds += 1
        await real()

    footer.recompose = counted  # type: ignore[method-assign]


def _keys(app: _Bar) -> list[tuple[str, str]]:
    return [(k.key, k.description) for k in app.screen.query("FooterKey")]


async def test_a_burst_of_binding_changes_rebuilds_the_bar_once() -> None:
    app = _Bar(Footer)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        _count_rebuilds(app)
        for _ in range(4):
            app.screen.bindings_updated_signal.publish(app.screen)
        await pilot.pause()
        await pilot.pause()
        assert app.rebuilds == 1
        assert _keys(app) == [("a", "Alpha"), ("b", "Bravo")]


async def test_textual_s_own_bar_rebuilds_once_per_change() -> None:
    """The behaviour the subclass changes (if Textual ever coalesces itself, the subclass can go)."""
    app = _Bar(TextualFooter)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        _count_rebuilds(app)
        for _ in range(4):
            app.screen.bindings_updated_signal.publish(app.screen)
        await pilot.pause()
        await pilot.pause()
        assert app.rebuilds == 4


async def test_a_change_during_a_rebuild_queues_the_next() -> None:
    app = _Bar(Footer)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        footer = app.screen.query_one(Footer)
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
        for _ in range(4):
            await pilot.pause()
        assert app.rebuilds == 2


async def test_the_bar_shows_the_keys_textual_s_shows() -> None:
    shown = []
    for footer in (TextualFooter, Footer):
        app = _Bar(footer)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            app.screen.bindings_updated_signal.publish(app.screen)
            await pilot.pause()
            await pilot.pause()
            shown.append(_keys(app))
    assert shown[0] == shown[1] == [("a", "Alpha"), ("b", "Bravo")]
