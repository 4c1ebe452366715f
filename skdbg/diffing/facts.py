"""What ``skdbg diff`` compares about one scene: a flat list of named, cited facts.

Why a flat record: two scenes are compared field by field, and each field must say where its value
came from (file:line), so the comparison and the renderers never reach back into parser objects.
The record is plain data (strings, numbers, lists, dicts) so it crosses a process boundary: the two
scenes are analysed in parallel. Identities that differ between processes by construction — nodeIds,
core ids, absolute PCs, scope ids — are kept as *context* (shown, never compared); children are named
by ``funcName#occurrence`` (the n-th child with that funcName in its SK, stable across processes).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from skdbg.parsers.common import Source
from skdbg.parsers.runtime_faults import CoreErrorExtend, CoreErrorReport, KernelTaskError
from skdbg.parsers.scope_split import BreakInfo
from skdbg.triage.context import TriageContext
from skdbg.triage.model import Analysis, CoreFinding
from skdbg.triage.skview import SkInstance, all_instances

#: the groups of compared fields, in the order the renderers show them
GROUPS = ("fault", "sk", "suspect", "cores", "errors", "fused", "breaks", "options", "env", "run")


@dataclass(frozen=True, slots=True)
class Fact:
    """One compared field of one scene: its value (JSON data) and the file:line it came from."""

    field: str
    group: str
    value: Any
    cites: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"field": self.field, "group": self.group, "value": self.value, "cites": list(self.cites)}


@dataclass(frozen=True, slots=True)
class SceneFacts:
    """Every compared fact of one scene, plus context shown beside it (``context``: never compared)."""

    scene: str
    pid: int | None
    facts: tuple[Fact, ...]
    context: dict[str, Any] = field(default_factory=dict)

    def by_field(self) -> dict[str, Fact]:
        return {f.field: f for f in self.facts}


def _where(ctx: TriageContext, src: Source | None) -> str | None:
    if src is None or not src.file:
        return None
    rel = ctx.relpath(src.file)
    if src.json_path is not None:
        return f"{rel}:{src.json_path}"
    return f"{rel}:{src.line}" if src.line is not None else rel


def _cites(ctx: TriageContext, *srcs: Source | None) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for s in srcs:
        w = _where(ctx, s)
        if w is not None:
            out.setdefault(w, None)
    return tuple(out)


def child_key(func_name: str | None, occurrence: int | None) -> str:
    """``funcName#occurrence``: a child's name that survives nodeId renumbering across processes."""
    return f"{func_name or '?'}#{0 if occurrence is None else occurrence}"


def children_of(inst: SkInstance) -> list[str]:
    """The SK's kernel children as ``funcName#occurrence``, in SK order (one pass, not one per child)."""
    seen: Counter[str] = Counter()
    out = []
    for n in inst.kernels:
        name = n.func_name or "?"
        out.append(f"{name}#{seen[name]}")
        seen[name] += 1
    return out


def _break(bi: BreakInfo | None) -> str | None:
    """The break reason of a scope, None when it records none (``NONE`` is the runtime's "no break")."""
    if bi is None:
        return None
    r = bi.break_reason or bi.fusion_fail_reason
    return None if r is None or r.upper() == "NONE" else r


