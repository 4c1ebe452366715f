"""The exclusion proposal (triage.md §4): which fragment leaves the SK, how, and what must hold.

Why this shape: §4.1 requires five elements — the exact child, the ranges, the marker form as a
source diff, the safety constraints with their evidence, and the reason with its confidence. The
fragment F (§4.2, :mod:`skdbg.triage.fragment`) decides single-child exclusion vs a
dependency-aligned split vs blocking (§4.4); the probe decides the mechanism (§4.5 A/B/C); the
marker file and ``source_sites.json`` (or §4.6 inference, flagged) anchor the edits
(:mod:`skdbg.triage.markers`). A ``low`` verdict never carries an exclusion (§3.8); a GE-mode SK
(X6) never gets one here either — :func:`ge_exclusion_text` renders its form for the report.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from skdbg.parsers.common import Source
from skdbg.parsers.fsguard import real_path, uncounted_reads
from skdbg.parsers.markers import ge_scope_text
from skdbg.triage.context import TriageContext
from skdbg.triage.fragment import (
    WAIT_TYPES,
    FNode,
    Fragment,
    compute_fragment,
    fragment_input,
    partner_index,
    partners,
)
from skdbg.triage.markers import (
    ModelSource,
    Region,
    Span,
    SpanBlock,
    apply_edits,
    edits_close_reopen,
    edits_none,
    edits_split,
    load_model_source,
    op_tokens,
    split_names,
    unified_diff,
)
from skdbg.triage.model import ChildRef, MarkerEdit, Proposal, SafetyNote, Verdict
from skdbg.triage.skview import SkInstance, SkNode
from skdbg.triage.stages import Localization

#: reasons that make any change deadlock-sensitive (§4.3 "Deadlock-sensitive")
DEADLOCK_REASONS = frozenset(
    {"DEADLOCK_DETECTED", "EXIST_DEADLOCK", "ISOLATED_EVENT", "EXTERNAL_DEPEND", "UNSUPPORT_EVENT_TYPE"}
)
EXPLICIT_NONE = "explicit_none_exclusion"
CLOSE_REOPEN = "close_reopen_exclusion"
SPLIT = "dependency_aligned_split"
METHOD = {
    EXPLICIT_NONE: "explicit_none_scope",
    CLOSE_REOPEN: "outer_scope_split",
    SPLIT: "dependency_aligned_split",
}
_PROBE_PATH = "scope_capabilities.explicit_none_exclusion.accepted"


def ge_exclusion_text(child: ChildRef | None = None, statement: str | None = None, indent: str = "") -> str:
    """§4.5.2 (X6): the torchair GE-mode form — the child's statement inside
    ``with torchair.scope.super_kernel(None):`` (the null literal; the innermost ``with`` wins)."""
    what = child.label() if child is not None else "the suspect child"
    body = statement.strip() if statement else f"...  # the statement that emits {what}"
    return f"{indent}{ge_scope_text('None')}  # skdbg: exclude {what} (GE mode)\n{indent}    {body}"


def read_proposal_inputs_ahead(ctx: TriageContext, *, source: bool) -> None:
    """Read now what a proposal for any child reads first (one :class:`ProposalBuilder` builds): the
    scene's ``source_sites.json`` (:meth:`~skdbg.parsers.evidence.Evidence.read_source_sites_ahead`)
    and, with ``source``, the model source with its line index, named as
    :meth:`ProposalBuilder.load_source` names it. Nothing is reported here and no failed read is
    counted (:func:`~skdbg.parsers.fsguard.uncounted_reads`): the proposal takes both from where they
    were kept, or, should one have failed, reads it again and meets the error in its place.

    Why: called before localisation waits for the plogs (:func:`skdbg.triage.engine.prepare_late_stages`);
    on the bench scene both were ~5 ms of the first proposal, in the stretch after the plogs. Why the
    model source only with ``source`` (the caller passes whether gate F8 scans that file): the steps made
    before the plogs scan the model source only where F8 scans it anyway, and a verdict may make no
    proposal; ``source_sites.json``, read by the proposal alone, costs nothing observable when none is
    made (its parse is dropped unreported)."""
    ctx.evidence.read_source_sites_ahead()
    if not source:
        return
    rel, path = ctx.marker_rel(), ctx.marker_file()  # (marker_file stats its candidates: only when used)
    if rel is None or path is None:
        return
    with contextlib.suppress(Exception), uncounted_reads():  # the proposal's to meet again
        load_model_source(path, rel).innermost(0)  # the source, then its line index (made on first use)


def propose(ctx: TriageContext, loc: Localization, verdict: Verdict) -> Proposal:
    """The §4 proposal for the verdict's suspect (status proposed | blocked | none)."""
    conf = verdict.confidence
    if loc.fault.kind == "ge_sk":
        return Proposal(
            status="none",
            child=verdict.suspect,
            reason=(
                "X6: GE-mode SK (te_superkernel_*) is recognised but not the skdbg target; no AOT "
                "metadata, so no exclusion is proposed. GE exclusion form: "
                + ge_exclusion_text(verdict.suspect).replace("\n", " ")
            ),
            confidence=conf,
        )
    if conf not in ("high", "medium") or verdict.suspect is None:
        why = "no suspect child" if verdict.suspect is None else f"confidence {conf}"
        return Proposal(
            status="none",
            reason=(
                f"{verdict.rule}: {why} — a low or n/a verdict never carries an exclusion (§3.8); "
                "collect more evidence first (§3.9)"
            ),
            confidence=conf,
        )
    child = verdict.suspect
    inst = loc.instance
    node = inst.node_by_id(child.node_id) if inst is not None and child.node_id is not None else None
    if inst is None or node is None or not node.is_kernel:
        return Proposal(
            status="blocked",
            child=child,
            reason=_reason(verdict),
            confidence=conf,
            route="R6",
            blocked_reason=(
                "the suspect is not a kernel node in the fused-node metadata of a resolved SK instance: "
                "ranges and dependencies cannot be computed (§4.1 element 2)"
            ),
        )
    return ProposalBuilder(ctx, inst, child, verdict).build()


