"""Candidate: ``skdbg codegen candidate`` for the proposal in hand, and writing its folder.

The candidate is built by the same headless call as the CLI (:func:`build_candidate`, in a worker:
the generator takes a moment to import and plan), for the proposal of the TUI's state — the
accepted one, or the current one labelled "not accepted yet". The screen shows the predicted SKs
before/after, the marker patch, the re-launch environment and the V1–V5 plan; when the candidate
cannot be built it shows the CLI's error instead. ``w`` writes the folder exactly as the CLI does
(atomic; a non-empty folder is refused unless the user confirms, the CLI's ``--force``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from skdbg.atomic import OutputNotEmptyError, ensure_fresh_dir
from skdbg.parsers.common import ParseError
from skdbg.tui.keymap import CANDIDATE_BINDINGS, CANDIDATE_REPLACE_BINDINGS
from skdbg.tui.prompt import PromptScreen
from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.state import TriageState
from skdbg.tui.widgets.footer import Footer
from skdbg.tui.widgets.text import escape

if TYPE_CHECKING:
    from skdbg.codegen.fusion.candidate import Candidate

#: the build key: which state, accepted or not, which proposal (its JSON), which source root
BuildKey = tuple[int, bool, str, str]


def proposal_where(accepted: bool) -> str:
    """How the proposal is named in the generator's errors (the CLI names its --proposal file)."""
    return "accepted proposal" if accepted else "current proposal"


def default_folder(scene: Path) -> Path:
    """Where ``w`` offers to write: ``skdbg-candidate-<scene>`` in the current directory."""
    return Path.cwd() / f"skdbg-candidate-{scene.name}"


class ReplaceScreen(ModalScreen[bool]):
    """Confirm replacing a non-empty folder (the CLI's ``--force``): y replaces, n / Esc keeps it."""

    DEFAULT_CSS = "ReplaceScreen { align: center middle; }"
    BINDINGS: ClassVar[list[BindingType]] = [*CANDIDATE_REPLACE_BINDINGS]

    def __init__(self, refusal: str) -> None:
        super().__init__(id="candidate-replace")
        self.refusal = refusal

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(escape(self.refusal), id="replace-why")
            yield Label("Replace it with the candidate (the CLI's --force)?")
            with Horizontal(id="replace-buttons"):
                yield Button("Replace (y)", id="replace", variant="error")
                yield Button("Keep (n)", id="keep", variant="primary")
        yield Footer()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "replace")

    def action_replace(self) -> None:
        self.dismiss(True)

    def action_keep(self) -> None:
        self.dismiss(False)