class _Builder:
    def __init__(self, ctx: TriageContext, analysis: Analysis) -> None:
        self.ctx = ctx
        self.a = analysis
        self.facts: list[Fact] = []
        self.context: dict[str, Any] = {}
        self.instances = list(all_instances(ctx.evidence))
        self.inst = self._fault_instance()

    def add(self, name: str, group: str, value: Any, cites: tuple[str, ...] = ()) -> None:
        self.facts.append(Fact(name, group, value, cites))

    def _fault_instance(self) -> SkInstance | None:
        f = self.a.fault
        if f.scope_id is None:
            return None
        hits = [
            i
            for i in self.instances
            if i.scope_id == f.scope_id and (f.model is None or i.model_id == f.model)
        ]
        return hits[0] if len(hits) == 1 else None

    def _ev_cites(
        self, evidence: Any, *, levels: tuple[str, ...] = (), rule: str | None = None
    ) -> tuple[str, ...]:
        out: dict[str, None] = {}
        for e in evidence:
            if levels and e.level not in levels:
                continue
            if rule is not None and e.rule != rule:
                continue
            out.setdefault(e.where, None)
        return tuple(out)

    # ------------------------------------------------------------------ groups

    def fault(self) -> None:
        f = self.a.fault
        lead = self._ev_cites(self.a.verdict.evidence, levels=("fault",))[:2]
        self.add("fault.kind", "fault", f.kind, lead)
        self.add("fault.phase", "fault", f.phase, lead)
        self.add("fault.dialect", "fault", f.dialect, lead)
        gaps = [g for g in self.a.gate.gaps if g.file is not None and g.id in self.a.gate.failed]
        cites = tuple(f"{g.file}:{g.line}" if g.line is not None else str(g.file) for g in gaps)
        self.add("gate.failed", "fault", list(self.a.gate.failed), cites)
        v = self.a.verdict
        self.add("verdict", "fault", f"{v.confidence} ({v.rule})")
        self.add("proposal.status", "fault", self.a.proposal.status)

    def sk(self) -> None:
        f = self.a.fault
        lead = self._ev_cites(self.a.verdict.evidence, levels=("fault",))
        self.add("sk.entry", "sk", f.entry, lead[:2])
        self.add("sk.op_trace", "sk", f.op_trace, lead[:2])
        inst = self.inst
        scope = inst.scope_name if inst is not None else None
        if scope is None and self.a.verdict.suspect is not None:
            scope = self.a.verdict.suspect.scope_name
        src = inst.block.src if inst is not None and inst.block is not None else None
        self.add("sk.scope", "sk", scope, _cites(self.ctx, src))
        self.add("sk.node_count", "sk", f.node_cnt, _cites(self.ctx, src))

    def suspect(self) -> None:
        s = self.a.verdict.suspect
        cites = self._ev_cites(self.a.verdict.evidence, levels=("L4",))[:2]
        if s is None:
            self.add("suspect", "suspect", None)
            return
        self.add("suspect", "suspect", child_key(s.func_name, s.occurrence), cites)
        self.add("suspect.kernel_type", "suspect", s.kernel_type, cites)
        self.add("suspect.stream", "suspect", s.stream_id, cites)

    def _child_label(self, c: CoreFinding) -> str | None:
        """``funcName#k`` of the child the core was running (the SK instance, else the verdict's suspect)."""
        if c.task_index is None:
            return None
        if self.inst is not None:
            ref = self.inst.child(c.task_index)
            return child_key(ref.func_name, ref.occurrence)
        s = self.a.verdict.suspect
        if s is not None and s.task_index == c.task_index:
            return child_key(s.func_name, s.occurrence)
        return None

    def _rel_pc(self, c: CoreFinding) -> tuple[str | None, str | None]:
        """``child#k+0x…``: the PC less the start of the child code holding it (and how it was found)."""
        pc, inst = c.current_pc, self.inst
        if pc is None:
            return None, None
        if pc == 0:
            return "PC=0", "none"
        label = self._child_label(c) or "?"
        images = inst.model.images if inst is not None else None
        if images is not None and images.names:
            try:
                loc = images.locate(pc)
            except Exception:  # noqa: BLE001 — a broken image is a gap, never a crash
                loc = None
            if loc is not None and loc.in_entry and loc.offset is not None:
                return f"sk_entry+0x{loc.offset:x}", "entry image"
            if loc is not None and loc.offset_in_symbol is not None and loc.image is not None:
                if label == "?" and loc.image.func_name:
                    label = loc.image.func_name  # no task named: the image's child (no occurrence known)
                return f"{label}+0x{loc.offset_in_symbol:x}", "symbol"
        if inst is not None and c.task_index is not None:
            starts = [
                e for t in inst.tasks_of(c.task_index) if t.type == "FUNC" for e in t.entries if e and e <= pc
            ]
            if starts:
                return f"{label}+0x{pc - max(starts):x}", "task entry"
        return None, None

    def cores(self) -> None:
        cores = self.a.fault.cores
        rows: list[dict[str, Any]] = []
        context: list[dict[str, Any]] = []
        cites: dict[str, None] = {}
        for c in cores:
            rel, basis = self._rel_pc(c)
            label = self._child_label(c)
            rows.append(
                {
                    "core_type": c.core_type,
                    "role": c.role,
                    "child": label,
                    "pc": rel,
                    "state": c.state_name,
                    "cond": c.cond_state,
                }
            )
            context.append(
                {
                    "core_id": c.core_id,
                    "current_pc": None if c.current_pc is None else f"0x{c.current_pc:x}",
                    "pc_basis": basis,
                    "pc_location": c.pc_location,
                }
            )
            for e in self.a.verdict.evidence:
                if e.core_id == c.core_id and e.level in ("L2", "L3") and e.rule is None:
                    cites.setdefault(e.where, None)
        key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731 — an order that ignores core ids
        rows.sort(key=key)
        cite = tuple(cites)
        self.add("cores.count", "cores", len(cores), cite[:1])
        self.add("cores.children", "cores", sorted(str(r["child"]) for r in rows if r["child"]), cite)
        self.add("cores.pc_relative", "cores", [r["pc"] for r in rows], cite)
        self.add("cores.cond", "cores", [f"{r['core_type']}:{r['cond']}" for r in rows], cite)
        self.add("cores.state", "cores", [f"{r['core_type']}:{r['role']}:{r['state']}" for r in rows], cite)
        self.context["cores"] = context

    def errors(self) -> None:
        bits: list[str] = []
        srcs: list[Source] = []
        for pe in self.ctx.evidence.plogs:
            for rec in pe.faults:
                if isinstance(rec, CoreErrorReport):
                    bits.append(f"{rec.core_type or '?'} {rec.error_kind}: error code {rec.error_code_text}")
                elif isinstance(rec, CoreErrorExtend):
                    extra = f" ({rec.error_str})" if rec.error_str else ""
                    bits.append(f"errcode {', '.join(rec.errcodes)}{extra}")
                elif isinstance(rec, KernelTaskError):
                    bits.append(f"retCode=0x{rec.ret_code:x} {rec.reason}".rstrip())
                else:
                    continue
                srcs.append(rec.src)
        counts = Counter(bits)
        self.add(
            "errors.bits",
            "errors",
            [f"{b} ×{n}" if n > 1 else b for b, n in sorted(counts.items())],
            _cites(self.ctx, *srcs[:4]),
        )

    def fused(self) -> None:
        """Children per SK, grouped by scope name: ``fused[<scope>]`` = the child list of each SK."""
        by_scope: dict[str, list[tuple[list[str], Source | None]]] = {}
        for inst in sorted(self.instances, key=lambda i: (i.model_label, i.scope_id)):
            kids = children_of(inst)
            src = inst.block.src if inst.block is not None else None
            by_scope.setdefault(inst.scope_name or "?", []).append((kids, src))
        for scope, sks in by_scope.items():
            self.add(f"fused[{scope}]", "fused", [k for k, _ in sks], _cites(self.ctx, *(s for _, s in sks)))

    def breaks(self) -> None:
        reasons: dict[str, Source] = {}
        for me in self.ctx.evidence.model_evidence:
            fr = me.fail_reasons
            if fr is not None:
                for u in fr.unfusible:
                    why = " / ".join(x for x in (u.reason or u.reason_raw, u.sub_reason) if x)
                    reasons.setdefault(f"{u.node.func_name or '?'}: {why or '?'}", u.src)
                for fs in fr.fused_scopes:
                    bi = fs.break_info
                    r = _break(bi)
                    if bi is not None and r is not None:
                        reasons.setdefault(f"scope {fs.scope_names or '?'}: {r}", bi.src)
            ss = me.scope_split
            snap = ss.final_snapshot() if ss is not None else None
            if snap is not None:
                for sc in snap.scopes:
                    bi = sc.break_info
                    r = _break(bi)
                    if bi is not None and r is not None:
                        reasons.setdefault(f"scope {sc.scope_names or '?'}: {r}", bi.src)
        keys = sorted(reasons)
        self.add("breaks", "breaks", keys, _cites(self.ctx, *(reasons[k] for k in keys[:6])))

    def options(self) -> None:
        run = self.ctx.run
        cand = run.candidate if run is not None else None
        rf = self.ctx.run_file
        cite = _cites(self.ctx, Source(rf.file, None, "candidate") if rf is not None else None)
        self.add("options.debug", "options", dict(cand.debug_options or {}) if cand else None, cite)
        self.add("options.optimize", "options", dict(cand.optimize_options or {}) if cand else None, cite)
        self.add("options.diagnostic", "options", self.a.gate.diagnostic, cite)

    def env(self) -> None:
        probe = self.ctx.probe
        if probe is None:
            self.add("env.probe", "env", None)
            return
        cite = _cites(self.ctx, probe.src)
        self.add("env.probe", "env", "present", cite)
        self.add("env.ready", "env", probe.ready, cite)
        self.add("env.runtime_loaded", "env", probe.runtime_loaded, cite)
        self.add("env.option_probe_status", "env", probe.option_probe_status, cite)
        self.add("env.explicit_none_exclusion", "env", probe.explicit_none_exclusion_accepted, cite)
        opts = {f"{o.kind}.{o.name}": o.accepted for o in probe.options}
        self.add("env.options", "env", dict(sorted(opts.items())), cite)

    def run(self) -> None:
        r = self.a.run
        rf = self.ctx.run_file
        cite = _cites(self.ctx, Source(rf.file, None, "$") if rf is not None else None)
        self.add("run.pid", "run", self.a.scene.pid, cite)
        for key in ("rank", "device", "start", "round_id", "attempt"):
            self.add(f"run.{key}", "run", r.get(key), cite)


def scene_facts(ctx: TriageContext, analysis: Analysis, label: str) -> SceneFacts:
    """The compared facts of one analysed scene (``label``: how the user named it)."""
    b = _Builder(ctx, analysis)
    b.context.update(
        {
            "scope_id": analysis.fault.scope_id,
            "model": analysis.fault.model,
            "sk_name": analysis.fault.sk_name,
        }
    )
    s = analysis.verdict.suspect
    if s is not None:
        b.context["suspect"] = {"task_index": s.task_index, "node_id": s.node_id, "symbol": s.symbol}
    for step in (b.fault, b.sk, b.suspect, b.cores, b.errors, b.fused, b.breaks, b.options, b.env, b.run):
        step()
    return SceneFacts(scene=label, pid=analysis.scene.pid, facts=tuple(b.facts), context=b.context)


__all__ = ["GROUPS", "Fact", "SceneFacts", "child_key", "children_of", "scene_facts"]
