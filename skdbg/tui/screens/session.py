"""Session: the rounds and attempts of the ledger session as a tree, verdicts, and the loop's actions.

What it shows: round → attempts with status, verdict, declared change and V1–V5 results; the
verdict history; the diff of any two verdicts (``d`` on one attempt, then on another). From here
the user proposes (``skdbg session propose``), opens the candidate, re-launches a round
(``skdbg relaunch``, live in :mod:`.session_relaunch`), exports the session report
(``skdbg session export``) and adds a note (``skdbg session note``) — each through the same
headless function the CLI calls. Nothing here edits an attempt: a settled attempt is final, and a
failed one is shown as negative evidence.

Why it opens fast on a large ledger: the rounds come from one query (:func:`session_rounds`); a
round's attempts are read (one query) and become tree nodes only when the round is expanded, a
page of the newest at a time; the frozen analyses are read one at a time when an attempt is
selected; the verdict history fills in from a worker after the first paint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import DataTable, Static, Tree
from textual.widgets.tree import TreeNode

from skdbg.sessions.attempts import propose
from skdbg.sessions.errors import LedgerError
from skdbg.sessions.store import Ledger
from skdbg.sessions.views import (
    TreeAttempt,
    TreeRound,
    diff_verdicts,
    round_attempts,
    session_attempts,
    session_rounds,
    verdict_summary,
)
from skdbg.show import show
from skdbg.tui.keymap import SESSION_BINDINGS
from skdbg.tui.prompt import PromptScreen
from skdbg.tui.screens.base import TriageScreen
from skdbg.tui.screens.session_ref import SessionRef
from skdbg.tui.state import TriageState
from skdbg.tui.widgets.text import escape

#: attempts a round shows at once (the newest); an "earlier attempts" node adds this many more
PAGE = 200
#: verdicts the history table lists (the newest); the full history is `skdbg session show --format json`
HISTORY_LIMIT = 500
#: settled statuses that are negative evidence: the change was tried and did not hold
NEGATIVE = ("failed", "timed_out")
GATE_MARK = {"passed": ("✓", "green"), "failed": ("✗", "red"), "not_run": ("–", "dim")}
STATUS_STYLE = {
    "passed": "green",
    "failed": "red",
    "timed_out": "red",
    "invalid": "yellow",
    "interrupted": "yellow",
    "running": "cyan",
    "not_run": "dim",
}


def gates_text(gates: dict[str, str]) -> Text:
    """``V1✓ V2✗ V3–`` — one mark per recorded gate (none: not verified)."""
    out = Text()
    for gate in sorted(gates):
        mark, style = GATE_MARK.get(gates[gate], ("?", "yellow"))
        out.append(f"{gate}{mark} ", style=style)
    return out


def attempt_label(a: TreeAttempt) -> Text:
    label = Text(f"{a.key} ")
    label.append(f"{a.status:<11}", style=STATUS_STYLE.get(a.status, ""))
    label.append(" ")
    label.append_text(gates_text(a.gates))
    if a.status in NEGATIVE:
        label.append("negative evidence ", style="red italic")
    label.append(a.change, style="dim")
    return label


def round_label(r: TreeRound) -> Text:
    label = Text(f"{r.round_id} ", style="bold")
    label.append(f"({r.kind}) ", style="dim")
    label.append(r.status or "?", style=STATUS_STYLE.get(r.status, "bold"))
    n = r.n_attempts
    label.append(f"  {n} attempt{'s' if n != 1 else ''}", style="dim")
    return label


def _verdict_text(v: dict[str, Any]) -> str:
    suspect = v.get("verdict.suspect.func_name")
    if v.get("verdict.rule") is None and suspect is None and v.get("fault.kind") is None:
        return "[dim]no frozen analysis[/]"
    where = (
        f"{escape(str(suspect))} (task {show(v.get('verdict.suspect.task_index'))}, "
        f"nodeId {show(v.get('verdict.suspect.node_id'))})"
        if suspect is not None
        else "no suspect"
    )
    return (
        f"{escape(show(v.get('verdict.confidence')))} (rule {escape(show(v.get('verdict.rule')))}) — {where}; "
        f"fault {escape(show(v.get('fault.kind')))} {escape(show(v.get('fault.phase')))}; "
        f"proposal {escape(show(v.get('proposal.status')))} {escape(show(v.get('proposal.mechanism')))} "
        f"excluded {escape(show(v.get('proposal.excluded')))}"
    )


def _fingerprint(ledger: Ledger) -> tuple[Any, ...]:
    """Changes whenever anything is appended (statuses, attempts, proposals, notes): rows are never
    rewritten, so the largest keys say whether the tree must be read again."""
    row = ledger.connection.execute(
        "SELECT (SELECT MAX(seq) FROM status_events), (SELECT MAX(pk) FROM notes), "
        "(SELECT MAX(pk) FROM gate_results)"
    ).fetchone()
    return tuple(row)


class SessionTree(Tree[Any]):
    """The tree, telling the screen once it has painted rows (then the slower reads may start)."""

    class Painted(Message):
        """The first frame with the session's rows is on screen."""

    painted = False

    def render_lines(self, crop: Region) -> list[Strip]:
        lines = super().render_lines(crop)
        if not self.painted and self.root.children:
            self.painted = True
            self.post_message(self.Painted())
        return lines


