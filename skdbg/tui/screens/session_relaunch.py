"""The live view of a re-launch started from the Session screen: process state, log tail, verdict.

Why a modal with a thread worker: :func:`skdbg.loop.relaunch.relaunch` (what ``skdbg relaunch``
runs) blocks until the job ends, then freezes and verifies. The worker runs it unchanged; its
progress lines, the job's output and the job's pid come back through the request's callbacks.
Esc asks the runner to stop the job the way Ctrl-C does (SIGTERM to its process group, SIGKILL
after the grace period): the attempt is then recorded ``interrupted`` — nothing is faked or dropped.
"""

from __future__ import annotations

import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, RichLog, Static

from skdbg.loop.relaunch import RelaunchError, RelaunchRequest, relaunch, verdict_lines
from skdbg.loop.runner import RunnerError
from skdbg.parsers.common import ParseError
from skdbg.sessions.errors import LedgerError
from skdbg.spans import MAX_WAIT_SECONDS, span_expected, span_ok
from skdbg.tui.keymap import RELAUNCH_BINDINGS
from skdbg.tui.screens.session_ref import SessionRef
from skdbg.tui.widgets.footer import Footer
from skdbg.tui.widgets.text import escape

JOB_HELP = (
    "the job to run, no shell (e.g. python3 infer.py), or --sim MODEL_DIR; options: --seed N --timeout S"
)
#: lines of the job's output the view keeps
TAIL = 200


@dataclass(frozen=True, slots=True)
class Job:
    """What the prompt asked for (the ``skdbg relaunch`` arguments the TUI offers)."""

    argv: list[str] | None
    sim_model: Path | None
    seed: int | None = None
    timeout: float | None = None