class CandidateScreen(TriageScreen):
    BINDINGS: ClassVar[list[BindingType]] = [*CANDIDATE_BINDINGS]

    def __init__(self) -> None:
        super().__init__()
        self.source_root: Path | None = None  # None: the scene (the CLI's default)
        self.candidate: Candidate | None = None
        self.error: str | None = None
        self.written: Path | None = None
        self._key: BuildKey | None = None

    def compose_body(self) -> ComposeResult:
        with Vertical(id="candidate-body"):
            yield Static(id="candidate-status", classes="section")
            yield Static(id="candidate-error")
            with VerticalScroll(id="candidate-scroll"):
                yield Static("Predicted SKs", classes="section")
                yield Static(id="candidate-sks")
                yield Static("Marker patch (marker.patch)", classes="section")
                yield Static(id="candidate-patch")
                yield Static("Re-launch environment", classes="section")
                yield Static(id="candidate-env")
                yield Static("Verification plan V1–V5", classes="section")
                yield Static(id="candidate-plan")

    # ------------------------------------------------------------------ building

    def build_key(self, state: TriageState) -> BuildKey:
        root = "" if self.source_root is None else str(self.source_root)
        return (id(state), state.accepted, json.dumps(state.proposal.to_json(), sort_keys=True), root)

    def populate(self, state: TriageState) -> None:
        key = self.build_key(state)
        if key != self._key:
            self._key = key
            self.candidate = None
            self.error = None
            self.written = None
            self.build(state, key)
        self.draw()

    @work(
        thread=True, exclusive=True, group="candidate", description="build the candidate", exit_on_error=False
    )
    def build(self, state: TriageState, key: BuildKey) -> None:
        from skdbg.codegen.fusion.candidate import CandidateError, build_candidate

        try:
            cand = build_candidate(
                state.scene,
                state.proposal.to_json(),
                source_root=self.source_root,
                where=proposal_where(state.accepted),
            )
        except (CandidateError, ParseError) as exc:
            self.app.call_from_thread(self._built, key, None, str(exc))
        except OSError as exc:
            self.app.call_from_thread(self._built, key, None, f"{exc.filename or ''}: {exc.strerror or exc}")
        else:
            self.app.call_from_thread(self._built, key, cand, None)

    def _built(self, key: BuildKey, cand: Candidate | None, error: str | None) -> None:
        if key != self._key:
            return  # an older proposal's build finished late
        self.candidate, self.error = cand, error
        self.draw()

    # ------------------------------------------------------------------ drawing

    def _status(self, state: TriageState) -> str:
        p = state.proposal
        key = self.skdbg.key_for  # the keys in use (the user may have remapped them)
        accept = f"{key('screen.proposal', '5')}, then {key('proposal.accept', 'a')}"
        which = (
            "[b green]accepted proposal[/]"
            if state.accepted
            else f"[b yellow]current proposal — not accepted yet[/] (accept it on the Proposal screen: {accept})"
        )
        what = f"{p.status}"
        if p.status != "proposed" and (p.blocked_reason or p.reason):
            what += f" ({p.blocked_reason or p.reason})"
        if p.mechanism:
            what += f" · {p.mechanism}"
        if p.excluded:
            what += f" · excludes {', '.join(map(str, p.excluded))}"
        if p.collateral:
            what += f" (collateral {', '.join(map(str, p.collateral))})"
        root = "the scene" if self.source_root is None else escape(str(self.source_root))
        lines = [
            f"Candidate of the {which}: {escape(what)}",
            f"[dim]marker source root: {root} ({key('candidate.source_root', 's')} changes it)[/]",
        ]
        if self.written is not None:
            lines.append(f"[green]written: {escape(str(self.written))}[/]")
        elif self.candidate is not None:
            lines.append(
                f"[dim]{key('candidate.write', 'w')} writes the candidate folder "
                "(as `skdbg codegen candidate -o DIR`)[/]"
            )
        return "\n".join(lines)

    def draw(self) -> None:
        st = self.state
        if st is None:
            return
        self.query_one("#candidate-status", Static).update(self._status(st))
        error = self.query_one("#candidate-error", Static)
        scroll = self.query_one("#candidate-scroll", VerticalScroll)
        cand = self.candidate
        if self.error is not None:
            hint = ""
            if "--source-root" in self.error:
                hint = f"\n[dim]In the TUI, {self.skdbg.key_for('candidate.source_root', 's')} sets the source root.[/]"
            error.update(f"[b red]cannot build the candidate:[/] {escape(self.error)}{hint}")
            error.display = True
            scroll.display = False
            return
        if cand is None:
            error.update("[dim]building the candidate…[/]")
            error.display = True
            scroll.display = False
            return
        # the renderers load with the first candidate, not with the app (start-up paints first)
        from skdbg.tui.widgets.candidate import patch_view, plan_view, prediction_view, relaunch_view

        error.display = False
        scroll.display = True
        self.query_one("#candidate-sks", Static).update(
            prediction_view(cand.manifest, cand.baseline, cand.predicted)
        )
        self.query_one("#candidate-patch", Static).update(patch_view(cand.files["marker.patch"]))
        self.query_one("#candidate-env", Static).update(relaunch_view(cand.manifest))
        self.query_one("#candidate-plan", Static).update(plan_view(cand.manifest))

    def copy_text(self) -> str | None:
        cand = self.candidate
        return None if cand is None else cand.files["marker.patch"]

    # ------------------------------------------------------------------ source root

    def action_source_root(self) -> None:
        st = self.state
        if st is None:
            return
        current = str(self.source_root or st.scene)

        def done(answer: str | None) -> None:
            if answer is None or self.state is None:
                return
            text = answer.strip()
            root = Path(text).expanduser() if text else None
            self.source_root = None if root is None or root == self.state.scene else root
            self.written = None
            self._drawn = -1  # rebuild on the next sync
            self.sync()

        self.app.push_screen(
            PromptScreen(
                "Where does the model source of the marker edits live? (empty: the scene)",
                current,
                prompt_id="candidate-source-prompt",
            ),
            done,
        )

    # ------------------------------------------------------------------ writing

    def action_write(self) -> None:
        st = self.state
        if st is None:
            return
        if self.candidate is None:
            why = self.error or "the candidate is still being built"
            self.notify(f"nothing to write: {why}", title="no candidate", severity="error", timeout=8)
            return
        cand = self.candidate

        def done(path: str | None) -> None:
            if path and path.strip():
                self.write(cand, Path(path.strip()).expanduser(), False)

        self.app.push_screen(
            PromptScreen(
                "Write the candidate folder to:",
                str(default_folder(st.scene)),
                prompt_id="candidate-write-prompt",
            ),
            done,
        )

    @work(
        thread=True,
        exclusive=True,
        group="candidate-write",
        description="write the candidate folder",
        exit_on_error=False,
    )
    def write(self, cand: Candidate, out: Path, force: bool) -> None:
        from skdbg.codegen.fusion.candidate import CANDIDATE_WHAT, write_candidate

        try:
            write_candidate(cand, out, force=force)
        except OutputNotEmptyError as exc:
            refusal = str(exc)
            if not force:
                try:  # would the CLI's --force be accepted? (never for a file, or a folder holding an input)
                    ensure_fresh_dir(out, force=True, what=CANDIDATE_WHAT, inputs=cand.inputs)
                except OutputNotEmptyError as hard:
                    self.app.call_from_thread(self._write_failed, str(hard))
                    return
                self.app.call_from_thread(self._confirm_replace, cand, out, refusal)
                return
            self.app.call_from_thread(self._write_failed, refusal)
        except OSError as exc:
            self.app.call_from_thread(self._write_failed, f"{exc.filename or out}: {exc.strerror or exc}")
        else:
            self.app.call_from_thread(self._written, out)

    def _confirm_replace(self, cand: Candidate, out: Path, refusal: str) -> None:
        self.notify(refusal, title="not written", severity="warning", timeout=8)

        def done(replace: bool | None) -> None:
            if replace:
                self.write(cand, out, True)
            else:
                self.notify(f"kept {out}: nothing written", title="not written")

        self.app.push_screen(ReplaceScreen(refusal), done)

    def _write_failed(self, message: str) -> None:
        self.notify(message, title="candidate not written", severity="error", timeout=10)

    def _written(self, out: Path) -> None:
        self.written = out
        self.notify(f"candidate written: {out}", title="written")
        self.draw()


__all__ = ["CandidateScreen", "ReplaceScreen", "default_folder", "proposal_where"]
