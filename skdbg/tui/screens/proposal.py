"""Proposal: choose the mechanism, edit the excluded set, preview the diff, accept/block, export.

Every edit is judged by the headless rules (:mod:`skdbg.triage.edit`) in a worker: a legal cut is
re-planned (fresh marker edits and diff), an illegal one is refused with the rule and the
evidence line of the edge it would break — the excluded set stays as it was. A cut the fragment
rules allow but the re-plan can only block (e.g. §4.4 rule 3: the fragment is not contiguous in
source) is refused the same way: the editor never keeps an edit it reports as illegal.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, RadioButton, RadioSet, Static

from skdbg.atomic import OutputNotEmptyError
from skdbg.parsers.common import ParseError
from skdbg.sessions.errors import LedgerError
from skdbg.triage.model import MECHANISMS, Decision, Proposal
from skdbg.tui.keymap import PROPOSAL_BINDINGS
from skdbg.tui.prompt import PromptScreen
from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.screens.session_ref import NEW_SESSION, SessionRef, no_session_text, record_acceptance
from skdbg.tui.widgets.text import escape, proposal_summary

if TYPE_CHECKING:  # the edit/report stack loads when used: the app paints before the triage imports
    from skdbg.triage.edit import CutCheck
    from skdbg.tui.state import TriageState

_RULE = re.compile(r"(§[0-9.]+(?:\([a-z]\))?(?: rule \d+)?)")


def blocked_check(check: CutCheck, proposal: Proposal) -> CutCheck:
    """A refusal for a cut whose re-plan is blocked: the rule it names (else the route), and why."""
    reason = proposal.blocked_reason or "the re-planned proposal is blocked"
    head = _RULE.match(reason)
    if head is not None:
        rule, detail = head.group(1), reason[head.end() :].lstrip(": ")
    else:
        cited = _RULE.search(reason)
        rule = cited.group(1) if cited is not None else proposal.route or "R6"
        detail = reason
    return replace(check, ok=False, rule=rule, detail=detail, evidence=None)


class ProposalScreen(TriageScreen):
    BINDINGS: ClassVar[list[BindingType]] = [*PROPOSAL_BINDINGS]

    def __init__(self) -> None:
        super().__init__()
        self.last_check: CutCheck | None = None
        self._filling = False

    def compose_body(self) -> ComposeResult:
        with Vertical(id="proposal-body"):
            yield Static(id="proposal-status", classes="section")
            yield Static(id="cut-check")
            with Horizontal(id="proposal-edit"):
                yield DataTable(id="kernels", cursor_type="row")
                with Vertical(id="proposal-side"):
                    with RadioSet(id="mechanism"):
                        for m in MECHANISMS:
                            yield RadioButton(m, id=f"mech-{m}")
                    with Horizontal(id="proposal-buttons"):
                        yield Button("Accept", id="accept", variant="success")
                        yield Button("Block", id="block", variant="error")
                        yield Button("Export", id="export", variant="primary")
            with VerticalScroll(id="diff-scroll"):
                yield Static(id="diff")
                yield Static(id="safety")

    # ------------------------------------------------------------------ drawing

    def populate(self, state: TriageState) -> None:
        p = state.proposal
        summary = proposal_summary(p, state.accepted, edits=False)
        d = state.decision if state.accepted else None
        if d is not None:
            summary += (
                f"\n[green]recorded in session {escape(str(d.session))} as round {escape(str(d.round_id))}[/] "
                f"[dim](from {escape(str(d.source_attempt))}; 6 shows the session)[/]"
            )
        self.query_one("#proposal-status", Static).update(summary)
        check = self.query_one("#cut-check", Static)
        if self.last_check is not None and not self.last_check.ok:
            check.update(f"[b red]{escape(self.last_check.message)}[/]")
        elif self.last_check is not None:
            check.update(f"[green]{escape(self.last_check.message)}[/]")
        else:
            check.update(
                "[dim]space toggles a child in/out of the excluded set; the safety rules are checked live[/]"
            )
        table = self.query_one("#kernels", DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        table.add_columns("excl", "nodeId", "funcName", "stream")
        inst = state.instance
        for k in inst.kernels if inst is not None else ():
            table.add_row(
                Text("[x]" if k.node_id in p.excluded else "[ ]"),
                str(k.node_id),
                Text(k.func_name or "?"),
                "" if k.stream_id is None else str(k.stream_id),
                key=str(k.node_id),
            )
        if table.row_count:
            table.move_cursor(row=min(max(row, 0), table.row_count - 1))
        self._filling = True
        for m in MECHANISMS:
            self.query_one(f"#mech-{m}", RadioButton).value = p.mechanism == m
        self._filling = False
        diff = self.query_one("#diff", Static)
        if p.diff:
            diff.update(Syntax(p.diff, "diff", theme="ansi_dark", word_wrap=True))
        else:
            diff.update("[dim]no marker diff (" + escape("; ".join(p.notes) or "no edits") + ")[/]")
        safety = "\n".join(
            f"{'[red]blocks[/] ' if s.blocks else ''}[b]{s.kind}[/] {escape(s.detail)}\n    [dim]{escape(s.evidence)}[/]"
            for s in p.safety
        )
        self.query_one("#safety", Static).update(safety or "[dim]no safety notes[/]")
        table.focus()

    # ------------------------------------------------------------------ editing

    def _editable(self) -> bool:
        st = self.state
        if st is None or st.instance is None or st.analysis.proposal.child is None:
            self.notify("nothing to edit: the analysis proposes no exclusion", severity="warning")
            return False
        return True

    def selected_node(self) -> int | None:
        table = self.query_one("#kernels", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return None if key is None else int(key)

    def action_toggle_child(self) -> None:
        st = self.state
        node = self.selected_node()
        if st is None or node is None or not self._editable():
            return
        current = set(st.proposal.excluded)
        current ^= {node}
        mechanism = st.proposal.mechanism or st.analysis.proposal.mechanism or MECHANISMS[0]
        self.apply_edit(current, mechanism, f"toggle nodeId {node}")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_toggle_child()

    def action_mechanism(self) -> None:
        st = self.state
        if st is None or not self._editable():
            return
        cur = st.proposal.mechanism
        nxt = (
            MECHANISMS[(MECHANISMS.index(cur) + 1) % len(MECHANISMS)] if cur in MECHANISMS else MECHANISMS[0]
        )
        self.choose_mechanism(nxt)

    def choose_mechanism(self, mechanism: str) -> None:
        st = self.state
        if st is None or not self._editable():
            return
        excluded = set(st.proposal.excluded) or set(st.analysis.proposal.excluded)
        self.apply_edit(excluded, mechanism, f"mechanism {mechanism}")

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        event.stop()
        if self._filling or event.pressed.id is None:
            return
        mech = event.pressed.id.removeprefix("mech-")
        st = self.state
        if st is not None and st.proposal.mechanism != mech:
            self.choose_mechanism(mech)

    @work(
        thread=True, exclusive=True, group="replan", description="re-plan the proposal", exit_on_error=False
    )
    def apply_edit(self, excluded: set[int], mechanism: str, what: str) -> None:
        st = self.state
        if st is None or st.instance is None:
            return
        from skdbg.triage.edit import check_cut, replan

        check = check_cut(st.ctx, st.instance, excluded)
        if not check.ok:
            self.app.call_from_thread(self._refused, check)
            return
        proposal = replan(
            st.ctx, st.loc, st.analysis.verdict, st.analysis.proposal, check.excluded, mechanism
        )
        if proposal.status == "blocked":
            self.app.call_from_thread(self._refused, blocked_check(check, proposal))
            return
        self.app.call_from_thread(self._applied, check, proposal, what)

    def _refused(self, check: CutCheck) -> None:
        self.last_check = check
        self.notify(check.message, title="illegal cut refused", severity="error", timeout=8)
        self.skdbg.bump()
        self.sync()

    def _applied(self, check: CutCheck, proposal: Proposal, what: str) -> None:
        st = self.state
        if st is None:
            return
        self.last_check = check
        st.set_proposal(proposal, what)
        self.skdbg.bump()
        self.sync()

    def action_reset(self) -> None:
        st = self.state
        if st is None:
            return
        self.last_check = None
        st.set_proposal(st.analysis.proposal, "reset")
        self.skdbg.bump()
        self.sync()

    # ------------------------------------------------------------------ decisions

    def action_accept(self) -> None:
        """Record the proposal (with the edits) in the session ledger, as ``skdbg session propose``.

        Without a session a prompt asks which (an id, or ``new``); Esc records nothing and the
        proposal stays unaccepted — acceptance is the ledger row, never only a flag on screen."""
        st = self.state
        if st is None:
            return
        if st.proposal.status != "proposed":
            self.notify(f"a {st.proposal.status} proposal cannot be accepted", severity="error")
            return
        if st.accepted and st.decision is not None:
            self.notify(
                f"already accepted: recorded as round {st.decision.round_id} of session {st.decision.session}",
                timeout=6,
            )
            return
        ref = self.skdbg.session or SessionRef.default()
        if ref.session_id is not None:
            self.record_in_session(ref, ref.session_id)
            return

        def answer(session: str | None) -> None:
            if session is None or not session.strip():
                self.notify(
                    "not accepted, nothing recorded: " + no_session_text(st.scene),
                    title="no session",
                    severity="warning",
                    timeout=12,
                )
                return
            self.record_in_session(ref, session)

        self.app.push_screen(
            PromptScreen(
                f"Record the accepted proposal in which session? An id (skdbg session list) or `{NEW_SESSION}`; "
                f"ledger {ref.home}",
                NEW_SESSION,
                prompt_id="accept-session-prompt",
            ),
            answer,
        )

    @work(thread=True, exclusive=True, group="accept", description="record the proposal", exit_on_error=False)
    def record_in_session(self, ref: SessionRef, session: str) -> None:
        st = self.state
        if st is None:
            return
        proposal = st.proposal
        try:
            new_ref, decision = record_acceptance(
                ref, session, ctx=st.ctx, analysis=st.analysis, proposal=proposal, edits=st.edits()
            )
        except (LedgerError, ParseError, OSError) as exc:
            self.app.call_from_thread(
                self.notify, f"not accepted, nothing recorded: {exc}", title="accept failed", severity="error"
            )
            return
        self.app.call_from_thread(self._accepted, proposal, new_ref, decision)

    def _accepted(self, proposal: Proposal, ref: SessionRef, decision: Decision) -> None:
        st = self.state
        self.skdbg.session = ref
        if st is None or st.proposal is not proposal:
            self.notify(
                f"recorded as round {decision.round_id}, but the proposal was edited meanwhile: accept again",
                severity="warning",
            )
            return
        st.accepted = True
        st.decision = decision
        st.history.append(f"accepted: round {decision.round_id} of session {decision.session}")
        self.notify(
            f"accepted: recorded in session {decision.session} as round {decision.round_id} "
            f"(proposal {decision.ledger_status}, {str(decision.proposal_sha256)[:12]}) — x exports it, 6 shows the session",
            title="accepted",
            timeout=8,
        )
        self.skdbg.bump()
        self.sync()

    def action_block(self) -> None:
        st = self.state
        if st is None:
            return

        def done(reason: str | None) -> None:
            if reason is None or self.state is None:
                return
            from skdbg.triage.edit import mark_blocked

            self.state.set_proposal(mark_blocked(self.state.proposal, reason), "blocked")
            self.skdbg.bump()
            self.sync()

        self.app.push_screen(
            PromptScreen("Why is this proposal blocked?", "", prompt_id="block-prompt"), done
        )

    def action_export(self) -> None:
        st = self.state
        if st is None:
            return
        default = str(self.skdbg.report_dir or Path.cwd() / f"skdbg-report-{st.scene.name}")

        def done(path: str | None) -> None:
            if path:
                self.export_report(Path(path).expanduser())

        self.app.push_screen(
            PromptScreen("Export the report folder to:", default, prompt_id="export-prompt"), done
        )

    @work(
        thread=True,
        exclusive=True,
        group="export",
        description="write the report folder",
        exit_on_error=False,
    )
    def export_report(self, out: Path) -> None:
        st = self.state
        if st is None:
            return
        from skdbg.pictures.export import report_pictures
        from skdbg.triage.report import ReportError, write_report

        try:
            final = st.final_analysis()
            pictures = report_pictures(st.ctx, st.instance, final)  # the edited cut, drawn
            files = write_report(st.ctx, final, out, pictures=pictures)
        except (ReportError, OutputNotEmptyError, OSError) as exc:
            self.app.call_from_thread(self.notify, str(exc), title="export failed", severity="error")
            return
        self.app.call_from_thread(self.notify, f"report written: {files[0].parent}", title="exported")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        actions = {"accept": self.action_accept, "block": self.action_block, "export": self.action_export}
        action = actions.get(event.button.id or "")
        if action is not None:
            action()

    def copy_text(self) -> str | None:
        st = self.state
        return None if st is None else (st.proposal.diff or None)


__all__ = ["ProposalScreen"]
