"""Child attribution: the four evidence levels per exception core (triage.md §3.3–§3.7).

Why a stage of its own: the confidence grade (C0–C6) and the routes (R2/R3/X4/X5) are pure
functions of *which level named which task index on which core*. This module computes exactly
that — E1 (L1 trace), M/E2 (L2 PC ranges, recomputed, never the handler's first match — T4),
E3 (L3 COND with the T5 wrap rules), E4 (L4 metadata cross-check), the bystander role (§3.6, X5)
— and cites every fact it used. It never grades; :mod:`skdbg.triage.confidence` does.

Guards: T1 (a state-3 "last finished"/"next" record never names a child), T2/T3 (names printed
near the fault and scope boundaries are context, never evidence), T4 (printed ``Found in node``
is a quotation), T5 (COND index wrap), T6 (task index ≠ fused position — identity via
:meth:`SkInstance.child`), T7 (core type only from the exception core's ``CoreType:`` line),
T9 (PC = 0 is unknown).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from skdbg.parsers.binfiles import ImageTable, PcLocation, matches_func_name
from skdbg.parsers.bulk import frozen_builder
from skdbg.parsers.common import Source
from skdbg.parsers.cond import CondCheck, check_cond, state_name
from skdbg.parsers.runtime_faults import CoreErrorReport, DumpException
from skdbg.parsers.sk_handler import ExceptionCore, Incident
from skdbg.triage.context import TriageContext
from skdbg.triage.localize import plogs_of
from skdbg.triage.model import ChildRef, CoreFinding, EvidenceItem
from skdbg.triage.skview import SkInstance, SkTask
from skdbg.triage.stages import Localization

if TYPE_CHECKING:
    from skdbg.triage.waitfor import Blocked, WaitFor

#: trace states (§3.3)
ORIGIN, ENTRY_LAUNCHED, OP_LAUNCHED, OP_FINISHED, ENTRY_FINISHED = 0, 1, 2, 3, 4
BYSTANDER_STATES = frozenset({ORIGIN, ENTRY_LAUNCHED, OP_FINISHED, ENTRY_FINISHED})
#: SYNC args that make a core wait (§3.3: 0 ALL_SYNC, 5 wait AIC→AIV, 6 wait AIV→AIC) — X5
WAIT_SYNC_KINDS = {0: "ALL_SYNC", 5: "wait AIC→AIV", 6: "wait AIV→AIC"}
SYNC_KINDS = {
    0: "ALL_SYNC",
    1: "AIC→AIC",
    2: "AIV→AIV",
    3: "set AIC→AIV",
    4: "set AIV→AIC",
    5: "wait AIC→AIV",
    6: "wait AIV→AIC",
    7: "none",
}
#: which queue a wait kind waits on (the queue that must issue the matching set / reach the barrier)
_WAITS_ON = {5: "aic", 6: "aiv", 0: "both"}


@dataclass(frozen=True, slots=True)
class E4Result:
    """L4 for one task index k (§3.4): did the metadata confirm, fail to confirm, or contradict it."""

    task_index: int
    child: ChildRef
    ok: bool  # E4(k) holds
    contradiction: bool  # funcName / Node Count / unfusible / ELF-prefix mismatch (C2)
    stale: bool  # flag possible_stale_metadata
    detail: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Attribution:
    """Everything the levels said (input of :func:`skdbg.triage.confidence.grade` and routing).

    * ``cores`` — one :class:`CoreFinding` per exception core of the incident.
    * ``K`` — distinct task indices named by any E1/E2/E3 (§3.6); ``named_by[k]`` the levels.
    * ``e2_ambiguous``/``e3_ambiguous`` — union of M(c) with #M ≥ 2 and of E3amb(c).
    * ``e4`` — L4 per candidate index; ``entry_confirmed`` — indices whose task-queue FUNC task
      lists the matched entry address (C3 alternative); ``symbols`` — bound SK / ELF symbol.
    * ``conflicts`` — one line per disagreement (C2/X4); ``missing`` — per-level gap lines (R2).
    * ``candidate_set`` — every task index still possible after each core's levels were
      intersected (§3.4: L3 disambiguates L2; T4/T5): ``K`` plus, per core, ``M(c) ∩ COND(c)``
      (``M(c)`` alone without a usable COND, ``COND(c)`` alone without a PC). A shared-binary PC
      match that COND rules out is never in it; on an L2/L3 disagreement both sides are (C2).
    * ``ge_dumps`` — X6: the adump ``[Dump][Exception]`` lines of a GE-mode SK fault (the dump
      ``symbol name`` is the only child-level fact that family prints, §3.1.4).
    * ``wait_for`` — X5: the wait-for graph of the bystander cores and the hang it names
      (:mod:`skdbg.triage.waitfor`); None without a bystander core whose queue is known.
    """

    cores: tuple[CoreFinding, ...] = ()
    K: tuple[int, ...] = ()
    named_by: dict[int, tuple[str, ...]] = field(default_factory=dict)
    e2_ambiguous: tuple[int, ...] = ()
    e3_ambiguous: tuple[int, ...] = ()
    e4: dict[int, E4Result] = field(default_factory=dict)
    entry_confirmed: tuple[int, ...] = ()
    symbols: dict[int, str] = field(default_factory=dict)
    conflicts: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    evidence: tuple[EvidenceItem, ...] = ()
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    candidate_set: tuple[int, ...] = ()
    ge_dumps: tuple[DumpException, ...] = ()
    wait_for: WaitFor | None = None

    @property
    def bystanders(self) -> tuple[CoreFinding, ...]:
        return tuple(c for c in self.cores if c.role == "bystander")

    @property
    def implicated(self) -> tuple[CoreFinding, ...]:
        return tuple(c for c in self.cores if c.role == "implicated")

    def levels_of(self, k: int) -> tuple[str, ...]:
        return self.named_by.get(k, ())

    def child(self, k: int) -> ChildRef | None:
        r = self.e4.get(k)
        return None if r is None else r.child


# ------------------------------------------------------------------------------------------ helpers


@dataclass(frozen=True, slots=True)
class _Range:
    """One child's code range ``[start, end)`` and the artifact it came from (attribution's PC lookup)."""

    index: int
    start: int
    end: int
    origin: str  # dfx | device_args | task_queue+elf


#: _Range without the frozen ``__init__``: a DFX table gives one per node, core type and entry (~5,000)
_new_range = frozen_builder(_Range)


@dataclass
class _Reading:
    """One state report for a core: counter row, trace block or COND."""

    state: int
    index: int
    src: Source
    kind: str  # counter | trace | cond


def _type_key(core_type: str | None) -> str | None:
    if core_type is None:
        return None
    t = core_type.strip().upper()
    return "aic" if t == "AIC" else "aiv" if t == "AIV" else None


def _ranges(inc: Incident | None, inst: SkInstance | None, qtype: str | None) -> list[_Range]:
    """Child code ranges for one core type (§3.3 child entries): DFX → device args → queue + ELF."""
    types = (qtype,) if qtype is not None else ("aic", "aiv")
    out: list[_Range] = []
    if inc is not None and inc.dfx is not None and inc.dfx.nodes:
        new = _new_range
        for n in inc.dfx.nodes:
            for t in types:
                size = n.aic_size if t == "aic" else n.aiv_size
                if size:
                    out.extend(
                        [
                            new(n.node, e, e + size, "dfx")
                            for e in (n.entry_aic if t == "aic" else n.entry_aiv)
                            if e
                        ]
                    )
        return out
    if inst is not None and inst.dfx_entries():
        for d in inst.dfx_entries():
            for t in types:
                size = d.aic_size if t == "aic" else d.aiv_size
                dents = d.entry_aic if t == "aic" else d.entry_aiv
                for de in dents:
                    if de and size:
                        out.append(_Range(d.index, de, de + size, "device_args"))
        return out
    images = inst.model.images if inst is not None else None
    if inst is not None and images is not None:
        for task in inst.tasks:
            if task.type != "FUNC" or (qtype is not None and task.queue != qtype):
                continue
            for e in task.entries:
                if not e:
                    continue
                function_size = _safe_function_size(images, e)
                if function_size is not None:
                    out.append(_Range(task.index, e, e + function_size, "task_queue+elf"))
    return out


def _safe_function_size(images: ImageTable, entry: int) -> int | None:
    """The size of the function starting at ``entry`` in the images
    (:meth:`~skdbg.parsers.binfiles.ImageTable.function_size_at`); None also when an image is broken
    (an evidence gap, not a crash: as :func:`_safe_locate`)."""
    try:
        return images.function_size_at(entry)
    except Exception:  # noqa: BLE001 — bad input never crashes (common rules)
        return None


def _safe_locate(images: ImageTable, pc: int) -> PcLocation | None:
    """ELF lookup that never raises (a broken image is an evidence gap, not a crash).

    The symbol stays as the ELF names it (``demangled`` is that name too): attribution cites and
    compares the raw symbol only, and demangling runs ``c++filt`` once per new name: ~4 ms at the end
    of every analysis whose faulting PC lies in a C++ kernel. (The task entries of an SK whose sizes
    come from the ELFs are not located this way: :func:`_safe_function_size`.)"""
    try:
        return images.locate(pc, demangle_names=False)
    except Exception:  # noqa: BLE001 — bad input never crashes (common rules)
        return None


def _func_indices(inst: SkInstance | None, inc: Incident | None) -> set[int] | None:
    """FUNC task indices: the instance's schedule, else the handler's printed queues; None = unknown."""
    if inst is not None and inst.has_schedule and inst.tasks:
        return set(inst.func_indices)
    if inc is not None and (inc.aic_queue is not None or inc.aiv_queue is not None):
        out: set[int] = set()
        for q in (inc.aic_queue, inc.aiv_queue):
            if q is not None:
                out |= {t.index for t in q.tasks if t.type == "FUNC"}
        return out
    if inc is not None and inc.dfx is not None and inc.dfx.nodes:
        known = [n for n in inc.dfx.nodes if n.is_func is not None]
        if known:
            return {n.node for n in known if n.is_func}
    return None


def _queue_funcs(inst: SkInstance, qtype: str | None) -> set[int]:
    """FUNC task indices a core of type ``qtype`` can run (both queues when the type is unknown, T7)."""
    if qtype is not None:
        own = {t.index for t in inst.tasks if t.type == "FUNC" and t.queue == qtype}
        if own:
            return own
    return set(inst.func_indices)


def _task_text(t: SkTask) -> str | None:
    """An excerpt for a JSON task (no line to quote); device-args rows quote their own line."""
    if t.src.json_path is None:
        return None
    entries = ", ".join(f"0x{e:x}" for e in t.entries)
    args = "None" if t.args is None else f"0x{t.args:x}"
    return (
        f"{t.queue} taskInfos[{t.slot}]: nodeIndex={t.index}, type={t.type}, args={args}, entries=[{entries}]"
    )


def _origin_name(inc: Incident | None, k: int) -> str | None:
    if inc is None or inc.dfx is None:
        return None
    for n in inc.dfx.nodes:
        if n.node == k:
            return n.origin_name
    return None


def _dfx_node_src(inc: Incident | None, k: int) -> Source | None:
    if inc is None or inc.dfx is None:
        return None
    for n in inc.dfx.nodes:
        if n.node == k:
            return n.source_of("origin_name") or n.src
    return None


class _Builder:
    """Accumulates the evidence items and per-core findings of one attribution run."""

    def __init__(self, ctx: TriageContext, loc: Localization) -> None:
        self.ctx = ctx
        self.loc = loc
        self.inc = loc.incident
        self.inst = loc.instance
        self.items: list[EvidenceItem] = []
        self.flags: list[str] = []
        self.notes: list[str] = []
        self.symbols: dict[int, str] = {}
        self.entry_confirmed: set[int] = set()
        self.conflicts: list[str] = []
        self.elf_prefix: dict[int, str] = {}  # k -> image funcName the PC was found in
        self.scope_checked: set[int] = set()  # cores whose COND scope was compared with SkScopeId
        self.blocked: list[Blocked] = []  # bystander cores and their first blocking task (X5 wait-for graph)
        self.node_cnt = self.inc.node_cnt if self.inc is not None and self.inc.node_cnt is not None else None
        if self.node_cnt is None and self.inst is not None:
            self.node_cnt = self.inst.header_node_cnt or self.inst.node_count
        self.funcs = _func_indices(self.inst, self.inc)
        self.op_trace = bool(
            loc.fault.op_trace if loc.fault.op_trace is not None else (self.inc and self.inc.op_trace)
        )
        #: the child ranges of each queue type, made once: every exception core of that type asks for
        #: them, and where the ELFs give them each is a pass over every task entry's image
        self._ranges_of: dict[str | None, list[_Range]] = {}

    # -------------------------------------------------------------- citing

    def cite(
        self,
        level: str,
        source: str,
        src: Source | None,
        *,
        excerpt: str | None = None,
        rule: str | None = None,
        core: int | None = None,
        k: int | None = None,
        agrees: bool | None = None,
    ) -> EvidenceItem | None:
        if src is None:
            return None
        item = self.ctx.cite(
            level, source, src, excerpt=excerpt, agrees=agrees, rule=rule, core_id=core, task_index=k
        )
        self.items.append(item)
        return item

    def flag(self, name: str) -> None:
        if name not in self.flags:
            self.flags.append(name)

    # -------------------------------------------------------------- states

    def readings(self, c: ExceptionCore) -> list[_Reading]:
        """Trace-state reports of core c: its own trace block, the counter row, the all-core listing.

        The per-core counters are written only by ``*_op_trace*`` entries; without op_trace the
        handler still prints them, all zero (artifacts.md A18) — those rows say nothing about the
        core and are not a state report (a zero counter is not "ORIGIN").
        """
        out: list[_Reading] = []
        inc = self.inc
        if c.trace is not None:
            out.append(_Reading(c.trace.op_state, c.trace.op_id, c.trace.src, "trace"))
        if inc is not None and inc.counters is not None and self.op_trace:
            for e in inc.counters.entries:
                if e.core == c.core_id:
                    out.append(_Reading(e.op_state, e.index, e.src, "counter"))
        if inc is not None and inc.all_cores is not None and c.trace is None:
            for t in inc.all_cores.traces:
                if t.core_id == c.core_id:
                    out.append(_Reading(t.op_state, t.op_id, t.src, "trace"))
        return out

    def cond(self, c: ExceptionCore) -> CondCheck | None:
        if c.cond is None:
            return None
        if c.cond.unavailable or c.cond.value is None:
            return check_cond(0)
        inc = self.inc
        scope = c.sk_scope_id
        if scope is None and inc is not None:
            scope = inc.sk_scope_id
        if scope is None and self.inst is not None:
            scope = self.inst.scope_id
        midx = c.model_idx if c.model_idx is not None else (inc.model_idx if inc is not None else None)
        return check_cond(c.cond.value, sk_scope_id=scope, model_idx=midx, node_cnt=self.node_cnt)

    # -------------------------------------------------------------- L1

    def level1(self, c: ExceptionCore, readings: list[_Reading]) -> set[int]:
        named: set[int] = set()
        for r in readings:
            if r.state == OP_FINISHED:
                # T1: the child finished; the fault is after it — context only, never a suspect.
                self.cite("L1", "plog", r.src, rule="T1", core=c.core_id, k=r.index)
                continue
            if r.state != OP_LAUNCHED:
                continue
            if not self.op_trace:
                continue
            if self.node_cnt is not None and r.index >= self.node_cnt:
                self.notes.append(
                    f"core {c.core_id}: opId={r.index} ≥ nodeCnt={self.node_cnt} — not an E1 (§3.4)"
                )
                self.cite("L1", "plog", r.src, core=c.core_id, agrees=False)
                continue
            if self.funcs is not None and r.index not in self.funcs:
                self.notes.append(f"core {c.core_id}: opId={r.index} is not a FUNC task — not an E1")
                self.cite("L1", "plog", r.src, core=c.core_id, agrees=False)
                continue
            named.add(r.index)
            self.cite("L1", "plog", r.src, core=c.core_id, k=r.index)
        if len(named) > 1:
            self.conflicts.append(
                f"core {c.core_id}: trace records disagree on the running child {sorted(named)} (L1)"
            )
        return named

    # -------------------------------------------------------------- L2

    def level2(
        self, c: ExceptionCore, qtype: str | None
    ) -> tuple[tuple[int, ...], str | None, PcLocation | None]:
        """M(c), a pc_location text, and the ELF location of the PC (when bin_files exist)."""
        pc = c.current_pc
        pc_src = c.source_of("current_pc") or c.src
        if c.node is not None:
            # T4: the handler's first match is a quotation, never L2 evidence on its own.
            self.cite("L2", "plog", c.source_of("node"), rule="T4", core=c.core_id, k=c.node)
        if pc is None:
            return (), None, None
        if pc == 0:
            self.cite("L2", "plog", pc_src, rule="T9", core=c.core_id)
            return (), "unknown (PC = 0, T9)", None
        ranges = self._ranges_of.get(qtype)
        if ranges is None:
            ranges = self._ranges_of[qtype] = _ranges(self.inc, self.inst, qtype)
        hits = [r for r in ranges if r.start <= pc < r.end]
        m = tuple(sorted({r.index for r in hits}))
        images = self.inst.model.images if self.inst is not None else None
        elf = _safe_locate(images, pc) if images is not None and images.names else None
        if not ranges and elf is not None and elf.image is not None and not elf.in_entry:
            # No DFX / device args / queue entries: name the child from the ELF image it sits in,
            # only when exactly one FUNC task carries that funcName (no guess across duplicates).
            fname = elf.image.func_name
            if fname and self.inst is not None:
                ks = sorted(
                    k
                    for k in (self.funcs or set())
                    if (n := self.inst.child(k, _origin_name(self.inc, k)).func_name)
                    and matches_func_name(fname, n)
                )
                m = tuple(ks)
        where: str | None
        if m:
            names = ", ".join(str(k) for k in m)
            where = f"child task(s) {names}"
        elif elf is not None and elf.in_entry:
            where = "sk_entry"
        elif ranges or elf is not None:
            where = "outside every child range"
        else:
            where = None
        if elf is not None:
            if elf.symbol is not None and not elf.in_entry and elf.offset_in_symbol is not None:
                where = f"{where}; {elf.symbol}+0x{elf.offset_in_symbol:x}"
            elif elf.in_entry:
                where = "sk_entry (ELF)"
        self.cite("L2", "plog", pc_src, core=c.core_id, k=m[0] if len(m) == 1 else None)
        if elf is not None and elf.image is not None:
            self.cite(
                "L2",
                "bin_files",
                # an ELF has no lines: the locator is the image offset (and symbol) of the PC
                Source(
                    elf.image.path,
                    json_path=f"image+0x{elf.offset:x}" + (f" ({elf.symbol})" if elf.symbol else "")
                    if elf.offset is not None
                    else None,
                ),
                excerpt=f"PC 0x{pc:x}: {elf.reason}",
                core=c.core_id,
                k=m[0] if len(m) == 1 else None,
            )
        for r in hits:
            if self.inst is not None:
                for t in self.inst.tasks_of(r.index):
                    if t.type == "FUNC" and r.start in t.entries:
                        self.entry_confirmed.add(r.index)
        for k in m:
            if c.sk_symbol and len(m) == 1:
                self.symbols.setdefault(k, c.sk_symbol)
            elif elf is not None and elf.symbol and not elf.in_entry and len(m) == 1:
                self.symbols.setdefault(k, elf.symbol)
            if elf is not None and elf.image is not None and elf.image.func_name and len(m) == 1:
                self.elf_prefix[k] = elf.image.func_name
        return m, where, elf

    # -------------------------------------------------------------- L3

    def level3(
        self, c: ExceptionCore, cc: CondCheck | None, qtype: str | None
    ) -> tuple[int | None, tuple[int, ...]]:
        if c.cond is None or cc is None:
            return None, ()
        src = c.cond.source_of("value") or c.cond.src
        if not cc.cond.available:
            self.cite("L3", "plog", src, rule="C6", core=c.core_id)
            self.flag("cond_unavailable")
            return None, ()
        st = cc.cond.state
        if st == OP_FINISHED:
            self.cite("L3", "plog", src, rule="T1", core=c.core_id, k=cc.cond.op_index)
            return None, ()
        if st != OP_LAUNCHED:
            self.cite("L3", "plog", src, core=c.core_id)
            return None, ()
        if self.inst is None or not self.inst.has_schedule:
            # §3.4 L3 needs the scope's task queue: the COND index alone is context.
            self.cite("L3", "plog", src, core=c.core_id)
            self.notes.append(f"core {c.core_id}: COND names opIndex={cc.cond.op_index} but no task queue")
            return None, ()
        # "Queue position" (T5): a core runs only the FUNC tasks of its own core type's queue, so a
        # wrapped opIndex k can only be k + 256·j where that queue holds a FUNC task.
        funcs = _queue_funcs(self.inst, qtype)
        if cc.cond_index_overflow:
            self.scope_checked.add(c.core_id)
            self.flag("cond_index_overflow")
            if cc.recovered_index is not None and cc.recovered_index in funcs:
                k = cc.recovered_index
                self.cite("L3", "plog", src, rule="T5", core=c.core_id, k=k)
                return k, ()
            amb = tuple(k for k in (cc.consistent_candidates or cc.candidates) if k in funcs)
            self.cite("L3", "plog", src, rule="T5", core=c.core_id)
            return None, amb
        cands = tuple(k for k in cc.candidates if k in funcs) if cc.candidates else ()
        if not cc.candidates and self.node_cnt is None and cc.cond.op_index in funcs:
            cands = (cc.cond.op_index,)
        if cc.scope_match is not None:
            self.scope_checked.add(c.core_id)
        if cc.scope_match is None:
            # The fault's SkScopeId is unknown: the decoded scope cannot be checked (§3.4 L3).
            self.cite("L3", "plog", src, core=c.core_id)
            return None, cands
        if len(cands) == 1 and cands[0] == cc.cond.op_index:
            self.cite("L3", "plog", src, core=c.core_id, k=cands[0])
            self.cite_func_task(cands[0], c.core_id)
            return cands[0], ()
        self.cite("L3", "plog", src, core=c.core_id, rule="T5" if len(cands) > 1 else None)
        return None, cands

    def cite_func_task(self, k: int, core: int) -> None:
        """The scheduled FUNC task k (task queue JSON or device-args row) that an L3 reading names."""
        if self.inst is None:
            return
        tq = [t for t in self.inst.tasks_of(k) if t.type == "FUNC"]
        if tq:
            self.cite("L3", tq[0].origin, tq[0].src, excerpt=_task_text(tq[0]), core=core, k=k)

    # -------------------------------------------------------------- L2 ∩ L3 (§3.4, T4/T5)

    def narrow(
        self, c: ExceptionCore, m: tuple[int, ...], e3: int | None, e3c: tuple[int, ...]
    ) -> tuple[int | None, tuple[int, ...], tuple[int, ...]]:
        """Intersect the PC match set M(c) with what COND allows on core c (issue: never list every
        PC match of a shared binary, never a task COND rules out).

        Returns (E3, E3amb, narrowed candidates of c). A lower level may disambiguate a higher one
        (§3.4): when the PC sits in a binary shared by several tasks and COND (after the T5 wrap and
        queue checks, its scope checked against SkScopeId) leaves exactly one of them, that task is
        E3 — graded C4, never above. An empty
        intersection is an L2/L3 disagreement (C2): both sides stay candidates.
        """
        allowed = (e3,) if e3 is not None else e3c
        if not allowed or not m:
            return e3, e3c, tuple(sorted(set(m) | set(allowed)))
        inter = tuple(k for k in m if k in set(allowed))
        if not inter:
            if not (e3 is not None and len(m) == 1):  # E2 ≠ E3 is reported as a level conflict below
                self.conflicts.append(
                    f"core {c.core_id}: the PC matches task(s) {list(m)} but COND allows only "
                    f"{list(allowed)} (L2 vs L3)"
                )
            return e3, e3c, tuple(sorted(set(m) | set(allowed)))
        checked = c.core_id in self.scope_checked
        if e3 is None and len(inter) == 1 and len(m) >= 2 and c.cond is not None and checked:
            k = inter[0]
            self.notes.append(
                f"core {c.core_id}: the PC matches tasks {list(m)} (shared binary, T4) and COND allows "
                f"{list(e3c)} (T5); only task {k} is in both — L3 disambiguates L2"
            )
            self.cite("L3", "plog", c.cond.source_of("value") or c.cond.src, core=c.core_id, k=k)
            self.cite_func_task(k, c.core_id)
            return k, (), (k,)
        if e3 is None:
            return None, inter, inter
        return e3, e3c, inter

    # -------------------------------------------------------------- bystander (§3.6, X5)

    def blocking(self, c: ExceptionCore, qtype: str | None, states: list[_Reading]) -> str | None:
        if self.inst is None or qtype is None or not self.inst.tasks:
            return None
        # the wait-for module loads with the first bystander core (a hang): most faults have none
        from skdbg.triage.waitfor import Blocked, first_blocking

        queue = self.inst.queue(qtype)
        finished = [r for r in states if r.state == OP_FINISHED]
        if any(r.state == ENTRY_FINISHED for r in states) and not finished:
            self.blocked.append(Blocked(c.core_id, qtype, None))
            return "SK entry finished on this core (state 4): nothing left to wait on"
        if any(r.state == ORIGIN for r in states) and not finished:
            self.blocked.append(Blocked(c.core_id, qtype, None))
            return None
        # No trace state at all (no op_trace, no COND value): where the core stopped in its queue is
        # unknown, so the first blocking task from the queue head is named, and said to be so.
        head = "" if states else " (no trace state on this core: first blocking task from the queue head)"
        last = finished[0].index if finished else None
        t = first_blocking(queue, last)
        self.blocked.append(Blocked(c.core_id, qtype, t, last))
        if last is not None and not any(x.index == last and x.type == "FUNC" for x in queue):
            return None
        return None if t is None else self._describe_wait(t, qtype) + head

    def _describe_wait(self, t: SkTask, qtype: str) -> str:
        where = f"{qtype.upper()} queue slot {t.slot}"
        if t.type == "SYNC":
            kind = SYNC_KINDS.get(t.args or 0, str(t.args))
            other = _WAITS_ON.get(t.args or 0, "both")
            edge = (
                "barrier: every core of both types must arrive"
                if other == "both"
                else f"waits for the {other.upper()} queue's matching set"
            )
            text = f"task {t.index} SYNC args={t.args} ({kind}) at {where}; {edge}"
        else:
            ev = ""
            if self.inst is not None and t.node_id is not None:
                n = self.inst.node_by_id(t.node_id)
                if n is not None and n.node.event_id is not None:
                    ev = f" eventId={n.node.event_id} (nodeId {t.node_id}, stream {n.stream_id})"
            text = f"task {t.index} EVENT_WAIT{ev} at {where}; waits for {self._notify_of(t)}"
        self.cite("L4", t.origin, t.src, excerpt=_task_text(t), rule="X5", k=t.index)
        return text

    def _notify_of(self, t: SkTask) -> str:
        """The EventNotify partner (same eventId) of a waiting task, named by nodeId/stream/task."""
        inst = self.inst
        wait = inst.node_by_id(t.node_id) if inst is not None and t.node_id is not None else None
        if inst is None or wait is None or wait.node.event_id is None:
            return "the matching EVENT_NOTIFY"
        ev = wait.node.event_id
        partners = [
            n
            for n in inst.nodes
            if n.node.event_id == ev
            and n.node_id != wait.node_id
            and (n.node.event_type or "") != "EventWait"
        ]
        if not partners:
            return f"an EventNotify of eventId={ev} that is not in this SK (cross-SK or missing edge)"
        by_node = {v: k for k, v in inst.index_to_node_id.items()}
        parts = []
        for n in partners:
            k = by_node.get(n.node_id)
            task = f", task {k}" if k is not None else ""
            parts.append(f"{n.node.event_type or 'notify'} nodeId {n.node_id} (stream {n.stream_id}{task})")
        return "the edge from " + " / ".join(parts)

    # -------------------------------------------------------------- L4

    def level4(self, k: int) -> E4Result:
        inst = self.inst
        origin = _origin_name(self.inc, k)
        if inst is None:
            ref = ChildRef(k, None, origin, None, None, None, identity="unresolved")
            return E4Result(k, ref, False, False, False, ("no SK instance resolved (F5/F6)",))
        ref = inst.child(k, origin)
        if k in self.symbols:
            ref = replace(ref, symbol=self.symbols[k])
        detail: list[str] = []
        contra = False
        stale = False
        ok = True
        if ref.identity in ("ambiguous", "unresolved"):
            ok = False
            detail.append(f"task {k} cannot be tied to one fused node ({ref.identity}, §3.5/T6)")
        node = inst.node_by_id(ref.node_id) if ref.node_id is not None else None
        if ref.identity == "direct" and node is None and inst.block is not None:
            ok, contra, stale = False, True, True
            detail.append(f"nodeId {ref.node_id} of task {k} is not in sk_fused_nodes.log")
        if node is not None and not node.is_kernel:
            ok, contra = False, True
            detail.append(f"task {k} resolves to a non-kernel node {node.node_id}")
        if origin is None:
            ok = False
            detail.append(f"no DFX origin name for node[{k}]: funcName cannot be compared")
        elif ref.func_name is not None and ref.func_name != origin:
            ok, contra, stale = False, True, True
            detail.append(f"funcName {ref.func_name!r} ≠ DFX origin name {origin!r}")
            self.cite("L4", "plog", _dfx_node_src(self.inc, k), k=k, agrees=False)
        prefix = self.elf_prefix.get(k)
        if prefix is not None and ref.func_name is not None and not matches_func_name(prefix, ref.func_name):
            ok, contra, stale = False, True, True
            detail.append(f"ELF image prefix {prefix!r} ≠ funcName {ref.func_name!r}")
        ncount = inst.node_count
        if ncount is None:
            ok = False
            detail.append("sk_fused_nodes.log has no Node Count for this SK")
        elif self.node_cnt is not None and ncount != self.node_cnt:
            ok, contra, stale = False, True, True
            detail.append(f"Node Count {ncount} ≠ nodeCnt {self.node_cnt}")
        if ref.node_id is not None:
            for u in inst.fail_reasons:
                if u.node.node_id == ref.node_id:
                    ok, contra, stale = False, True, True
                    detail.append(f"nodeId {ref.node_id} is listed unfusible ({u.reason or u.reason_raw})")
                    self.cite("L4", "fail_reasons", u.src, k=k, agrees=False)
            fs = inst.fused_scope
            if fs is not None and fs.fused_node_ids and ref.node_id not in fs.fused_node_ids:
                ok, contra, stale = False, True, True
                detail.append(f"nodeId {ref.node_id} is not in the fused scope {inst.scope_id}")
                self.cite("L4", "fail_reasons", fs.src, k=k, agrees=False)
        if node is not None:
            self.cite("L4", "fused_nodes", node.src, k=k)
        tasks = [t for t in inst.tasks_of(k) if t.type == "FUNC"]
        if tasks:
            self.cite("L4", tasks[0].origin, tasks[0].src, excerpt=_task_text(tasks[0]), k=k)
        if ok:
            detail.append(
                f"task {k} → nodeId {ref.node_id} {ref.func_name} ({ref.identity}); "
                f"Node Count {ncount} = nodeCnt"
            )
        return E4Result(k, ref, ok, contra, stale, tuple(detail))


def _context_guards(b: _Builder, k_set: tuple[int, ...]) -> None:
    """T2/T3: generated SK names, scope boundaries and BreakInfo trigger nodes are context only."""
    inc = b.inc
    if not k_set and inc is not None and inc.dfx is not None and inc.dfx.nodes:
        last = inc.dfx.nodes[-1]
        if last.origin_name:
            b.cite(
                "L2",
                "plog",
                last.source_of("origin_name") or last.src,
                excerpt=f"Origin function name: {last.origin_name} (node[{last.node}] printed nearest the "
                "fault — T2: text proximity is not evidence)",
                rule="T2",
            )
    inst = b.inst
    if inst is None:
        return
    name = inst.sk_name
    if name and ("start_" in name or "end_" in name) and inst.block is not None:
        b.cite(
            "L4",
            "fused_nodes",
            inst.block.src,
            excerpt=f"SK name {name} (scope boundary — T3: not evidence of the faulting child)",
            rule="T3",
        )
    fs = inst.fused_scope
    if fs is not None and fs.break_info is not None and fs.break_info.trigger_node is not None:
        b.cite(
            "L4",
            "fail_reasons",
            fs.break_info.src,
            excerpt=f"triggerNode={fs.break_info.trigger_node} (compile-time cut — T3: not evidence)",
            rule="T3",
        )


def _missing(b: _Builder, cores: Iterable[CoreFinding]) -> list[str]:
    """Per-level 'what is missing and how to collect it' (R2)."""
    cores = list(cores)
    out: list[str] = []
    inc = b.inc
    if not any(c.e1 is not None for c in cores):
        if not b.op_trace:
            out.append(
                "L1: no child trace — the entry has no _op_trace; rerun with "
                "super_kernel_debug_options debug_op_exec_trace=1 (D1)"
            )
        else:
            out.append("L1: op_trace is on but no exception core reports OP_LAUNCHED (between children)")
    if not any(c.e2 is not None for c in cores):
        if inc is None or not inc.cores:
            out.append("L2: no exception-core PC block (no handler DFX output for this fault)")
        elif all(c.current_pc in (None, 0) for c in cores):
            out.append("L2: no CurrentPC captured (PC = 0 or not printed, T9)")
        elif any(len(c.m) >= 2 for c in cores):
            out.append("L2: the PC matches several children (shared binary, T4)")
        else:
            out.append("L2: the PC is in no child range (SK entry code or unknown)")
        if inc is not None and inc.dfx is None and (b.inst is None or not b.inst.dfx_entries()):
            out.append("L2: no DFX table / device-args DFX entries (handler aborted before PrintDfxInfo)")
    if not any(c.e3 is not None for c in cores):
        if inc is None or not any(c.cond is not None for c in inc.cores):
            out.append("L3: no COND register line (dialect < D4 or no handler block)")
        elif "cond_unavailable" in b.flags:
            out.append("L3: COND unavailable (driver package not upgraded)")
        if b.inst is None or not b.inst.has_schedule:
            out.append("L3: no sk_task_queue.json / sk_device_args.log for this SK")
    if b.inst is None:
        out.append("L4: no SK instance resolved in the fresh metadata (sk_meta/<pid>)")
    elif b.inst.block is None:
        out.append("L4: no sk_fused_nodes.log record for this SK")
    return out


def attribute(ctx: TriageContext, loc: Localization) -> Attribution:
    """Run L1–L4 on every exception core of ``loc.incident`` (§3.4–§3.7)."""
    b = _Builder(ctx, loc)
    inc = loc.incident
    findings: list[CoreFinding] = []
    named_by: dict[int, list[str]] = {}
    e2_amb: set[int] = set()
    e3_amb: set[int] = set()
    cand_set: set[int] = set()
    per_core: list[tuple[int, tuple[int, ...]]] = []  # each core's candidates after L2 ∩ L3
    excores = [c for c in inc.cores if c.callback == "A"] if inc is not None else []
    if inc is not None and not excores:
        excores = list(inc.cores)
    if not excores and loc.is_sk:
        excores = _runtime_cores(ctx, loc)
        if excores:
            b.notes.append(
                "the SK handler printed no exception-core block: the faulting cores and their PCs come from "
                "the runtime's core error report; L2 is recomputed from the DFX table, device-args DFX "
                "entries or the task-queue entries + ELF symbol sizes (§3.4 L2)"
            )
    seen: set[int] = set()
    for c in excores:
        if c.core_id in seen:
            continue  # callback-B repeats of a core are not new evidence
        seen.add(c.core_id)
        start = len(b.items)
        # T7: core type only from the exception core's own CoreType line.
        qtype = _type_key(c.core_type)
        if c.core_type is None:
            b.flag("core_type_unknown")
        readings = b.readings(c)
        cc = b.cond(c)
        l1 = b.level1(c, readings)
        m, where, elf = b.level2(c, qtype)
        e3, e3c = b.level3(c, cc, qtype)
        e3, e3c, narrowed = b.narrow(c, m, e3, e3c)
        cand_set |= set(narrowed)
        if narrowed:
            per_core.append((c.core_id, narrowed))
        e1 = next(iter(l1)) if len(l1) == 1 else None
        e2 = m[0] if len(m) == 1 else None
        for k in sorted(l1):
            named_by.setdefault(k, []).append("L1")
        if e2 is not None:
            named_by.setdefault(e2, []).append("L2")
        if e3 is not None:
            named_by.setdefault(e3, []).append("L3")
        if len(m) >= 2:
            e2_amb |= set(m)
        e3_amb |= set(e3c)
        states = list(readings)
        if cc is not None and cc.cond.available:
            states.append(_Reading(cc.cond.state, cc.cond.op_index, c.cond.src if c.cond else c.src, "cond"))
        named = {k for k in (e1, e2, e3) if k is not None} | l1
        role = "unknown"
        blocking = None
        cflags: list[str] = []
        if named or m or e3c:
            role = "implicated"
        elif c.current_pc not in (None, 0) and all(r.state in BYSTANDER_STATES for r in states):
            # §3.6: "only states 0/1/3/4" holds vacuously for a core with no trace state at all (a
            # run without op_trace whose COND is absent or 0): its non-zero PC in entry code still makes
            # it a bystander; only PC = 0 (T9) leaves a core unknown.
            has_bins = (
                b.inst is not None and b.inst.model.images is not None and bool(b.inst.model.images.names)
            )
            outside = c.matched is False or (not m and where is not None)
            confirmed = (elf is not None and elf.in_entry) if has_bins else True
            if outside and confirmed:
                role = "bystander"
                blocking = b.blocking(c, qtype, states)
                for r in states:
                    if r.state == OP_FINISHED:
                        cflags.append("T1")
        if c.current_pc == 0:
            cflags.append("T9")
        st = readings[0] if readings else (states[0] if states else None)
        task_index = next(iter(named)) if len(named) == 1 else None
        items = tuple(b.items[start:])
        findings.append(
            CoreFinding(
                core_id=c.core_id,
                core_type=c.core_type,
                start_pc=c.start_pc,
                current_pc=c.current_pc,
                role=role,
                task_index=task_index,
                e1=e1,
                e2=e2,
                m=m,
                e3=e3,
                e3_candidates=e3c,
                op_state=None if st is None else st.state,
                state_name=None if st is None else state_name(st.state),
                cond_value=None if c.cond is None else c.cond.value,
                cond_state=None if cc is None or not cc.cond.available else cc.cond.state_name,
                cond_index=None if cc is None or not cc.cond.available else cc.cond.op_index,
                printed_node=c.node if c.node is not None else c.error_node_idx,
                pc_location=where,
                blocking=blocking,
                flags=tuple(cflags),
                evidence=items,
            )
        )
        if len(named) > 1:
            b.conflicts.append(f"core {c.core_id}: levels name different children {sorted(named)}")

    wait_for = _wait_for(ctx, findings, b)
    K = tuple(sorted(named_by))
    if len(K) >= 2:
        b.conflicts.append("cores/levels name different children: " + ", ".join(f"task {k}" for k in K))
    _cross_core_exclusion(K, per_core, b)
    cand_set |= set(K)
    e4 = {k: b.level4(k) for k in sorted(cand_set)}
    for res in e4.values():
        if res.stale:
            b.flag("possible_stale_metadata")
    _context_guards(b, K)
    return Attribution(
        cores=tuple(findings),
        K=K,
        named_by={k: tuple(v) for k, v in named_by.items()},
        e2_ambiguous=tuple(sorted(e2_amb)),
        e3_ambiguous=tuple(sorted(e3_amb)),
        e4=e4,
        entry_confirmed=tuple(sorted(b.entry_confirmed)),
        symbols=dict(b.symbols),
        conflicts=tuple(dict.fromkeys(b.conflicts)),
        flags=tuple(b.flags),
        evidence=tuple(b.items),
        missing=tuple(_missing(b, findings)),
        notes=tuple(b.notes),
        candidate_set=tuple(sorted(cand_set)),
        ge_dumps=_ge_dumps(ctx, loc),
        wait_for=wait_for,
    )


def _cross_core_exclusion(
    K: tuple[int, ...], per_core: list[tuple[int, tuple[int, ...]]], b: _Builder
) -> None:
    """X4/C2: one child is named, yet another core's own evidence (a shared-binary PC match or a wrapped
    COND index, after L2 ∩ L3) allows only *other* children. That core faulted in code that is not the
    named child's — conflicting child evidence across cores; the named child is never promoted to an
    exact suspect over it (upstream eval 9: ambiguity is reported with all candidates)."""
    if len(K) != 1:
        return
    k = K[0]
    for core_id, cands in per_core:
        if k not in cands:
            b.conflicts.append(
                f"core {core_id}: its evidence allows only task(s) {list(cands)}, not the named task {k} "
                "(conflicting cores, X4)"
            )


def _runtime_cores(ctx: TriageContext, loc: Localization) -> list[ExceptionCore]:
    """Exception cores from P's runtime core error reports (``… core id is <c>, … pc start: …, current:
    …``), for an SK fault whose handler printed no exception-core block (it aborted before PrintDfxInfo,
    or only its anchor line survived). Only the measured facts are carried: core id, the core type of
    the error kind, start/current PC; no node match, trace or COND (those come from the handler only)."""
    out: list[ExceptionCore] = []
    seen: set[int] = set()
    for pe in plogs_of(ctx, loc.pid):
        for f in pe.faults:
            if not isinstance(f, CoreErrorReport) or f.core_id in seen or f.pc_current is None:
                continue
            seen.add(f.core_id)
            out.append(_core_from_report(f, len(out)))
    return out


def _core_from_report(r: CoreErrorReport, order: int) -> ExceptionCore:
    src = r.src
    return ExceptionCore(
        src=src,
        order=order,
        callback="A",
        core_id=r.core_id,
        matched=None,
        core_type=r.core_type,
        model_idx=None,
        model_id=None,
        original_model_ri=None,
        sk_scope_id=None,
        start_pc=r.pc_start,
        start_pc_label=None,
        current_pc=r.pc_current,
        node=None,
        entry=None,
        entry_addr=None,
        end_addr=None,
        func_size=None,
        func_size_dec=None,
        num_blocks=None,
        cube_num=None,
        vec_num=None,
        not_func_node=None,
        origin_name=None,
        origin_name_legacy=False,
        origin_name_error=None,
        bin_buffer_error=None,
        computed_func_offset=None,
        bin_dev_addr=None,
        func_offset_zero=False,
        sk_symbol=None,
        sk_symbol_bind=None,
        sk_symbol_size=None,
        sk_symbol_failed_offset=None,
        dev_args=None,
        error_node_idx=None,
        exceeds_aicore_nums=None,
        trace=None,
        cond=None,
        notes=(),
        sources=(("current_pc", src), ("start_pc", src), ("core_type", src)),
    )


def _ge_dumps(ctx: TriageContext, loc: Localization) -> tuple[DumpException, ...]:
    """X6: P's adump exception lines (core, PCs, ``symbol name``) for a GE-mode SK fault."""
    if loc.fault.kind != "ge_sk":
        return ()
    return tuple(f for pe in plogs_of(ctx, loc.pid) for f in pe.faults if isinstance(f, DumpException))