class SessionScreen(TriageScreen):
    """Mode ``session`` (key 6)."""

    BINDINGS: ClassVar[list[BindingType]] = [*SESSION_BINDINGS]
    DEFAULT_CSS = """
    SessionScreen #session-head { height: auto; padding: 0 1; }
    SessionScreen #session-main { height: 1fr; }
    SessionScreen #session-tree { width: 1fr; min-width: 40; }
    SessionScreen #session-side { width: 1fr; padding: 0 1; }
    SessionScreen #session-verdicts { height: 10; }
    SessionScreen #session-history-wait { height: 10; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._ledger: Ledger | None = None
        self._owned = False  # whether the screen opened (and so closes) its connection
        self._loaded: tuple[Any, ...] | None = None
        self._rounds: dict[str, TreeRound] = {}
        self._shown: dict[str, int] = {}  # round id → attempts shown (the newest ones)
        self.diff_mark: TreeAttempt | None = None
        self.last_job = ""

    def compose_body(self) -> ComposeResult:
        with Vertical(id="session-body"):
            yield Static(id="session-head", classes="section")
            with Horizontal(id="session-main"):
                yield SessionTree(Text("session"), id="session-tree")
                with VerticalScroll(id="session-side"):
                    yield Static(id="session-detail")
            # the verdict history table is mounted when its rows are read (after the first paint)
            yield Static("[dim]verdict history: reading…[/]", id="session-history-wait")

    # ------------------------------------------------------------------ loading

    @property
    def ref(self) -> SessionRef | None:
        return self.skdbg.session

    def sync(self) -> None:
        """The Session screen reads the ledger, not the analysis: it never waits for it."""
        self.query_one("#waiting", Static).display = False
        self.reload()

    def populate(self, state: TriageState) -> None:  # pragma: no cover - sync() is overridden
        self.reload()

    def on_unmount(self) -> None:
        if self._ledger is not None and self._owned:
            self._ledger.close()
        self._ledger = None

    def ledger(self) -> Ledger:
        """The screen's read connection (main thread); workers open their own."""
        ref = self.ref
        assert ref is not None
        if self._ledger is None or self._ledger.home != ref.home:
            if self._ledger is not None and self._owned:
                self._ledger.close()
            # the connection `skdbg tui --session` opened and checked, else one of our own
            self._owned = ref.reader is None
            self._ledger = ref.reader if ref.reader is not None else ref.open(read_only=True)
        return self._ledger

    def reload(self, *, force: bool = False) -> None:
        """Read the tree again when the session or the ledger changed since it was drawn."""
        head = self.query_one("#session-head", Static)
        ref = self.ref
        if ref is None or ref.session_id is None:
            head.update(
                "[b]no session[/] — open one with [b]skdbg tui --session ID[/] (ids: skdbg session list), "
                "or accept a proposal on the Proposal screen (5, a) to record it in a session"
            )
            self.query_one("#session-detail", Static).update("")
            return
        try:
            ledger = self.ledger()
            key = (ref, _fingerprint(ledger))
            if not force and key == self._loaded:
                return
            info = ledger.session(ref.session_id)
            rounds = session_rounds(ledger, ref.session_id)
        except LedgerError as exc:
            head.update(f"[b red]{escape(str(exc))}[/]")
            return
        self._loaded = key
        self._rounds = {r.round_id: r for r in rounds}
        scene = self.skdbg.scene
        shown = ref.attempt_ref or (
            f"the scene {scene.name}, not an attempt of this session" if scene is not None else "no scene"
        )
        head.update(
            f"[b]session {escape(info.id)}[/] {escape(info.name or '')} — {info.rounds} round(s), "
            f"{info.attempts} attempt(s) — other screens show: {escape(shown)}"
        )
        self._fill_tree(info.id, rounds)
        if self.query_one("#session-tree", SessionTree).painted:
            self.load_history(ref)
        # else: once the tree has painted its rows (SessionTree.Painted) — reading frozen analyses
        # must not delay the first picture

    def on_session_tree_painted(self, event: SessionTree.Painted) -> None:
        event.stop()
        ref = self.ref
        if ref is not None and ref.session_id is not None:
            self.load_history(ref)

    def _fill_tree(self, sid: str, rounds: list[TreeRound]) -> None:
        tree: Tree[Any] = self.query_one("#session-tree", Tree)
        old = tree.cursor_node.data if tree.cursor_node is not None else None
        # a re-read keeps what the user had open and where the cursor was
        opened = {
            n.data.round_id for n in tree.root.children if n.is_expanded and isinstance(n.data, TreeRound)
        }
        tree.clear()
        tree.root.set_label(Text(f"session {sid}", style="bold"))
        tree.root.expand()
        self._shown = {}
        focus_round = self.ref.attempt[0] if self.ref is not None and self.ref.attempt else None
        if focus_round is None and rounds:
            focus_round = next((r.round_id for r in reversed(rounds) if r.n_attempts), rounds[-1].round_id)
        if isinstance(old, TreeAttempt | TreeRound):
            focus_round = old.round_id
        target: TreeNode[Any] | None = None
        for r in rounds:
            node = tree.root.add(round_label(r), data=r, allow_expand=r.n_attempts > 0)
            if r.round_id in opened or r.round_id == focus_round:
                self._expand_round(node)
                node.expand()
            if r.round_id == focus_round:
                if isinstance(old, TreeRound):
                    target = node
                else:
                    target = self._attempt_node(node, old) or (node.children[-1] if node.children else node)
        if target is not None:
            # node lines are laid out on the next refresh: move there, and draw its detail now
            self.call_after_refresh(tree.move_cursor, target)
            self.show_detail(target.data)
        tree.focus()

    def _attempt_node(self, round_node: TreeNode[Any], want: object) -> TreeNode[Any] | None:
        if isinstance(want, TreeAttempt):
            for child in round_node.children:
                if isinstance(child.data, TreeAttempt) and child.data.pk == want.pk:
                    return child
        return None

    def _expand_round(self, node: TreeNode[Any], more: int = 0) -> None:
        """Add the round's newest attempts as children (lazily: on first expansion, a page at a time)."""
        r = node.data
        if not isinstance(r, TreeRound):
            return
        shown = self._shown.get(r.round_id)
        if shown is not None and not more:
            return
        count = min(r.n_attempts, (shown or 0) + (more or PAGE))
        self._shown[r.round_id] = count
        try:
            attempts = round_attempts(self.ledger(), r, newest=count)
        except LedgerError as exc:
            self.notify(str(exc), title="session", severity="error")
            return
        node.remove_children()
        earlier = r.n_attempts - len(attempts)
        if earlier > 0:
            node.add_leaf(
                Text(f"… {earlier} earlier attempt(s) — Enter shows {min(PAGE, earlier)} more", style="dim"),
                data=("more", r.round_id),
            )
        for a in attempts:
            node.add_leaf(attempt_label(a), data=a)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[Any]) -> None:
        event.stop()
        self._expand_round(event.node)

    def on_tree_node_selected(self, event: Tree.NodeSelected[Any]) -> None:
        event.stop()
        data = event.node.data
        if isinstance(data, tuple) and data[0] == "more" and event.node.parent is not None:
            parent = event.node.parent
            self._expand_round(parent, more=PAGE)
            self.query_one("#session-tree", Tree).move_cursor(parent.children[0])

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[Any]) -> None:
        event.stop()
        self.show_detail(event.node.data)

    # ------------------------------------------------------------------ detail

    def selected(self) -> TreeAttempt | TreeRound | None:
        node = self.query_one("#session-tree", Tree).cursor_node
        data = node.data if node is not None else None
        return data if isinstance(data, TreeAttempt | TreeRound) else None

    def selected_attempt(self) -> TreeAttempt | None:
        """The highlighted attempt, or the newest attempt of the highlighted round."""
        data = self.selected()
        if isinstance(data, TreeRound):
            newest = round_attempts(self.ledger(), data, newest=1) if data.n_attempts else []
            return newest[-1] if newest else None
        return data

    def show_detail(self, data: object) -> None:
        detail = self.query_one("#session-detail", Static)
        ref = self.ref
        if ref is None or ref.session_id is None:
            return
        try:
            if isinstance(data, TreeAttempt):
                detail.update(self._attempt_detail(ref.session_id, data))
            elif isinstance(data, TreeRound):
                detail.update(self._round_detail(ref.session_id, data))
            else:
                info = self.ledger().session(ref.session_id)
                detail.update(
                    f"[b]session {escape(info.id)}[/] {escape(info.name or '')}\ncreated {escape(info.created)}\n"
                    f"ledger {escape(str(ref.home))}\n[dim]select a round or an attempt[/]"
                )
        except LedgerError as exc:
            detail.update(f"[b red]{escape(str(exc))}[/]")

    def _attempt_detail(self, sid: str, a: TreeAttempt) -> str:
        ledger = self.ledger()
        info = ledger.attempt(sid, a.round_id, a.no)
        lines = [f"[b]{escape(a.round_id)}/{a.key}[/]  [{STATUS_STYLE.get(a.status, 'b')}]{a.status}[/]"]
        if a.status in NEGATIVE:
            lines.append(
                "[red]negative evidence[/] — this attempt is final: it is never edited or re-verified; "
                "the next change is a new attempt or a new round"
            )
        elif a.status != "running":
            lines.append("[dim]settled: final, never edited[/]")
        lines.append(
            f"[dim]created {escape(a.created)} · pid {show(info.pid)} · {info.storage} · "
            f"{info.n_artifacts} artifact(s)[/]"
        )
        lines.append(f"change: {escape(a.change)}")
        lines.append(f"verdict: {_verdict_text(verdict_summary(ledger, a))}")
        gates = ledger.gates(a.pk)
        if gates:
            lines.append("gates:")
            lines += [f"  {g['gate']} {g['result']}: {escape(g['detail'])}" for g in gates]
        else:
            lines.append("gates: [dim]not verified[/]")
        history = ledger.status_history("attempt", a.pk)
        lines.append(
            "status: "
            + " → ".join(escape(h["status"] + (f" ({h['detail']})" if h["detail"] else "")) for h in history)
        )
        notes = [
            n for n in ledger.notes(sid) if n["round_id"] == a.round_id and n["attempt_no"] in (a.no, None)
        ]
        lines += [f"note: {escape(n['text'])}" for n in notes]
        if self.diff_mark is not None:
            lines.append(
                f"[dim]diff: A = {self.diff_mark.round_id}/{self.diff_mark.key} — d here compares[/]"
            )
        return "\n".join(lines)

    def _round_detail(self, sid: str, r: TreeRound) -> str:
        ledger = self.ledger()
        lines = [f"[b]round {escape(r.round_id)}[/] ({r.kind}) {escape(r.status)}"]
        if r.derived_round is not None:
            lines.append(f"derived from {escape(r.derived_round)}/attempt-{r.derived_attempt or 0:03d}")
            try:
                p = ledger.proposal(sid, r.round_id)
            except LedgerError:
                p = None
            if p is not None:
                body = p.body
                lines.append(
                    f"proposal {p.sha256[:12]} {p.status}: {escape(show(body.get('mechanism')))} "
                    f"excluded {escape(show(body.get('excluded')))}"
                )
        rnd = ledger.round(sid, r.round_id)
        history = ledger.status_history("round", rnd.pk)
        lines.append("status: " + " → ".join(escape(h["status"]) for h in history))
        n_neg = sum(a.status in NEGATIVE for a in round_attempts(ledger, r))
        lines.append(f"{r.n_attempts} attempt(s), {n_neg} negative evidence")
        lines += [f"note: {escape(n['text'])}" for n in ledger.notes(sid) if n["round_id"] == r.round_id]
        return "\n".join(lines)

    # ------------------------------------------------------------------ verdict history

    @work(thread=True, exclusive=True, group="session-history", exit_on_error=False)
    def load_history(self, ref: SessionRef) -> None:
        """The newest verdicts, each read from its frozen analysis (own connection: a worker thread)."""
        if ref.session_id is None:
            return
        try:
            with ref.open(read_only=True) as ledger:
                total = ledger.session(ref.session_id).attempts
                verdicts = [
                    verdict_summary(ledger, a)
                    for a in session_attempts(ledger, ref.session_id, HISTORY_LIMIT)
                ]
        except LedgerError as exc:
            self.app.call_from_thread(self.notify, str(exc), title="verdict history", severity="error")
            return
        self.app.call_from_thread(self._show_history, verdicts, total)

    def _show_history(self, verdicts: list[dict[str, Any]], total: int) -> None:
        found = self.query("#session-verdicts")
        table: DataTable[Any] = (
            found.first(DataTable)
            if found
            else DataTable(id="session-verdicts", cursor_type="row", zebra_stripes=True)
        )
        table.clear(columns=True)
        table.add_columns("attempt", "status", "rule", "conf", "suspect", "fault", "proposal", "gates")
        for v in verdicts:
            table.add_row(
                f"{v['round_id']}/{v['attempt']}",
                Text(v["status"], style=STATUS_STYLE.get(v["status"], "")),
                show(v["verdict.rule"]),
                show(v["verdict.confidence"]),
                show(v["verdict.suspect.func_name"]),
                show(v["fault.kind"]),
                show(v["proposal.status"]),
                gates_text(v["gates"]),
            )
        shown = len(verdicts)
        table.border_title = (
            f"verdict history ({shown})"
            if shown == total
            else f"verdict history: newest {shown} of {total} (all: skdbg session show ID --format json)"
        )
        if not found:
            wait = self.query_one("#session-history-wait", Static)
            self.query_one("#session-body", Vertical).mount(table, after=wait)
            wait.remove()

    # ------------------------------------------------------------------ actions

    def _need_session(self) -> SessionRef | None:
        ref = self.ref
        if ref is None or ref.session_id is None:
            self.notify("no session: run `skdbg tui --session ID`", severity="warning")
            return None
        return ref

    def action_diff(self) -> None:
        """First ``d`` marks attempt A; ``d`` on another attempt shows the verdict fields that differ."""
        ref = self._need_session()
        a = self.selected_attempt()
        if ref is None or ref.session_id is None or a is None:
            return
        if self.diff_mark is None or self.diff_mark.pk == a.pk:
            self.diff_mark = a
            self.notify(f"diff: A = {a.round_id}/{a.key}; press d on another attempt", timeout=4)
            self.show_detail(a)
            return
        first, self.diff_mark = self.diff_mark, None
        try:
            rows = diff_verdicts(
                self.ledger(), ref.session_id, (first.round_id, first.no), (a.round_id, a.no)
            )
        except LedgerError as exc:
            self.notify(str(exc), title="diff", severity="error")
            return
        head = f"[b]diff of verdicts[/] A = {first.round_id}/{first.key}, B = {a.round_id}/{a.key}"
        body = [f"{escape(r['field'])}: A {escape(show(r['a']))} · B {escape(show(r['b']))}" for r in rows]
        self.query_one("#session-detail", Static).update(
            "\n".join([head, *(body or ["[dim]no verdict field differs[/]"])])
        )

    def action_propose(self, narrowing: bool = False) -> None:
        """``skdbg session propose ID ROUND/attempt-NNN`` on the highlighted attempt."""
        ref = self._need_session()
        a = self.selected_attempt()
        if ref is None or ref.session_id is None:
            return
        if a is None:
            self.notify("select an attempt to take the proposal from", severity="warning")
            return
        try:
            with ref.open() as ledger:
                rid, status = propose(
                    ledger, ref.session_id, a.round_id, a.no, kind="narrowing" if narrowing else "exclusion"
                )
        except LedgerError as exc:
            self.notify(str(exc), title="not proposed", severity="error", timeout=10)
            return
        self.notify(f"{a.round_id}/{a.key}: opened round {rid} ({status})", title="proposed")
        self.reload(force=True)

    def action_propose_narrowing(self) -> None:
        self.action_propose(narrowing=True)

    def action_note(self) -> None:
        """``skdbg session note``: about the highlighted attempt (or round)."""
        ref = self._need_session()
        if ref is None or ref.session_id is None:
            return
        data = self.selected()
        about = (
            (data.round_id, data.no)
            if isinstance(data, TreeAttempt)
            else ((data.round_id, None) if isinstance(data, TreeRound) else (None, None))
        )
        what = f"{about[0]}/attempt-{about[1]:03d}" if about[1] is not None else (about[0] or "the session")
        sid = ref.session_id

        def done(text: str | None) -> None:
            if text is None or not text.strip():
                return
            try:
                with ref.open() as ledger:
                    ledger.add_note(sid, text.strip(), round_id=about[0], attempt_no=about[1])
            except LedgerError as exc:
                self.notify(str(exc), title="note not added", severity="error")
                return
            self.notify(f"note added about {what}")
            self.reload(force=True)

        self.app.push_screen(PromptScreen(f"Note about {what}:", "", prompt_id="note-prompt"), done)

    def action_export(self) -> None:
        """``skdbg session export ID -o DIR``."""
        ref = self._need_session()
        if ref is None or ref.session_id is None:
            return
        default = str(Path.cwd() / f"skdbg-session-{ref.session_id}")

        def done(path: str | None) -> None:
            if path and path.strip():
                self.export_session(ref, Path(path.strip()).expanduser())

        self.app.push_screen(
            PromptScreen("Export the session report folder to:", default, prompt_id="session-export-prompt"),
            done,
        )

    @work(thread=True, exclusive=True, group="session-export", exit_on_error=False)
    def export_session(self, ref: SessionRef, out: Path) -> None:
        from skdbg.atomic import OutputNotEmptyError
        from skdbg.workflow import export_session

        assert ref.session_id is not None
        try:
            with ref.open(read_only=True) as ledger:
                files = export_session(ledger, ref.session_id, out)
        except (LedgerError, OutputNotEmptyError, OSError) as exc:
            self.app.call_from_thread(self.notify, str(exc), title="export failed", severity="error")
            return
        self.app.call_from_thread(
            self.notify, f"session report written: {out} ({len(files)} files)", title="exported"
        )

    def action_open_candidate(self) -> None:
        """The Candidate screen (mode ``candidate``) when this build has it."""
        if "candidate" in self.app.MODES:
            self.skdbg.action_show("candidate")
            return
        self.notify(
            "the Candidate screen is not part of this build: from a shell, "
            "`skdbg codegen candidate SCENE --proposal analysis.json -o DIR`",
            title="no Candidate screen",
            severity="warning",
            timeout=10,
        )

    def action_relaunch(self) -> None:
        """Re-launch the highlighted round (``skdbg relaunch``) with a live progress view."""
        from skdbg.tui.screens.session_relaunch import JOB_HELP, RelaunchScreen, parse_job

        ref = self._need_session()
        data = self.selected()
        if ref is None or ref.session_id is None:
            return
        if data is None:
            self.notify("select the round to re-launch", severity="warning")
            return
        round_id = data.round_id

        def done(text: str | None) -> None:
            if text is None or not text.strip():
                return
            self.last_job = text.strip()
            try:
                job = parse_job(text)
            except ValueError as exc:
                self.notify(str(exc), title="relaunch", severity="error", timeout=10)
                return

            def finished(_: None) -> None:
                self.reload(force=True)

            self.app.push_screen(RelaunchScreen(ref, round_id, job), finished)

        self.app.push_screen(
            PromptScreen(f"Re-launch {round_id}: {JOB_HELP}", self.last_job, prompt_id="relaunch-prompt"),
            done,
        )

    def copy_text(self) -> str | None:
        data = self.selected()
        if isinstance(data, TreeAttempt):
            return f"{data.round_id}/{data.key}"
        return data.round_id if isinstance(data, TreeRound) else None


__all__ = ["HISTORY_LIMIT", "PAGE", "SessionScreen", "attempt_label", "gates_text", "round_label"]
