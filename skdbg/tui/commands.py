"""The command palette provider (ctrl+p): screens, jumps to evidence, and context commands.

Why context-dependent (posting's provider): the palette offers what makes sense where it was
opened — proposal decisions on the Proposal screen, fault jumps on the Log screen, one "jump" per
cited evidence item and one "Explain …" per code the screens show once the analysis is in — plus
app-wide ones (themes, SVG screenshot, copy, "Explain a code…" for any id).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from skdbg.glossary import titled
from skdbg.triage.model import MECHANISMS
from skdbg.tui.palette import Command, ListedCommands
from skdbg.tui.widgets.text import analysis_codes

if TYPE_CHECKING:
    from skdbg.tui.app import SkdbgApp


SCREEN_HELP = {
    "overview": "gate, fault, verdict, routes, proposal at a glance",
    "evidence": "per-core evidence and the L1–L4 chain",
    "log": "plog files merged by time",
    "scope": "children, edges and the proposal's cut",
    "proposal": "edit, accept, block, export",
    "session": "the ledger session: rounds, attempts, verdicts; propose, relaunch, export, note",
    "candidate": "predicted SKs, marker patch, re-launch env, V1–V5 plan; write the candidate folder",
    "timeline": "per exception core, its queue's tasks: finished, COND, faulting PC, blocking wait",
    "ranks": "the scanned ranks: first failing, groups, followers; Enter opens a rank",
}


class SkdbgCommands(ListedCommands):
    def commands(self) -> list[Command]:
        from skdbg.tui.screens.candidate import CandidateScreen
        from skdbg.tui.screens.log import LogScreen
        from skdbg.tui.screens.proposal import ProposalScreen
        from skdbg.tui.screens.ranks import RanksScreen
        from skdbg.tui.screens.scope import ScopeScreen
        from skdbg.tui.screens.session import SessionScreen

        app = cast("SkdbgApp", self.app)
        out: list[Command] = [
            (f"Go to {name}", partial(app.action_show, name), help) for name, help in SCREEN_HELP.items()
        ]
        out += [
            ("Screenshot (SVG)", app.action_svg_screenshot, "save an SVG screenshot of this screen"),
            ("Copy current item", app.action_copy, "copy the selected item to the clipboard"),
            ("Help: keys", app.action_help, "explain every key binding and every code on screen (F1)"),
            ("Explain a code…", app.explain_prompt, "what any id means (as `skdbg explain CODE`)"),
            ("Cancel running work", app.action_cancel, "stop the analysis worker"),
        ]
        out += [
            (f"Theme: {name}", partial(app.set_theme, name), "switch the colour theme")
            for name in sorted(app.available_themes)
        ]
        screen = self.screen
        if isinstance(screen, LogScreen):
            out += [
                ("Log: next fault", screen.action_next_fault, "jump to the next fault line (e)"),
                ("Log: previous fault", screen.action_prev_fault, "jump to the previous fault line (E)"),
                ("Log: search", screen.action_search, "regex search (/)"),
                ("Log: filter", screen.action_filter, "by level / module / pid (f)"),
            ]
        if isinstance(screen, ScopeScreen):
            out.append(("Scope: graph / tables", screen.action_toggle_graph, "switch the scope view (g)"))
        if isinstance(screen, ProposalScreen):
            out += [
                (
                    f"Proposal: mechanism {m}",
                    partial(screen.choose_mechanism, m),
                    "re-plan with this mechanism",
                )
                for m in MECHANISMS
            ]
            out += [
                ("Proposal: accept", screen.action_accept, "accept the current proposal"),
                ("Proposal: mark blocked", screen.action_block, "record why it cannot be applied"),
                ("Proposal: export report", screen.action_export, "write the report folder"),
                ("Proposal: reset", screen.action_reset, "back to the engine's proposal"),
            ]
        if isinstance(screen, SessionScreen):
            out += [
                (
                    "Session: propose",
                    screen.action_propose,
                    "open the highlighted attempt's exclusion round (p)",
                ),
                ("Session: narrowing round", screen.action_propose_narrowing, "open a narrowing round (P)"),
                ("Session: open candidate", screen.action_open_candidate, "the Candidate screen (o)"),
                ("Session: relaunch round", screen.action_relaunch, "skdbg relaunch, live (r)"),
                ("Session: export report", screen.action_export, "skdbg session export (x)"),
                ("Session: add note", screen.action_note, "skdbg session note (n)"),
                ("Session: diff verdicts", screen.action_diff, "mark A, then B (d)"),
            ]
        if isinstance(screen, CandidateScreen):
            out += [
                ("Candidate: write folder", screen.action_write, "write the candidate folder (w)"),
                ("Candidate: source root", screen.action_source_root, "where the marker source lives (s)"),
            ]
        if isinstance(screen, RanksScreen):
            out += [
                ("Ranks: open rank", screen.action_open_rank, "open the highlighted rank's folder (o)"),
                (
                    "Ranks: exception cores",
                    screen.action_cores,
                    "open the rank, show its exception cores (e)",
                ),
                ("Ranks: first failing rank", screen.action_first, "cursor to the first failing rank (f)"),
                ("Ranks: all ranks", screen.action_all, "list every rank again (a)"),
            ]
        st = app.state
        if st is not None:
            for item in st.analysis.verdict.evidence:
                if item.file:
                    out.append(
                        (f"Jump: {item.level} {item.where}", partial(app.jump_to, item), item.excerpt[:80])
                    )
            out += [
                (f"Explain {titled(code)}", partial(app.explain, code), "what this code means")
                for code in analysis_codes(st.analysis, st.proposal)
            ]
            if st.proposal.diff:
                out.append(("Copy proposal diff", partial(app.copy_text, st.proposal.diff), "marker diff"))
        return out


__all__ = ["SCREEN_HELP", "SkdbgCommands"]