def _wait_for(ctx: TriageContext, findings: list[CoreFinding], b: _Builder) -> WaitFor | None:
    """X5: the wait-for graph of the bystander cores (:mod:`skdbg.triage.waitfor`). A circular wait
    flags its cores ``circular_wait`` and says so in their ``blocking`` text."""
    if not b.blocked:
        return None  # no bystander core: no graph (build_wait_for's first answer), no waitfor import
    from skdbg.triage.waitfor import CounterRow, build_wait_for

    counters: list[CounterRow] = []
    if b.inc is not None and b.inc.counters is not None and b.op_trace:
        counters = [CounterRow(e.core, e.op_state, e.index, e.src) for e in b.inc.counters.entries]
    wf = build_wait_for(ctx, b.inst, b.blocked, counters)
    if wf is None:
        return None
    for f in wf.findings:
        if f.kind != "circular_wait":
            continue
        b.flag("circular_wait")
        for i, cf in enumerate(findings):
            if cf.core_id in f.cores and "circular_wait" not in cf.flags:
                findings[i] = replace(
                    cf,
                    blocking=f"{cf.blocking}; circular wait across {f.across} (cores {list(f.cores)})",
                    flags=(*cf.flags, "circular_wait"),
                )
    return wf


__all__ = ["Attribution", "E4Result", "attribute"]