def _reason(verdict: Verdict) -> str:
    chain = [f"{e.level} {e.where}" for e in verdict.evidence if e.agrees]
    text = f"{verdict.rule} ({verdict.confidence}): {verdict.reason}"
    if chain:
        text += "; evidence chain: " + ", ".join(chain[:6])
    if verdict.residual_risk:
        text += "; residual risk: " + "; ".join(verdict.residual_risk)
    return text


@dataclass(frozen=True, slots=True)
class Ranges:
    """§4.1 element 2 as nodeIds in SK order; ``inside``: nodes outside F lying between its members
    (listed in ``after`` too; a proposal with any is blocked as non-contiguous)."""

    original: tuple[int, ...]
    excluded: tuple[int, ...]
    before: tuple[int, ...]
    after: tuple[int, ...]
    inside: tuple[int, ...] = ()


@dataclass
class Decision:
    """The §4.4 outcome of a fragment: status, mechanism, route and why it was blocked."""

    status: str
    mechanism: str | None
    route: str | None
    blocked: str | None = None


@dataclass
class ProposalBuilder:
    """Builds one proposal step by step (source, sites, region, fragment, safety, decision, edits).

    Public because :mod:`skdbg.triage.edit` replays the same steps for a user-edited excluded set, so
    an edited proposal follows exactly the engine's anchoring and blocking rules.
    """

    ctx: TriageContext
    inst: SkInstance
    child: ChildRef
    verdict: Verdict
    notes: list[str] = field(default_factory=list)
    safety: list[SafetyNote] = field(default_factory=list)
    src: ModelSource | None = None
    rel: str | None = None
    region: Region | None = None
    lines: dict[int, int] = field(default_factory=dict)
    inferred: set[int] = field(default_factory=set)
    ambiguous_site: str | None = None

    # ------------------------------------------------------------------ helpers

    @property
    def cid(self) -> int:
        assert self.child.node_id is not None
        return self.child.node_id

    def ev(self, src: Source | None, kind: str = "metadata") -> str:
        if src is None:
            return "derived from the fused-node order (no single line)"
        item = self.ctx.cite("L4", kind, src)
        return f"{item.where} — {item.excerpt}" if item.excerpt else item.where

    def scope_names(self) -> list[str]:
        names: list[str] = []
        if self.inst.scope_name:
            names.append(self.inst.scope_name)
        run = self.ctx.run
        if run is not None and run.candidate is not None:
            names.extend(n for n in run.candidate.scope_names if n and n not in names)
        return names

    # ------------------------------------------------------------------ source

    def load_source(self) -> None:
        self.rel = self.ctx.marker_rel()
        path = self.ctx.marker_file()
        if path is None:
            if self.rel is None:
                self.notes.append(
                    "no marker file: run.json candidate.marker_file is not set; marker edits need the "
                    "model source with the scope markers (set it, or pass --source-root)"
                )
            else:
                self.notes.append(
                    f"marker file {self.rel} not found under --source-root or the scene root; marker edits "
                    "need it"
                )
            return
        self.src = load_model_source(path, self.rel or path.name)  # ParseError → CLI exit 3

    def explicit_sites(self) -> dict[int, int]:
        ss = self.ctx.evidence.source_sites
        if ss is None:
            return {}
        ids = {n.node_id for n in self.inst.nodes}
        sites = {k: v for k, v in ss.by_node.items() if k in ids}
        return self.translate_sites(sites)

    def translate_sites(self, sites: dict[int, int]) -> dict[int, int]:
        """source_sites.json numbers lines of the marker file *the run used* (the scene's frozen copy).
        When ``--source-root`` points at a different checkout, carry each line over through the diff of
        the two files; a line inside a changed region is dropped (then inferred, §4.6) and said so."""
        src = self.src
        if src is None or self.rel is None or self.ctx.source_root is None:
            return sites
        frozen = self.ctx.root / self.rel
        if not frozen.is_file() or real_path(frozen) == real_path(src.path):
            return sites
        try:
            old_lines = frozen.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return sites
        if old_lines == src.lines:
            return sites
        mapping: dict[int, int] = {}
        matcher = difflib.SequenceMatcher(a=old_lines, b=list(src.lines), autojunk=False)
        for tag, i1, i2, j1, _j2 in matcher.get_opcodes():
            if tag == "equal":
                for k in range(i2 - i1):
                    mapping[i1 + k + 1] = j1 + k + 1
        out: dict[int, int] = {}
        dropped: list[str] = []
        for node_id, line in sites.items():
            if line in mapping:
                out[node_id] = mapping[line]
            else:
                dropped.append(f"nodeId {node_id} (line {line})")
        moved = sum(1 for k, v in out.items() if sites[k] != v)
        self.notes.append(
            f"{src.rel} under --source-root differs from the scene's copy: source_sites.json lines carried "
            f"over by diff ({moved} moved)"
            + (f"; dropped (changed lines, re-inferred): {', '.join(dropped)}" if dropped else "")
        )
        return out

    def find_region(self, names: list[str], child_line: int | None) -> None:
        src = self.src
        if src is None or not names:
            return
        candidates: list[Region] = []
        for name in names:
            regions, problems = src.regions(name)
            self.notes.extend(problems)
            candidates.extend(regions)
        if not candidates:
            self.notes.append(
                f"no balanced direct torch.npu.super_kernel_scope_begin/end markers of "
                f"{', '.join(repr(n) for n in names)} in {src.rel} (§4.5.1)"
            )
            return
        if child_line is not None:
            inside = [r for r in candidates if r.contains(child_line)]
            if inside:
                self.region = max(inside, key=lambda r: r.begin.line)  # innermost
                return
            self.notes.append(
                f"the child's source line {child_line} is not inside the scope markers of "
                f"{', '.join(repr(n) for n in names)} in {src.rel}"
            )
            return
        if len(candidates) == 1:
            self.region = candidates[0]
        else:
            lines = [r.begin.line for r in candidates]
            self.notes.append(f"several marker regions (begin lines {lines}); the child's line is unknown")

    def infer_sites(self) -> None:
        """§4.6 (2): kernels without an explicit line, by op type + occurrence ordinal."""
        src = self.src
        if src is None:
            return
        if self.region is not None:
            lo, hi = self.region.begin.end_line + 1, self.region.end.line - 1
        elif not self.scope_names():
            lo, hi = 1, len(src.lines)
        else:
            return
        events = [n for n in self.inst.nodes if not n.is_kernel]
        by_type: dict[str | None, list[int]] = {}
        for n in events:
            by_type.setdefault(_event_type(n), []).append(n.node_id)
        for n in events:
            if n.node_id in self.lines:
                continue
            same_ev = by_type[_event_type(n)]
            ev_site = src.infer_event_line(_event_type(n), same_ev.index(n.node_id), len(same_ev), lo, hi)
            if ev_site.line is not None:
                self.lines[n.node_id] = ev_site.line
                self.inferred.add(n.node_id)
        kernels = self.inst.kernels
        if all(k.node_id in self.lines for k in kernels):
            return  # every kernel has its statement (source_sites.json): nothing to infer, no op tokens
        keys = [tuple(op_tokens(k.func_name)) for k in kernels]  # once per kernel: a regex split each
        groups: dict[tuple[str, ...], list[int]] = {}
        for k, key in zip(kernels, keys, strict=True):
            groups.setdefault(key, []).append(k.node_id)
        for k, key in zip(kernels, keys, strict=True):
            if k.node_id in self.lines:
                continue
            same = groups.get(key, [])
            site = src.infer_line(k.func_name, same.index(k.node_id), len(same), lo, hi)
            if site.line is not None:
                self.lines[k.node_id] = site.line
                self.inferred.add(k.node_id)
                if k.node_id == self.cid:
                    self.notes.append(
                        f"source_site=inferred: child statement {src.rel}:{site.line} — {site.detail}; "
                        "requires user confirmation before codegen (§4.6)"
                    )
            elif k.node_id == self.cid:
                if "ambiguous" in site.detail:
                    self.ambiguous_site = site.detail
                self.notes.append(f"child statement not located (§4.6): {site.detail}")

    # ------------------------------------------------------------------ safety (§4.3)

    def edge_notes(self, frag: Fragment) -> None:
        for e in frag.edges:
            added = f"; adds nodeIds {list(e.added)} to the fragment" if e.added else ""
            blocks = bool(e.added) or (e.kind in ("event", "memory_event") and self.cid in e.nodes)
            src = e.src
            if src is None and self.src is not None:
                placed = [self.lines[i] for i in e.added if i in self.lines]
                if placed:  # a source-order edge: cite the first collateral statement
                    src = Source(str(self.src.path), min(placed))
            self.safety.append(
                SafetyNote(
                    kind=e.kind,
                    detail=f"§4.2({e.rule}) {e.detail}{added}",
                    evidence=self.ev(src, "source" if e.kind == "source" else _kind_of(src)),
                    blocks=blocks,
                )
            )

    def extra_notes(self, frag: Fragment, fin_dcci: dict[int, Source | None]) -> None:
        inst = self.inst
        self.safety.extend(cache_writer_gaps(self.ctx))
        # cache mutation by task debugOptions (DCCI bits) without declared readers
        writers = self.ctx.run.cache_writers if self.ctx.run is not None else {}
        for nid in frag.members:
            if nid in fin_dcci:
                declared = (
                    "readers declared in run.json cache_writers"
                    if nid in writers
                    else (
                        "no readers declared: if it writes a cache read by another in-SK child, declare it "
                        "in run.json cache_writers"
                    )
                )
                self.safety.append(
                    SafetyNote(
                        kind="cache",
                        detail=(
                            f"nodeId {nid}: task debugOptions has DCCI bits (0x4/0x8/0x20) — a cache "
                            f"mutation boundary; {declared}; DCCI toggles are never a fix (§4.3)"
                        ),
                        evidence=self.ev(fin_dcci[nid], "task_queue"),
                    )
                )
        # cross-stream dependency
        streams = inst.streams()
        if len(streams) > 1 and self.child.stream_id is not None:
            counts = Counter(k.stream_id for k in inst.kernels)
            first = inst.kernels[0].stream_id if inst.kernels else None
            main = max(streams, key=lambda s: (counts.get(s, 0), s == first))
            if self.child.stream_id != main:
                node = inst.node_by_id(self.cid)
                bound = any(e.kind in ("event", "memory_event") for e in frag.edges)
                self.safety.append(
                    SafetyNote(
                        kind="stream",
                        detail=(
                            f"the SK spans streams {streams}; the child runs on side stream "
                            f"{self.child.stream_id} (main {main}) and is treated as event-bound"
                            + (
                                ""
                                if bound
                                else "; no event is attached to it in the metadata — V3 must show no new ISOLATED_EVENT/EXTERNAL_DEPEND"
                            )
                        ),
                        evidence=self.ev(node.src if node else None, "fused_nodes"),
                        blocks=bound,
                    )
                )
        # deadlock-sensitive reasons already present for the scope
        for reason, src in self.deadlock_reasons():
            self.safety.append(
                SafetyNote(
                    kind="deadlock",
                    detail=(
                        f"{reason} is already recorded for this scope: re-check the proposal against fresh "
                        "metadata for new occurrences (gate 3 / V3)"
                    ),
                    evidence=self.ev(src, _kind_of(src)),
                )
            )

    def deadlock_reasons(self) -> list[tuple[str, Source]]:
        inst = self.inst
        out: list[tuple[str, Source]] = []
        seen: set[tuple[str, str]] = set()

        def add(text: str | None, src: Source) -> None:
            for reason in re.findall(r"[A-Z][A-Z_]+", text or ""):
                if reason in DEADLOCK_REASONS and (reason, str(src)) not in seen:
                    seen.add((reason, str(src)))
                    out.append((reason, src))

        for snap in inst.scope_snapshots():
            if snap.break_info is not None:
                add(snap.break_info.raw, snap.break_info.src)
        fs = inst.fused_scope
        if fs is not None:
            if fs.break_info is not None:
                add(fs.break_info.raw, fs.break_info.src)
            add(fs.break_reason_detail, fs.src)
        orig = inst.original_scope
        scope_ids = set(orig.node_ids) if orig is not None else None
        for u in inst.fail_reasons:
            if scope_ids is None or u.node.node_id in scope_ids:
                add(u.reason, u.src)
        return out

    def sides(self, frag: Fragment) -> dict[int, str]:
        """Where every node outside F ends up: ``before`` / ``after`` the cut, or ``inside`` F's span.

        By source line when the node and F have lines (the markers decide scope membership), else
        by fused-node position relative to F's first and last member."""
        members = set(frag.members)
        nodes = self.inst.nodes
        lines = self.lines
        fpos = [n.position for n in nodes if n.node.node_id in members]
        flines = [lines[i] for i in members if i in lines]
        lo_p, hi_p = min(fpos), max(fpos)
        lo_l, hi_l = (min(flines), max(flines)) if flines else (0, 0)  # once, not per node
        out: dict[int, str] = {}
        for n in nodes:
            nid = n.node.node_id
            if nid in members:
                continue
            ln = lines.get(nid)
            if ln is not None and flines:
                out[nid] = "before" if ln < lo_l else "after" if ln > hi_l else "inside"
            else:
                out[nid] = "before" if n.position < lo_p else "after" if n.position > hi_p else "inside"
        return out

    def ranges(self, frag: Fragment, sides: dict[int, str] | None = None) -> Ranges:
        """§4.1 element 2: every child node (kernels, events, memory wait/write) in SK order.

        ``excluded`` is F, ``before``/``after`` the nodes left on each side of the cut; when F is
        contiguous and source and SK order agree, before + excluded + after is the original list.
        ``sides``: :meth:`sides` of ``frag`` when the caller already has it."""
        members = set(frag.members)
        if sides is None:
            sides = self.sides(frag)
        original = tuple(n.node_id for n in self.inst.nodes)
        return Ranges(
            original=original,
            excluded=tuple(i for i in original if i in members),
            before=tuple(i for i in original if sides.get(i) == "before"),
            after=tuple(i for i in original if sides.get(i) in ("after", "inside")),
            inside=tuple(i for i in original if sides.get(i) == "inside"),
        )

    def straddles(
        self, frag: Fragment, nodes: tuple[FNode, ...], sides: dict[int, str] | None = None
    ) -> None:
        """Event pairs whose notify ends up before the cut and whose wait after it (§4.3, V3).
        ``sides``: :meth:`sides` of ``frag`` when the caller already has it."""
        members = set(frag.members)
        if sides is None:
            sides = self.sides(frag)

        def side(n: FNode) -> str:
            return sides.get(n.node_id, "inside")

        done: set[tuple[int, int]] = set()
        pindex = partner_index(nodes)
        for n in nodes:
            if not n.is_event or n.event_type in WAIT_TYPES or n.node_id in members:
                continue
            for p in partners(nodes, n, index=pindex):
                if p.event_type not in WAIT_TYPES or p.node_id in members or (n.node_id, p.node_id) in done:
                    continue
                done.add((n.node_id, p.node_id))
                if side(n) == "before" and side(p) == "after":
                    self.safety.append(
                        SafetyNote(
                            kind="straddle",
                            detail=(
                                f"{n.event_type}(eventId={n.event_id}) nodeId {n.node_id} stays before the cut and "
                                f"its {p.event_type} nodeId {p.node_id} after it: allowed (both still run in order) "
                                "but V3 must show no new ISOLATED_EVENT/EXTERNAL_DEPEND/deadlock reasons"
                            ),
                            evidence=self.ev(n.src, "fused_nodes"),
                        )
                    )

    # ------------------------------------------------------------------ main

    def build(self) -> Proposal:
        inst, ctx = self.inst, self.ctx
        names = self.scope_names()
        automatic = not names
        self.load_source()
        self.lines = self.explicit_sites()
        child_line = self.lines.get(self.cid)
        source_site = "explicit" if child_line is not None else None
        self.find_region(names, child_line)
        self.infer_sites()
        if source_site is None and self.cid in self.inferred:
            source_site = "inferred"
        if self.src is not None and (self.src.string_none_markers() or "None" in names):
            self.safety.append(
                SafetyNote(
                    kind="source",
                    detail=(
                        'T8: a scope named by the string "None" is an ordinary named scope, not an exclusion; '
                        "the exclusion uses the null literal None"
                    ),
                    evidence=self._t8_evidence(names),
                )
            )
        elif "None" in names:
            self.notes.append('T8: the scope is literally named "None" (a string): an ordinary named scope')

        writers = ctx.run.cache_writers if ctx.run is not None else {}
        fin = fragment_input(inst, self.cid, cache_writers=writers, lines=self.lines)
        frag = compute_fragment(fin)
        if source_site is not None and self.inferred & set(frag.members):
            source_site = "inferred"  # the edit is anchored on at least one inferred statement (§4.6)
            others = sorted(self.inferred & set(frag.collateral))
            if others:
                self.notes.append(
                    f"source_site=inferred for fragment nodeIds {others}: confirm before codegen"
                )
        self.edge_notes(frag)
        touched = [g for g in fin.ignored_barriers if g.members & set(frag.members)]
        if touched:
            self.notes.append(
                f"{len(touched)} ALL_SYNC barrier(s) next to the fragment were inserted by debug_sync_all (task "
                "debugOptions 0x2, a diagnostic attempt — F9) and are not edges of the clean candidate; retest clean"
            )
        self.extra_notes(frag, dict(fin.dcci))
        sides = self.sides(frag)  # straddles and ranges ask it of the same fragment and sites (2,500 nodes)
        self.straddles(frag, fin.nodes, sides)

        rng = self.ranges(frag, sides)
        none_ok = ctx.probe is not None and ctx.probe.explicit_none_exclusion_accepted is True
        probe_evidence = self.probe_evidence()
        decision = self.decide(frag, rng, automatic, none_ok)
        decision, edits, diff = self.anchor(frag, rng, decision, automatic)
        if decision.status == "proposed" and source_site == "inferred":
            self.notes.append(
                "the proposal is anchored on an inferred source site: confirm it before applying"
            )
        scope = self.region.name if self.region is not None else (names[0] if names else "<automatic>")
        only = (
            f"fusion participation of nodeIds {list(frag.members)} in scope {scope!r}"
            + (f" ({self.rel})" if self.rel else "")
            + "; the operators still execute in the same order with the same events, barriers and streams"
        )
        declared = {"only_change": only, "method": METHOD[decision.mechanism]} if decision.mechanism else {}
        return Proposal(
            status=decision.status,
            mechanism=decision.mechanism,
            child=self.child,
            original=rng.original,
            excluded=rng.excluded,
            collateral=frag.collateral,
            before=rng.before,
            after=rng.after,
            marker_edits=edits,
            diff=diff,
            declared_change=declared,
            safety=tuple(self.safety),
            reason=_reason(self.verdict),
            confidence=self.verdict.confidence,
            source_site=source_site,
            probe_evidence=probe_evidence,
            blocked_reason=decision.blocked,
            route=decision.route,
            notes=tuple(self.notes),
        )

    def _t8_evidence(self, names: list[str]) -> str:
        src = self.src
        assert src is not None
        ms = src.string_none_markers()
        if ms:
            return self.ev(Source(str(src.path), ms[0].line), "source")
        return f"scope name {names!r}"

    def probe_evidence(self) -> str:
        pf = self.ctx.evidence.env_probe
        if pf is None:
            return "no env probe archived: the None pair is not proven accepted, so close/reopen is assumed (§4.5)"
        v = pf.probe.explicit_none_exclusion_accepted
        shown = "absent" if v is None else str(v).lower()
        return f"{self.ctx.relpath(pf.file)}:{_PROBE_PATH} = {shown}"

    def decide(self, frag: Fragment, rng: Ranges, automatic: bool, none_ok: bool) -> Decision:
        """§4.4 rules 1–3 and the §4.5 mechanism."""
        members = set(frag.members)
        if not any(n.is_kernel and n.node_id not in members for n in self.inst.nodes):
            return Decision(
                "blocked",
                None,
                "R6",
                "F equals the whole scope: no fusible child would remain outside the fragment (§4.4 rule 3)",
            )
        if self.ambiguous_site is not None:
            return Decision("blocked", None, "R6", f"§4.6/§4.4 rule 3: {self.ambiguous_site}")
        if frag.single:
            if none_ok:
                return Decision("proposed", EXPLICIT_NONE, None)
            if automatic:
                return Decision(
                    "blocked",
                    None,
                    "R6",
                    "automatic-AOT candidate (no named scope): only the None pair can exclude a child, and the "
                    "archived probe does not accept explicit_none_exclusion (§4.4 rule 3, §4.5)",
                )
            return Decision("proposed", CLOSE_REOPEN, None)
        # rule 2: F ⊋ {child}
        if automatic:
            if none_ok:
                return Decision("proposed", EXPLICIT_NONE, "R5")
            return Decision(
                "blocked",
                None,
                "R5",
                "the fragment must leave the SK but the candidate has no named scope and the None pair is not "
                "accepted: the dependency edge cannot be represented (§4.4 rule 3)",
            )
        return Decision("proposed", SPLIT, "R5")

    def anchor(
        self, frag: Fragment, rng: Ranges, decision: Decision, automatic: bool
    ) -> tuple[Decision, tuple[MarkerEdit, ...], str]:
        """The marker edits and diff of a proposed decision, then the range checks: a node left
        between F's members (F not contiguous, §4.4 rule 3) blocks; source order differing from SK
        order across the cut is said in a note (the ranges follow the markers)."""
        edits: tuple[MarkerEdit, ...] = ()
        diff = ""
        if decision.status != "proposed":
            return decision, edits, diff
        decision, edits = self.marker_edits(frag, decision, automatic)
        if decision.status == "proposed" and rng.inside:
            what = ", ".join(_node_label(self.inst.node_by_id(i), i) for i in rng.inside)
            why = f"§4.4 rule 3: the fragment is not contiguous in SK order ({what} between its members)"
            return Decision("blocked", None, "R6", why), (), ""
        if edits and self.src is not None:
            diff = unified_diff(self.src.rel, self.src.lines, apply_edits(self.src.lines, edits))
        if rng.before + rng.excluded + rng.after != rng.original:
            self.notes.append(
                "source order and SK order differ across the cut: before/after follow the scope markers, "
                "so before + excluded + after is not the original SK order; gate 3 must show the halves"
            )
        return decision, edits, diff

    def marker_edits(
        self, frag: Fragment, decision: Decision, automatic: bool
    ) -> tuple[Decision, tuple[MarkerEdit, ...]]:
        """Anchor the decision on the marker file; §4.4 rule 3 blocks found here change the decision."""
        src = self.src
        if src is None:
            return decision, ()
        base: list[ast.stmt] | None = None
        if self.region is not None:
            base = list(self.region.inner)
        elif automatic:
            child_line = self.lines.get(self.cid)
            st = src.innermost(child_line) if child_line is not None else None
            funcs = (
                [s for s in src.chain(st) if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
                if st
                else []
            )
            base = list(funcs[-1].body) if funcs else list(src.tree.body)
        if base is None:
            self.notes.append("marker edits omitted: the scope's marker region was not found in the source")
            return decision, ()
        flines = {self.lines[i] for i in frag.members if i in self.lines}
        unplaced = [i for i in frag.members if i not in self.lines]
        if self.cid not in self.lines:
            self.notes.append(
                "marker edits omitted: the child's statement is unknown (add it to source_sites.json)"
            )
            return decision, ()
        if unplaced:
            self.notes.append(
                f"marker edits omitted: fragment nodeIds {unplaced} have no source line (compiler-inserted or "
                "unmapped), so the cut cannot be anchored without risking an event/barrier edge; add them to "
                "source_sites.json"
            )
            return decision, ()
        span = src.span(flines, base, self.region)
        if isinstance(span, SpanBlock):
            return Decision("blocked", None, "R6", f"§4.4 rule 3: {span.reason}"), ()
        outside = self._outside_nodes(frag, span)
        if outside:
            return Decision("blocked", None, "R6", outside), ()
        label = self._label(frag)
        rel = src.rel
        if decision.mechanism == EXPLICIT_NONE:
            return decision, tuple(edits_none(rel, span, label))
        assert self.region is not None
        if decision.mechanism == CLOSE_REOPEN:
            return decision, tuple(edits_close_reopen(src, self.region, span, label))
        pre, post = split_names(self.region.name)
        self.notes.append(f"§4.5 C: the halves are named {pre!r} / {post!r}; gate 3 must show two SKs")
        return decision, tuple(edits_split(src, self.region, span, label))

    def _outside_nodes(self, frag: Fragment, span: Span) -> str | None:
        """A node outside F emitted inside the span: one statement emits several children, or F is
        not contiguous in source (§4.4 rule 3)."""
        members = set(frag.members)
        src = self.src
        assert src is not None
        for n in self.inst.nodes:
            ln = self.lines.get(n.node_id)
            if n.node_id in members or ln is None or not span.first_line <= ln <= span.last_line:
                continue
            shared = [
                m
                for m in members
                if m in self.lines and src.statement_lines(self.lines[m]) == src.statement_lines(ln)
            ]
            what = n.func_name or n.node.event_type or n.node.kind
            if shared:
                return (
                    f"§4.4 rule 3: one statement ({src.rel}:{ln}) emits nodeId {n.node_id} ({what}) as well as "
                    f"fragment nodeIds {shared}: the cut would fall inside one Python statement"
                )
            return (
                f"§4.4 rule 3: the fragment is not contiguous in source — nodeId {n.node_id} ({what}) at "
                f"{src.rel}:{ln} lies between its statements but is not part of it"
            )
        return None

    def _label(self, frag: Fragment) -> str:
        base = self.child.label()
        extra = len(frag.collateral)
        return base if not extra else f"{base} + {extra} dependent node(s)"


def cache_writer_gaps(ctx: TriageContext) -> list[SafetyNote]:
    """Malformed run.json ``cache_writers`` entries (recorded by the parser with their line): the
    writer→reader ordering they declare could not be checked, so the proposal says so (§4.3)."""
    rf = ctx.run_file
    if rf is None:
        return []
    out: list[SafetyNote] = []
    for gap in rf.gaps:
        jp = (gap.src.json_path if gap.src is not None else None) or ""
        if gap.src is None or gap.kind != "invalid_field" or jp.split(".", 1)[0] != "cache_writers":
            continue
        if gap.src.line is not None:  # cite the line itself (file:line — the entry as written)
            item = ctx.cite("L4", "run_json", Source(gap.src.file, gap.src.line))
            where = f"{item.where} — {item.excerpt}" if item.excerpt else item.where
        else:
            where = ctx.cite("L4", "run_json", gap.src).where
        out.append(SafetyNote(kind="cache", detail=f"evidence gap: {gap.detail}", evidence=where))
    return out


def _node_label(n: SkNode | None, node_id: int) -> str:
    if n is None:
        return f"nodeId {node_id}"
    return f"nodeId {node_id} ({n.func_name or _event_type(n) or n.node.kind})"


def _event_type(n: SkNode) -> str | None:
    kind = n.node.kind
    if kind == "memory_write":
        return "MemoryWrite"
    if kind == "memory_wait":
        return "MemoryWait"
    return n.node.event_type


def _kind_of(src: Source | None) -> str:
    if src is None:
        return "metadata"
    name = Path(src.file).name
    for key in ("fused_nodes", "task_queue", "scope_split", "fail_reasons", "device_args", "super_kernel"):
        if key in name:
            return key
    return "metadata"


__all__ = ["DEADLOCK_REASONS", "ge_exclusion_text", "propose"]
