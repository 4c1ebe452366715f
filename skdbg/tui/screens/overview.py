"""Overview: the scene at a glance — gate, fault, verdict with its rule, routes, proposal; its
tooltip names every code shown with its title (the glossary's words)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import ProgressBar, Static

from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.state import TriageState
from skdbg.tui.widgets.text import analysis_codes, explain_lines, overview_markup


class OverviewScreen(TriageScreen):
    def compose_body(self) -> ComposeResult:
        yield ProgressBar(total=None, show_eta=False, id="progress")
        with VerticalScroll(id="overview-scroll"):
            yield Static(id="overview")

    def sync(self) -> None:
        super().sync()
        self.query_one("#progress", ProgressBar).display = (
            self.state is None and not self.skdbg.analysis_stopped
        )

    def show_progress(self, done: int, total: int) -> None:
        bar = self.query_one("#progress", ProgressBar)
        bar.update(total=total, progress=done)
        self.query_one("#waiting", Static).update(self.skdbg.status_text)

    def populate(self, state: TriageState) -> None:
        view = self.query_one("#overview", Static)
        view.update(overview_markup(state.analysis, state.proposal, state.accepted))
        codes = analysis_codes(state.analysis, state.proposal)
        # hovering the summary names every code on it; F1 / ctrl+p "Explain …" give the full text
        view.tooltip = (
            explain_lines(codes) + "\n\nF1 or ctrl+p › Explain … for the full text" if codes else None
        )

    def copy_text(self) -> str | None:
        st = self.state
        if st is None:
            return None
        v = st.analysis.verdict
        suspect = v.suspect.label() if v.suspect is not None else "no suspect"
        return f"{v.confidence} ({v.rule}): {suspect} — {v.reason}"

    def codes_here(self) -> list[str]:
        """The verdict's rule first, then every other code the summary shows (as its tooltip)."""
        st = self.state
        rest = [] if st is None else analysis_codes(st.analysis, st.proposal)
        return list(dict.fromkeys([*super().codes_here(), *rest]))


__all__ = ["OverviewScreen"]
