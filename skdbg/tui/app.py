"""The skdbg Textual app: five modes over one analysed scene, palette, keys, help, themes.

Why this shape (harlequin/posting, ecosystem.md §1.8): the app owns the state and the workers;
screens only draw it. The analysis runs in a thread worker (``@work(thread=True)``) that reports
with messages, so the UI paints at once and stays responsive; Esc cancels between stages. When it
fails or is cancelled every screen says so, and ``app.retry`` (ctrl+r) runs it again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import work
from textual.binding import BindingType
from textual.worker import get_current_worker

from skdbg.parsers.common import ParseError
from skdbg.tui.appbase import SkdbgBaseApp
from skdbg.tui.bookmark_commands import BookmarkCommands
from skdbg.tui.commands import SkdbgCommands
from skdbg.tui.keymap import APP_BINDINGS, RETRY_KEY
from skdbg.tui.messages import AnalysisFailed, AnalysisProgress, AnalysisReady, SceneOpened
from skdbg.tui.prompt import PromptScreen
from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.screens.candidate import CandidateScreen
from skdbg.tui.screens.evidence import EvidenceScreen
from skdbg.tui.screens.log import LogScreen
from skdbg.tui.screens.overview import OverviewScreen
from skdbg.tui.screens.proposal import ProposalScreen
from skdbg.tui.screens.ranks import RanksScreen
from skdbg.tui.screens.scope import ScopeScreen
from skdbg.tui.screens.session import SessionScreen
from skdbg.tui.screens.session_ref import SessionRef
from skdbg.tui.screens.source import SourceScreen
from skdbg.tui.screens.timeline import TimelineScreen
from skdbg.tui.state import Cancelled, TriageState, run_analysis
from skdbg.tui.widgets.text import analysis_codes

if TYPE_CHECKING:  # the triage stack loads in the analysis worker, after the first screen painted
    from skdbg.triage.context import TriageContext
    from skdbg.triage.model import EvidenceItem

#: at most this long the analysis worker waits for the Log screen's first painted line when the app
#: opens on it (``--screen log``): its imports and parsing would otherwise fight the first frame for the GIL
LOG_FIRST_WAIT = 3.0


def plog_files(ctx: TriageContext) -> list[Path]:
    """Every plog of the opened scene (absolute paths), in inventory order."""
    return [a.path for a in ctx.scene.artifacts if a.kind == "plog"]


class SkdbgApp(SkdbgBaseApp):
    TITLE = "skdbg"
    BINDINGS: ClassVar[list[BindingType]] = [*APP_BINDINGS]
    COMMANDS = SkdbgBaseApp.COMMANDS | {SkdbgCommands, BookmarkCommands}
    MODES = {
        "overview": OverviewScreen,
        "evidence": EvidenceScreen,
        "log": LogScreen,
        "scope": ScopeScreen,
        "proposal": ProposalScreen,
        "session": SessionScreen,
        "candidate": CandidateScreen,
        "timeline": TimelineScreen,
        "ranks": RanksScreen,
    }

    def __init__(
        self,
        scene: Path | None,
        *,
        ctx: TriageContext | None = None,
        report_dir: Path | None = None,
        screenshot_dir: Path | None = None,
        keymap: dict[str, str] | None = None,
        missing: str | None = None,
        start_mode: str = "overview",
        session: SessionRef | None = None,
        scan: dict[str, Any] | None = None,
        pid: int | None = None,
    ) -> None:
        super().__init__(keymap=keymap, screenshot_dir=screenshot_dir)
        if start_mode not in self.MODES:
            raise ValueError(f"unknown screen {start_mode!r} (one of {', '.join(self.MODES)})")
        self.start_mode = start_mode
        self.scene = scene
        self.report_dir = report_dir
        # the ledger session the Session screen shows and Accept records into (None: not chosen)
        self.session = session
        self.scan = scan  # the skdbg.scan/1 document the Ranks screen lists (skdbg scan --open)
        self.pid = pid  # the process to analyse when the scene folder holds several (a rank)
        self._ctx = ctx  # opened and checked by `skdbg tui` before the UI started: used once
        # the scene's plogs, known as soon as the scene is inventoried: the Log screen opens them at
        # once instead of waiting for the analysis (issue 18 item 7)
        self.plog_files: list[Path] | None = plog_files(ctx) if ctx is not None else None
        self.state: TriageState | None = None
        self.version = 0
        self.status_text = missing or "analysis running…"
        self.analysis_stopped = False  # failed or cancelled: the screens say so, ctrl+r retries
        # how many times a scene was opened (open_scene): the analysis messages carry the count of
        # theirs, so a replaced rank's late report is ignored even when the new rank shares its folder
        self.opened = 0
        if scene is not None:
            self.sub_title = scene.name

    # ------------------------------------------------------------------ start-up and analysis

    def on_mount(self) -> None:
        self.apply_keymap()
        self.switch_mode(self.start_mode)
        if self.scene is not None and self.start_mode == "session":
            # the Session screen reads the ledger, not the analysis: paint it first, then analyse
            self.call_after_refresh(self.analyse, self.scene, self.opened)
        elif self.scene is not None:
            self.analyse(self.scene, self.opened)

    @work(thread=True, exclusive=True, group="analysis", description="analyse the scene", exit_on_error=False)
    def analyse(self, scene: Path, opened: int | None = None) -> None:
        """Analyse ``scene``; every message it posts names ``opened`` (the opening it belongs to)."""
        worker = get_current_worker()
        from skdbg.triage.context import check_inputs, open_context

        ctx, self._ctx = self._ctx, None

        def progress(stage: str, done: int, total: int) -> None:
            self.post_message(AnalysisProgress(stage, done, total, opened))

        try:
            if ctx is None:
                ctx = open_context(scene, pid=self.pid)
                check_inputs(ctx)
            plogs = plog_files(ctx)
            if self.plog_files is None:
                self.post_message(SceneOpened(plogs, scene, opened))
            if self.start_mode == "log" and plogs:
                self._wait_for_log_paint(lambda: worker.is_cancelled)
            state = run_analysis(scene, progress, lambda: worker.is_cancelled, ctx=ctx)
        except Cancelled as exc:
            self.post_message(AnalysisFailed(str(exc), scene, opened))
        except ParseError as exc:
            self.post_message(AnalysisFailed(f"cannot analyse {scene}: {exc}", scene, opened))
        except Exception as exc:  # an engine bug must not leave the UI "running" forever
            self.post_message(
                AnalysisFailed(f"internal error while analysing {scene}: {exc!r}", scene, opened)
            )
        else:
            self.post_message(AnalysisReady(state, opened))

    def _wait_for_log_paint(self, cancelled: Callable[[], bool]) -> None:
        """Return once the Log screen painted its first line, at most :data:`LOG_FIRST_WAIT` seconds;
        at once when the user left the Log screen or its files hold no line. Runs in the worker
        thread: attribute reads only."""
        deadline = time.monotonic() + LOG_FIRST_WAIT
        while time.monotonic() < deadline and not cancelled():
            if self.current_mode != "log":
                return
            try:
                view = getattr(self.screen, "view", None)
            except Exception:  # no screen yet (the stack is being built)
                view = None
            if view is not None:
                if getattr(view, "first_paint_time", None) is not None:
                    return
                if getattr(view, "indexing_done", False) and not getattr(view, "row_count", 1):
                    return  # nothing to paint
            time.sleep(0.01)

    def on_analysis_progress(self, message: AnalysisProgress) -> None:
        if self._replaced(None, message.opened):
            return  # a replaced scene's late message (open_scene)
        self.status_text = (
            f"analysing {self.sub_title}: {message.stage} ({message.done}/{message.total}) — Esc cancels"
        )
        screen = self.screen
        if isinstance(screen, OverviewScreen):
            screen.show_progress(message.done, message.total)

    def _replaced(self, scene: Path | None, opened: int | None) -> bool:
        """Whether a message comes from a scene (or an opening of it) that open_scene replaced."""
        return (scene is not None and scene != self.scene) or (opened is not None and opened != self.opened)

    def on_scene_opened(self, message: SceneOpened) -> None:
        if self._replaced(message.scene, message.opened):
            return  # a replaced scene's late message (open_scene)
        self.plog_files = message.plogs
        self._sync()

    def on_analysis_ready(self, message: AnalysisReady) -> None:
        if self._replaced(message.state.scene, message.opened):
            return  # a replaced scene's late result (open_scene)
        self.state = message.state
        self.status_text = "ready"
        self.analysis_stopped = False
        self.bump()

    def on_analysis_failed(self, message: AnalysisFailed) -> None:
        if self._replaced(message.scene, message.opened):
            return  # a replaced scene's late message (open_scene)
        self.analysis_stopped = True
        self.status_text = (
            f"analysis stopped: {message.error} — press {self.key_for('app.retry', RETRY_KEY)} to retry"
        )
        self.notify(message.error, title="analysis stopped", severity="error", timeout=10)
        self._sync()

    def action_retry(self) -> None:
        """Run the analysis again after it failed or was cancelled (the scene is re-read from disk)."""
        if any(w.group == "analysis" and w.is_running for w in self.workers):
            self.notify("the analysis is still running", severity="warning")
        elif self.scene is None:
            how = "Enter on a rank (9) opens one" if self.scan is not None else "run `skdbg tui SCENE`"
            self.notify(f"no scene to analyse: {how}", severity="warning")
        elif self.state is not None:
            self.notify("the analysis is complete: nothing to retry", timeout=3)
        else:
            self.analysis_stopped = False
            self.status_text = "analysis running…"
            self._sync()
            self.analyse(self.scene, self.opened)

    def open_scene(self, scene: Path, *, pid: int | None = None, title: str | None = None) -> None:
        """Replace the opened scene (the Ranks screen's Enter): every other mode restarts empty and
        the analysis runs on ``scene`` as for ``skdbg tui SCENE``; the current screen stays."""
        self.workers.cancel_group(self, "analysis")
        self.opened += 1
        self.scene, self.pid, self._ctx = scene, pid, None
        if self.session is not None and self.session.attempt is not None:
            # the session stays; its attempt was the replaced scene's (Accept must not take the new
            # scene's proposal from it): the new scene is found in, or frozen into, the session
            self.session = replace(self.session, attempt=None)
        self.state, self.plog_files = None, None
        self.analysis_stopped = False
        self.status_text = "analysis running…"
        self.sub_title = title or scene.name
        for mode, base in self.MODES.items():
            if mode != self.current_mode:
                self.remove_mode(mode)
                self.add_mode(mode, base)
        self.bump()
        self.analyse(scene, self.opened)

    def bump(self) -> None:
        """The state changed: the visible screen redraws now, hidden ones when resumed."""
        self.version += 1
        self._sync()

    def _sync(self) -> None:
        screen = self.screen
        if isinstance(screen, TriageScreen):
            screen.sync()

    # ------------------------------------------------------------------ actions

    def action_show(self, mode: str) -> None:
        if self.current_mode != mode:
            self.switch_mode(mode)

    def action_help(self) -> None:
        from skdbg.tui.screens.dialogs import HelpScreen  # textual's Markdown: loaded on first F1

        if not isinstance(self.screen, HelpScreen):
            st = self.state
            codes = analysis_codes(st.analysis, st.proposal) if st is not None else []
            self.push_screen(HelpScreen(codes))

    def explain(self, code: str) -> None:
        """Show what ``code`` means (the palette's "Explain …"; same text as ``skdbg explain``)."""
        from skdbg.tui.screens.dialogs import ExplainScreen

        self.push_screen(ExplainScreen(code))

    def action_explain_here(self) -> None:
        """``?``: explain the ids on the current row or item; none there → ask for one."""
        screen = self.screen
        codes = screen.codes_here() if isinstance(screen, TriageScreen) else []
        if codes:
            from skdbg.tui.screens.dialogs import ExplainScreen

            self.push_screen(ExplainScreen(*codes))
        else:
            self.explain_prompt()

    def explain_prompt(self) -> None:
        """Ask for any code, then explain it."""

        def answer(code: str | None) -> None:
            if code and code.strip():
                self.explain(code.strip())

        self.push_screen(
            PromptScreen("Explain which code? (e.g. T4, R5, §4.4 rule 3)", "", prompt_id="explain"), answer
        )

    def action_cancel(self) -> None:
        running = [w for w in self.workers if w.group == "analysis" and w.is_running]
        if running:
            self.workers.cancel_group(self, "analysis")
            self.notify("cancelling the analysis…")

    def action_copy(self) -> None:
        screen = self.screen
        text = screen.copy_text() if isinstance(screen, TriageScreen) else None
        if text:
            self.copy_text(text)
        else:
            self.notify("nothing selected to copy", severity="warning")

    # ------------------------------------------------------------------ jump to evidence

    def jump_to(self, item: EvidenceItem) -> None:
        """Open a cited item: plog lines in the Log screen, anything else in the source pane."""
        st = self.state
        if st is None or not item.file:
            return
        path = (st.ctx.root / item.file).resolve()
        plogs = {p.resolve() for p in plog_files(st.ctx)}
        if path in plogs and item.line is not None:
            line = item.line
            self.action_show("log")
            self.call_after_refresh(self._goto_log, path, line)
            return
        if not path.is_file():
            self.notify(f"{item.file} is not in the scene", severity="error")
            return
        self.push_screen(SourceScreen(path, item))

    def _goto_log(self, path: Path, line: int) -> None:
        screen = self.screen
        if isinstance(screen, LogScreen):
            screen.goto(path, line)


__all__ = ["SkdbgApp"]
