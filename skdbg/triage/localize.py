"""Fault localisation: which process, which fault family, which SK instance (triage.md §3.1–§3.3).

Why a stage of its own: the gate (F1–F9) and the child attribution both need the same answers —
the process P the analysis is about, the first fault line (Tf), whether the fault is an SK fault at
all (§3.2; X3 non-SK, X6 GE-mode), and which (model dir, scope id) the fault names in P's own
metadata (F5/F6). Nothing here names a child: that is attribution's job (E1–E3).

Rules applied here (ids appear in notes so a reader can trace them):

* P: run.json pid; else the pid whose plog has an SK fault; else one with any runtime fault; else the
  only pid seen. Only P's plog faults and P's incidents count.
* kind (§3.2, §3.1.4): ``sk`` for a runtime ``fault kernel_name=sk_entry…`` or a handler block;
  ``ge_sk`` for ``te_superkernel_*`` (X6); ``non_sk`` for any other faulting kernel (X3, T2 — never
  mapped to a child however close the name); ``none`` with no fault line and no handler output.
  ``sk_constant_entry_*`` does not start with ``sk_entry`` (§3.2 item 1): it is reported ``non_sk``
  with a note saying it is the constant-codegen SK family (no handler output, not attributable).
* scope id: printed ``SkScopeId`` (exception-core line) → ``SkHeaderInfo`` → COND decode, in that
  order; a COND-decoded scope that disagrees with a printed one is never used (T5), and a COND scope
  is used alone only when ``nodeCnt ≤ 256`` (no index bit can leak into it).
* instance (F5/F6, §3.2 item 3): ``model_id`` → ``scope_id`` → ``origin_names`` → ``single_sk``;
  otherwise ``ambiguous`` (C1) or ``none``. Only ``sk_meta/<P>/`` model dirs are searched (F3).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from skdbg.parsers.common import Source
from skdbg.parsers.evidence import ModelEvidence, PlogEvidence
from skdbg.parsers.plog_line import stamp_of_text
from skdbg.parsers.plog_rows import ROW_TS, row_at, row_index
from skdbg.parsers.runtime_faults import DumpException, ErrorTracking, KernelFaultLine, fault_kind
from skdbg.parsers.sk_handler import DIALECTS, Incident
from skdbg.triage.context import TriageContext
from skdbg.triage.model import PHASES, EvidenceItem, FaultInfo
from skdbg.triage.skview import SkInstance, instances_of
from skdbg.triage.stages import Localization

#: COND carries the task index in 8 bits; above this many tasks the high index bits leak into the
#: scope field (T5), so a COND-only scope id is not trusted.
_COND_INDEX_SPAN = 256
_DIAG_SUFFIXES = ("_op_trace", "_debug", "_dump_profiling")


# ------------------------------------------------------------------------------------------ process


def pick_pid(ctx: TriageContext) -> tuple[int | None, str]:
    """The process P and how it was chosen (run.json → SK-fault plog → fault plog → only pid)."""
    run = ctx.run
    if run is not None and run.pid is not None:
        return run.pid, f"pid {run.pid} from run.json (G1)"
    ev = ctx.evidence
    sk_pids = _ordered(
        [
            pe.pid
            for pe in ev.plogs
            if any(isinstance(f, KernelFaultLine) and f.kind == "sk" for f in pe.faults)
        ]
        + [i.pid for i in ev.incidents if i.pid is not None]
    )
    if sk_pids:
        why = "the plog with an SK fault" if len(sk_pids) == 1 else f"first of {len(sk_pids)} SK-fault pids"
        return sk_pids[0], f"pid {sk_pids[0]} auto-filled: {why} (no run.json pid)"
    fault_pids = _ordered(
        [pe.pid for pe in ev.plogs if any(isinstance(f, KernelFaultLine) for f in pe.faults)]
    )
    if fault_pids:
        why = "the plog with a runtime fault" if len(fault_pids) == 1 else "first of several fault pids"
        return fault_pids[0], f"pid {fault_pids[0]} auto-filled: {why} (no run.json pid)"
    seen = _ordered([pe.pid for pe in ev.plogs] + [m.pid for m in ev.models if m.pid is not None])
    if len(seen) == 1:
        return seen[0], f"pid {seen[0]} auto-filled: the only pid in the scene (no run.json pid)"
    if seen:
        return None, f"no run.json pid and {len(seen)} pids without a fault: process not decidable"
    return None, "no pid: no run.json pid, no plog, no sk_meta/<pid>"


def _ordered(values: Iterable[int]) -> list[int]:
    out: list[int] = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def plogs_of(ctx: TriageContext, pid: int | None) -> list[PlogEvidence]:
    return [pe for pe in ctx.evidence.plogs if pid is not None and pe.pid == pid]


def models_of(ctx: TriageContext, pid: int | None) -> list[ModelEvidence]:
    """P's model dirs only (F3: another pid's sk_meta is never substituted)."""
    return [me for me in ctx.evidence.model_evidence if pid is not None and me.model.pid == pid]


def incidents_of(ctx: TriageContext, pid: int | None) -> list[Incident]:
    """P's handler incidents; one without a pid counts when it was read from P's own files."""
    own_files = {f for pe in plogs_of(ctx, pid) for f in pe.files}
    own_files |= {str(p) for me in models_of(ctx, pid) for p in me.model.files.values()}
    out = []
    for inc in ctx.evidence.incidents:
        if inc.pid is not None:
            if inc.pid == pid:
                out.append(inc)
        elif any(f in own_files for f in inc.files):
            out.append(inc)
    return sorted(out, key=lambda i: (i.first_ts is None, i.first_ts or datetime.min))


def _times_of_lines(plogs: list[PlogEvidence], wanted: Iterable[Source]) -> dict[tuple[str, int], datetime]:
    """(file, line) → timestamp of the scanned plog lines among ``wanted`` (localisation looks up its
    fault lines only); when several scanned lines share a key the last one with a stamp wins.

    Why not a map of every line: it was built for 18,000 scanned lines to answer a handful of lookups."""
    keys = {(s.file, s.line) for s in wanted if s.line is not None}
    numbers = {n for _, n in keys}
    out: dict[tuple[str, int], datetime] = {}
    for pe in plogs:
        for line in pe.records:
            src = line.src
            if src.line in numbers and line.ts is not None and (src.file, src.line) in keys:
                out[(src.file, src.line)] = line.ts
        if pe.sk_rows:  # a line kept as a row is looked up by its number (no record shares it)
            index = row_index(pe)
            for file, no in keys:
                row = row_at(pe, index, file, no)
                ts = None if row is None else stamp_of_text(ROW_TS(row))
                if ts is not None:
                    out[(file, no)] = ts
    return out


def _ts_of(times: dict[tuple[str, int], datetime], src: Source) -> datetime | None:
    return times.get((src.file, src.line)) if src.line is not None else None


# ------------------------------------------------------------------------------------------ localize


def localize(ctx: TriageContext) -> Localization:
    """Localise the fault of process P (see module docstring for the rules)."""
    pid, pid_note = pick_pid(ctx)
    notes: list[str] = [pid_note]
    evidence: list[EvidenceItem] = []
    plogs = plogs_of(ctx, pid)
    kfault_lines = [f for pe in plogs for f in pe.faults if isinstance(f, KernelFaultLine)]
    times = _times_of_lines(plogs, (f.src for f in kfault_lines))  # only fault lines are looked up
    kfaults = sorted(
        kfault_lines,
        key=lambda f: (_ts_of(times, f.src) or datetime.max, f.src.file, f.src.line or 0),
    )
    incidents = incidents_of(ctx, pid)
    sk_faults = [f for f in kfaults if f.kind == "sk"]

    # ---- fault family (§3.2, §3.1.4)
    kind: str
    runtime_fault: KernelFaultLine | None
    if sk_faults or incidents:
        kind = "sk"
        runtime_fault = sk_faults[0] if sk_faults else (kfaults[0] if kfaults else None)
    elif kfaults:
        runtime_fault = kfaults[0]
        family = fault_kind(runtime_fault.kernel_name_raw)
        if family == "ge_sk" or runtime_fault.kind == "ge_sk":
            kind = "ge_sk"
        else:
            kind = "non_sk"
            if family == "sk_constant" or runtime_fault.kind == "sk_constant":
                notes.append(
                    f"sk_constant_entry: {runtime_fault.kernel_name_raw} is a constant-codegen SK entry "
                    "(no sk_entry prefix, §3.2): the handler prints nothing for it, so no child is "
                    "attributable"
                )
            else:
                notes.append(
                    f"X3: fault kernel_name={runtime_fault.kernel_name_raw} is not an SK entry; it is "
                    "never mapped to an SK child, whatever its name resembles (T2)"
                )
    else:
        kind = "none"
        runtime_fault = None
        notes.append(
            "no runtime fault line and no SK handler output for this process (hang/timeout without DFX)"
        )
    if kfaults and kind == "sk" and len({f.kernel_name_raw for f in kfaults}) > 1:
        notes.append(
            "several faulting kernels in this process: "
            + ", ".join(sorted({f.kernel_name_raw for f in kfaults}))
            + f"; the SK fault {runtime_fault.kernel_name_raw if runtime_fault else '?'} is analysed"
        )

    incident = _pick_incident(incidents, runtime_fault, notes) if kind == "sk" else None
    if runtime_fault is not None:
        evidence.append(ctx.cite("fault", "plog", runtime_fault.src, rule="§3.2"))
    if incident is not None and incident.anchor is not None:
        evidence.append(ctx.cite("fault", _source_kind(ctx, incident.anchor), incident.anchor, rule="§3.2"))
    elif incident is not None:
        evidence.append(ctx.cite("fault", _source_kind(ctx, incident.src), incident.src, rule="§3.2"))

    # ---- entry, op_trace, dialect
    entry: str | None = None
    if incident is not None and incident.entry:
        entry = incident.entry
    elif runtime_fault is not None and kind in ("sk", "ge_sk"):
        entry = runtime_fault.kernel_name_raw
    if (
        incident is not None
        and incident.entry
        and sk_faults
        and sk_faults[0].kernel_name_raw != incident.entry
    ):
        notes.append(
            f"handler entry {incident.entry!r} differs from runtime fault kernel_name "
            f"{sk_faults[0].kernel_name_raw!r}"
        )
    op_trace: bool | None = None
    if entry is not None and kind == "sk":
        op_trace = "op_trace" in entry
        if incident is not None and incident.op_trace is not None and incident.op_trace != op_trace:
            notes.append(
                f"handler printed op_trace={'true' if incident.op_trace else 'false'} but the entry name "
                f"{entry!r} says op_trace={'true' if op_trace else 'false'}; the entry name is used (§3.2)"
            )
    elif incident is not None:
        op_trace = incident.op_trace
    dialect = incident.dialect if incident is not None else None
    dialect_known = dialect in DIALECTS
    if incident is not None and not dialect_known:
        notes.append("G4/C1: handler output present but its dialect is not recognised; verdict capped at low")

    # ---- scope id, model, node count
    scope_id, scope_how = _scope_id(ctx, incident, notes, evidence)
    model = _model(ctx, incident, notes, evidence)
    node_cnt = _node_cnt(incident, notes)

    # ---- GE chain (X6)
    sk_name: str | None = None
    if kind == "ge_sk":
        sk_name = _ge_chain(ctx, plogs, evidence, notes)

    # ---- SK instance (F5/F6)
    instance: SkInstance | None = None
    candidates: list[SkInstance] = []
    rule = "none"
    resolution: str | None = None
    if kind in ("sk", "none"):
        instance, candidates, rule = _resolve_instance(
            ctx, pid, kind, incident, model, scope_id, node_cnt, notes
        )
    if instance is not None:
        sk_name = instance.sk_name
        if instance.block is not None:
            evidence.append(ctx.cite("fault", "fused_nodes", instance.block.src, rule="F6"))
        resolution = scope_resolution(rule, scope_how, dfx_names(incident) is not None)
        scope_id, model = _fill_identity(instance, scope_id, model, resolution, incident, notes)

    # ---- Tf
    fault_time = _first_fault_time(times, kfaults, incidents if kind == "sk" else [])

    # ---- phase
    phase = _phase(ctx, kfaults, notes)

    evidence = _dedupe(evidence)
    fault = FaultInfo(
        kind=kind,
        phase=phase,
        entry=entry,
        op_trace=op_trace,
        dialect=dialect,
        scope_id=scope_id,
        model=model,
        scope_resolution=resolution,
        sk_name=sk_name,
        node_cnt=node_cnt,
        kernel_name=runtime_fault.kernel_name_raw if runtime_fault is not None else None,
        device_id=runtime_fault.device_id if runtime_fault is not None else None,
        evidence=tuple(evidence),
        notes=tuple(notes),
    )
    return Localization(
        pid=pid,
        fault=fault,
        incident=incident,
        incidents=incidents,
        runtime_fault=runtime_fault,
        fault_time=fault_time,
        instance=instance,
        instance_candidates=candidates,
        instance_rule=rule,
        dialect_known=dialect_known,
        evidence=evidence,
        notes=notes,
    )


def _dedupe(items: list[EvidenceItem]) -> list[EvidenceItem]:
    """One citation per file line (the same line may carry the model id and the scope id)."""
    seen: set[tuple[str, int | None, str | None]] = set()
    out = []
    for e in items:
        key = (e.file, e.line, e.json_path)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def _source_kind(ctx: TriageContext, src: Source) -> str:
    rel = ctx.relpath(src.file)
    return "super_kernel_log" if rel.endswith("super_kernel.log") else "plog"


def _pick_incident(
    incidents: list[Incident], runtime_fault: KernelFaultLine | None, notes: list[str]
) -> Incident | None:
    if not incidents:
        return None
    chosen = incidents[0]
    if runtime_fault is not None and runtime_fault.kind == "sk":
        same = [i for i in incidents if i.entry == runtime_fault.kernel_name_raw]
        if same:
            chosen = same[0]
    if len(incidents) > 1:
        notes.append(f"{len(incidents)} SK handler incidents for this process; the first one is analysed")
    return chosen


def _scope_id(
    ctx: TriageContext, inc: Incident | None, notes: list[str], evidence: list[EvidenceItem]
) -> tuple[int | None, str | None]:
    """Printed SkScopeId → SkHeaderInfo → COND decode (T5: COND never overrides a printed id).

    Returns (scope id, how): ``header`` when the handler printed it (D2+ exception-core line or
    SkHeaderInfo), ``cond`` when only the COND register decodes it (D4+), None when neither.
    """
    if inc is None:
        return None, None
    printed = [
        (c.sk_scope_id, c.source_of("sk_scope_id") or c.src) for c in inc.cores if c.sk_scope_id is not None
    ]
    header = inc.header.sk_scope_id if inc.header is not None else None
    values = {v for v, _ in printed}
    if len(values) > 1:
        notes.append(f"exception cores print different SkScopeIds {sorted(values)}; the first is used")
    chosen: int | None = None
    if printed:
        chosen, src = printed[0]
        evidence.append(ctx.cite("fault", _source_kind(ctx, src), src, rule="F6"))
        if header is not None and header != chosen:
            notes.append(f"SkHeaderInfo skScopeId={header} differs from the printed SkScopeId={chosen}")
    elif header is not None and inc.header is not None:
        chosen = header
        src = inc.header.source_of("sk_scope_id") or inc.header.src
        evidence.append(ctx.cite("fault", _source_kind(ctx, src), src, rule="F6"))
    # COND decode (§3.3)
    conds = []
    for c in inc.cores:
        chk = inc.cond_check(c)
        if chk is not None and chk.cond.available:
            conds.append((c, chk))
    if chosen is not None:
        for c, chk in conds:
            if chk.cond.scope_id != chosen:
                notes.append(
                    f"T5: core {c.core_id} COND decodes scope {chk.cond.scope_id} ≠ printed {chosen}; "
                    "the COND scope is not used (cond_index_overflow)"
                )
        return chosen, "header"
    decoded = {chk.cond.scope_id for _, chk in conds}
    if len(decoded) == 1:
        value = decoded.pop()
        node_cnt = inc.node_cnt
        if node_cnt is not None and node_cnt <= _COND_INDEX_SPAN:
            c0 = conds[0][0]
            src = c0.cond.src if c0.cond is not None else c0.src
            evidence.append(ctx.cite("fault", _source_kind(ctx, src), src, rule="T5"))
            notes.append(f"scope id {value} from the COND decode only (no printed SkScopeId, §3.3)")
            return value, "cond"
        notes.append(
            f"COND decodes scope {value} but nodeCnt is {'unknown' if node_cnt is None else node_cnt}: "
            "index bits may leak into the scope field (T5); not used"
        )
    elif len(decoded) > 1:
        notes.append(f"COND values decode different scopes {sorted(decoded)}; none is used (T5)")
    return None, None


def _model(
    ctx: TriageContext, inc: Incident | None, notes: list[str], evidence: list[EvidenceItem]
) -> str | None:
    """D5 ``ModelId=`` (core line, then header), else the ``modelId Index Map`` entry of ModelIdIdx."""
    if inc is None:
        return None
    printed = [(c.model_id, c.source_of("model_id") or c.src) for c in inc.cores if c.model_id]
    if printed:
        ids = {m for m, _ in printed}
        if len(ids) > 1:
            notes.append(f"exception cores print different ModelIds {sorted(ids)}; the first is used")
        value, src = printed[0]
        evidence.append(ctx.cite("fault", _source_kind(ctx, src), src, rule="F5"))
        return value
    if inc.header is not None and inc.header.model_id:
        src = inc.header.source_of("model_id") or inc.header.src
        evidence.append(ctx.cite("fault", _source_kind(ctx, src), src, rule="F5"))
        return inc.header.model_id
    mm = inc.model_map
    idx = inc.model_idx
    if mm is not None and mm.kind == "modelId":
        if idx is None and len(mm.entries) == 1:
            idx = mm.entries[0][0]
        mapped = mm.lookup(idx) if idx is not None else None
        if mapped:
            evidence.append(ctx.cite("fault", _source_kind(ctx, mm.src), mm.src, rule="F5"))
            notes.append(f"model {mapped} from the modelId Index Map entry [{idx}]")
            return mapped
    return None


def _node_cnt(inc: Incident | None, notes: list[str]) -> int | None:
    """Header ``nodeCnt`` (else the DFX table's); a disagreement is noted."""
    if inc is None:
        return None
    header = inc.header.node_cnt if inc.header is not None else None
    dfx = inc.dfx.node_cnt if inc.dfx is not None else None
    if header is not None and dfx is not None and header != dfx:
        notes.append(f"SkHeaderInfo nodeCnt={header} differs from SkDfxInfo nodeCnt={dfx}")
    return header if header is not None else dfx


def _ge_chain(
    ctx: TriageContext, plogs: list[PlogEvidence], evidence: list[EvidenceItem], notes: list[str]
) -> str | None:
    """X6: GE ErrorTracking origin_op_name and the dump exception symbol — shown, never attributed."""
    sk_name: str | None = None
    for pe in plogs:
        for f in pe.faults:
            if isinstance(f, ErrorTracking):
                evidence.append(ctx.cite("X6", "plog", f.src, rule="X6"))
                if sk_name is None:
                    sk_name = f.origin_op_name if f.sk_name is not None else sk_name
            elif isinstance(f, DumpException):
                evidence.append(ctx.cite("X6", "plog", f.src, rule="X6"))
                notes.append(
                    f"X6: dump exception core {f.core_id} symbol name={f.symbol_name} (informational)"
                )
    notes.append(
        "X6: GE-mode SK (te_superkernel_*): no sk_meta/<pid> or task queue exists for it; the GE chain "
        "is informational only; GE exclusion form is torchair.scope.super_kernel(None)"
    )
    return sk_name


def dfx_names(inc: Incident | None) -> list[str] | None:
    """Ordered ``Origin function name``/``Function name`` list of the DFX table (None: no usable table)."""
    if inc is None or inc.dfx is None or not inc.dfx.nodes:
        return None
    names = [n.origin_name for n in inc.dfx.nodes if n.origin_name]
    return names or None


def _kernel_names(inst: SkInstance) -> list[str]:
    return [k.func_name or "" for k in inst.kernels]


def _resolve_instance(
    ctx: TriageContext,
    pid: int | None,
    kind: str,
    inc: Incident | None,
    model: str | None,
    scope_id: int | None,
    node_cnt: int | None,
    notes: list[str],
) -> tuple[SkInstance | None, list[SkInstance], str]:
    """F5/F6 / §3.2 item 3. Returns (instance, candidates, rule)."""
    mes = models_of(ctx, pid)
    if not mes:
        other = sorted({m.pid_label for m in ctx.evidence.models})
        if other:
            notes.append(
                f"F3: no sk_meta/{pid}/ for this process; sk_meta of {', '.join(other)} is never substituted"
            )
        return None, [], "none"
    per_model = {id(me): instances_of(me) for me in mes}
    every = [i for me in mes for i in per_model[id(me)]]
    names = dfx_names(inc)

    def names_match(inst: SkInstance) -> bool:
        return names is not None and _kernel_names(inst) == names

    if model is not None:
        dirs = [me for me in mes if me.model.model_id == model]
        if len(dirs) != 1:
            notes.append(
                f"F5: ModelId={model} names model_{model}, "
                + ("absent from" if not dirs else "found more than once in")
                + f" sk_meta/{pid}/"
            )
            return None, [], "none"
        insts = per_model[id(dirs[0])]
        if scope_id is not None:
            hit = [i for i in insts if i.scope_id == scope_id]
            if len(hit) == 1:
                return hit[0], [], "model_id"
            notes.append(f"F6: scope id {scope_id} has no SK Function record in model_{model}")
            return None, [], "none"
        if names is not None:
            hit = [i for i in insts if names_match(i)]
        else:
            hit = list(insts)
        if len(hit) == 1:
            return hit[0], [], "model_id"
        if hit:
            notes.append(f"C1: model_{model} holds {len(hit)} SKs the fault could name; instance ambiguous")
            return None, hit, "ambiguous"
        notes.append(f"F6: no SK in model_{model} matches the DFX origin-name list")
        return None, [], "none"

    if scope_id is not None:
        scoped = [i for i in every if i.scope_id == scope_id]
        if names is not None:
            hit = [i for i in scoped if names_match(i)]
        else:
            hit = scoped
        if len(hit) == 1:
            return hit[0], [], "scope_id"
        if len(hit) > 1:
            notes.append(
                f"F5/C1: scope id {scope_id} with the same child list exists in "
                f"{len(hit)} model dirs ({', '.join(i.model_label for i in hit)}); instance ambiguous"
            )
            return None, hit, "ambiguous"
        if scoped:
            notes.append(
                f"F5: scope id {scope_id} exists in sk_meta/{pid}/ but no model dir holds it with the DFX "
                "origin-name child list (without a ModelId the dir is chosen by scope id + child list)"
            )
        else:
            notes.append(f"F6: scope id {scope_id} has no SK Function record in sk_meta/{pid}/")
        return None, [], "none"

    if names is not None:
        hit = [i for i in every if names_match(i)]
        if len(hit) == 1:
            return hit[0], [], "origin_names"
        if len(hit) > 1:
            notes.append(f"C1: {len(hit)} SKs have the DFX origin-name list; instance ambiguous")
            return None, hit, "ambiguous"
        notes.append("F5: no SK in this process's metadata has the DFX origin-name list")
        return None, [], "none"

    if inc is None or inc.dfx is None:
        if len(every) == 1:
            if kind == "none":
                notes.append(
                    "the process metadata holds exactly one SK (single_sk); the hang is not tied to it by any fault line"
                )
            return every[0], [], "single_sk"
        if every:
            notes.append(f"C1: no DFX block and {len(every)} SKs in the metadata; instance ambiguous")
            return None, every, "ambiguous"
    return None, [], "none"


def scope_resolution(rule: str, scope_how: str | None, have_names: bool) -> str:
    """``fault.scope_resolution`` of a resolved instance.

    ``header``: the handler printed the SkScopeId (D2–D4 ``ModelRIIdx…SkScopeId``/SkHeaderInfo — the
    model dir is then the one holding that scope with the DFX child list; D5 also prints ModelId);
    ``cond``: only the COND register decodes the scope (D4+, nodeCnt ≤ 256); ``name_sequence``: no
    scope id printed (D0–D1) — the unique SK whose ordered child funcName list equals the DFX
    origin names; ``single_sk``: no DFX block — the only SK of the process's metadata.
    """
    if rule in ("model_id", "scope_id") and scope_how is not None:
        return scope_how
    if rule in ("origin_names", "model_id") and have_names:
        return "name_sequence"
    return "single_sk"


def _fill_identity(
    inst: SkInstance,
    scope_id: int | None,
    model: str | None,
    resolution: str,
    inc: Incident | None,
    notes: list[str],
) -> tuple[int | None, str | None]:
    """fault.scope_id / fault.model from the resolved SK when the fault lines do not print them."""
    filled = []
    if scope_id is None:
        scope_id = inst.scope_id
        filled.append(f"scope id {scope_id}")
    if model is None and inst.model_id is not None:
        model = inst.model_id
        filled.append(f"model {model}")
    if filled:
        dialect = f"dialect {inc.dialect}" if inc is not None and inc.dialect else "no handler output"
        notes.append(
            f"{' and '.join(filled)} from the SK resolved by {resolution} ({inst.model_label}, "
            f"{dialect}; §3.2 item 3, F5)"
        )
    return scope_id, model


def _first_fault_time(
    times: dict[tuple[str, int], datetime],
    kfaults: list[KernelFaultLine],
    incidents: list[Incident],
) -> datetime | None:
    """Tf: the earliest runtime fault line or handler line of P (F4 upper bound)."""
    stamps: list[datetime] = []
    for f in kfaults:
        t = _ts_of(times, f.src)
        if t is not None:
            stamps.append(t)
    for inc in incidents:
        if inc.first_ts is not None:
            stamps.append(inc.first_ts)
    return min(stamps) if stamps else None


def _phase(ctx: TriageContext, kfaults: list[KernelFaultLine], notes: list[str]) -> str:
    run = ctx.run
    raw = run.failure_phase if run is not None else None
    if raw is not None:
        if raw in PHASES:
            return raw
        notes.append(f"run.json failure_phase {raw!r} is not a known phase; derived from the evidence")
    if kfaults:
        return "device_fault"
    return "unknown"


def dialect_recognised(candidates: tuple[str, ...]) -> bool:
    """G4: the signature lines fit one or more *known* dialects (never a contradiction).

    A block whose signatures fit several adjacent dialects (e.g. a D3/D4 block without a PC or COND
    line — before D5 the handler printed nothing for PC 0) is recognised: the releases it could come
    from print every field it carries with the same meaning (the parser normalises ``launch=`` /
    ``opState=`` and keeps the D0–D4 all-core core-type guess untrusted, T7). Only signatures that fit
    no known dialect, or none at all, leave the dialect unknown (C1).
    """
    return bool(candidates) and all(d in DIALECTS for d in candidates)


def diagnostic_entry(entry: str | None) -> str | None:
    """The diagnostic suffix of an SK entry name (F9), or None."""
    if not entry:
        return None
    for suffix in _DIAG_SUFFIXES:
        if suffix in entry:
            return suffix
    return None


__all__ = [
    "dfx_names",
    "dialect_recognised",
    "diagnostic_entry",
    "incidents_of",
    "localize",
    "models_of",
    "pick_pid",
    "plogs_of",
    "scope_resolution",
]