def parse_job(text: str) -> Job:
    """``--sim DIR``, ``--seed N``, ``--timeout S`` then the job's ARGV (``--`` optional before it).
    ValueError names what is wrong."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"cannot read the job line: {exc}") from exc
    sim: Path | None = None
    seed: int | None = None
    timeout: float | None = None
    while words and words[0].startswith("--"):
        opt = words.pop(0)
        if opt == "--":
            break
        if opt not in ("--sim", "--seed", "--timeout"):
            raise ValueError(f"unknown option {opt} (--sim, --seed, --timeout, or `--` then the job)")
        if not words:
            raise ValueError(f"{opt} needs a value")
        value = words.pop(0)
        try:
            if opt == "--sim":
                sim = Path(value).expanduser()
            elif opt == "--seed":
                seed = int(value)
            else:
                timeout = float(value)
        except ValueError as exc:
            raise ValueError(f"{opt}: expected a number, got {value!r}") from exc
        if (
            timeout is not None
            and opt == "--timeout"
            and not span_ok(timeout, positive=True, most=MAX_WAIT_SECONDS)
        ):
            raise ValueError(
                f"--timeout: expected {span_expected(positive=True, most=MAX_WAIT_SECONDS)}, got {value!r}"
            )
    if sim is not None and words:
        raise ValueError("give either --sim MODEL_DIR or the job, not both")
    if sim is None and not words:
        raise ValueError(f"no job given ({JOB_HELP})")
    return Job(argv=words or None, sim_model=sim, seed=seed, timeout=timeout)


class RelaunchScreen(ModalScreen[None]):
    """Runs one re-launch and shows it live; Esc cancels it while it runs, closes the view after."""

    BINDINGS: ClassVar[list[BindingType]] = [*RELAUNCH_BINDINGS]
    DEFAULT_CSS = """
    RelaunchScreen { align: center middle; }
    RelaunchScreen > #relaunch-box { width: 90%; height: 90%; border: round $accent; padding: 0 1; }
    RelaunchScreen #relaunch-log { height: 1fr; border: solid $panel; }
    RelaunchScreen #relaunch-result { height: auto; max-height: 14; }
    """

    def __init__(self, ref: SessionRef, round_id: str, job: Job) -> None:
        super().__init__(id="relaunch")
        self.ref = ref
        self.round_id = round_id
        self.job = job
        self.cancel = threading.Event()
        self.running = True
        self.pid: int | None = None
        self.started_at: float | None = None
        self.state = "starting"
        self.result_lines: list[str] = []

    def compose(self) -> ComposeResult:
        with Vertical(id="relaunch-box"):
            yield Label(
                f"[b]relaunch {escape(self.round_id)}[/] — session {escape(self.ref.session_id or '')}"
            )
            yield Static("starting", id="relaunch-state")
            yield RichLog(id="relaunch-log", max_lines=TAIL, wrap=False, markup=False)
            yield Static("", id="relaunch-result")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)
        self.run_job()

    # ------------------------------------------------------------------ the worker

    @work(thread=True, exclusive=True, group="relaunch", description="relaunch a round", exit_on_error=False)
    def run_job(self) -> None:
        call = self._call
        req = RelaunchRequest(
            session_id=self.ref.session_id or "",
            round_id=self.round_id,
            argv=self.job.argv,
            sim_model=self.job.sim_model,
            source_root=None,
            timeout=self.job.timeout,
            seed=self.job.seed,
            progress=lambda text: call(self._progress, text),
            output=lambda line: call(self._output, line),
            started=lambda pid: call(self._started, pid),
            cancel=self.cancel,
        )
        try:
            with self.ref.open() as ledger:
                result = relaunch(ledger, req)
                history = ledger.status_history("attempt", result.attempt.pk)
        except (RelaunchError, RunnerError, LedgerError, ParseError) as exc:
            call(self._failed, f"nothing recorded: {exc}" if isinstance(exc, RelaunchError) else str(exc))
            return
        except Exception as exc:  # a bug must not leave the view "running" forever
            call(self._failed, f"internal error: {exc!r}")
            return
        doc = result.to_json()
        doc["attempt"]["status_detail"] = history[-1]["detail"] if history else None
        call(self._finished, verdict_lines(doc), result.status)

    def _call(self, fn: Callable[..., object], *args: object) -> None:
        """Hand an update to the UI thread; if the UI is gone (quit while the job ran), end the job."""
        try:
            self.app.call_from_thread(fn, *args)
        except Exception:  # noqa: BLE001 — no UI left to tell: stop the job instead of blocking its output
            self.cancel.set()

    def on_unmount(self) -> None:
        if self.running:
            self.cancel.set()  # the view closed with the job running (the app quit): end it as Esc does

    # ------------------------------------------------------------------ live updates (UI thread)

    def _show_state(self) -> None:
        running = ""
        if self.pid is not None and self.started_at is not None and self.running:
            running = f" — pid {self.pid}, {time.monotonic() - self.started_at:.0f} s"
        hint = " — Esc cancels (the job's process group is ended)" if self.running else " — Esc closes"
        self.query_one("#relaunch-state", Static).update(f"{escape(self.state)}{running}[dim]{hint}[/]")

    def _tick(self) -> None:
        if self.running:
            self._show_state()

    def _progress(self, text: str) -> None:
        self.state = text
        self._show_state()

    def _output(self, line: str) -> None:
        self.query_one("#relaunch-log", RichLog).write(line)

    def _started(self, pid: int) -> None:
        self.pid = pid
        self.started_at = time.monotonic()
        self.state = f"running pid {pid}"
        self._show_state()

    def _failed(self, message: str) -> None:
        self.running = False
        self.state = "stopped"
        self.result_lines = [message]
        self.query_one("#relaunch-result", Static).update(f"[b red]{escape(message)}[/]")
        self._show_state()
        self.notify(message, title="relaunch", severity="error", timeout=10)

    def _finished(self, lines: list[str], status: str) -> None:
        self.running = False
        self.state = f"done: {status}"
        self.result_lines = lines
        self.query_one("#relaunch-result", Static).update("\n".join(escape(x) for x in lines))
        self._show_state()

    # ------------------------------------------------------------------ keys

    def action_cancel_or_close(self) -> None:
        if self.running:
            if not self.cancel.is_set():
                self.cancel.set()
                self.state = "cancelling: SIGTERM to the job's process group (SIGKILL after the grace period)"
                self._show_state()
            return
        self.dismiss(None)


__all__ = ["JOB_HELP", "Job", "RelaunchScreen", "parse_job"]
