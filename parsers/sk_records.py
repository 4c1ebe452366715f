"""Records of the SK exception-handler parse (artifacts.md §1.4): one :class:`Incident` per SK fault
with every printed field and the source line of each.

Why a module of their own: triage, the frames and the dedupe read these records; only the parser
(:mod:`skdbg.parsers.sk_parser`) builds them. All are frozen: a parsed incident is never modified, a
merged copy is a new record (:mod:`skdbg.parsers.sk_dedupe`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.cond import CondCheck, CondDecode, check_cond

if TYPE_CHECKING:
    import pandas as pd


DIALECTS = ("D0", "D1", "D2", "D3", "D4", "D5")
NON_AOT_DETAIL = "non-AOT SK, no handler data"  # row 45

# --------------------------------------------------------------------------------------------- records

Sources = tuple[tuple[str, Source], ...]


def _src_of(sources: Sources, name: str) -> Source | None:
    for key, src in sources:
        if key == name:
            return src
    return None


@dataclass(frozen=True, slots=True)
class SkHeaderInfo:
    """A15 (INFO). ``model_*`` from ``modelIdIndexAndSkScopeId`` (D5) or ``modelRIIdAndSkScopeId`` (D2–D4)."""

    src: Source
    aic_que_offset: int | None
    aiv_que_offset: int | None
    counter_offset: int | None
    ws_offset: int | None  # D0/D1 only
    dfx_offset: int | None
    node_cnt: int | None
    total_size: int | None
    model_scope_value: int | None
    model_idx: int | None
    sk_scope_id: int | None
    model_id: str | None  # D5: "<rtsId>_<callCount>", "" when not registered
    original_model_ri: int | None  # D2–D4
    sources: Sources

    def source_of(self, name: str) -> Source | None:
        return _src_of(self.sources, name)


@dataclass(frozen=True, slots=True)
class QueueTask:
    """One task of a printed task queue (A16/A17): its slot, task index, type, block count and ``args``
    (an address; for a SYNC task, the sync type: ``ALL_SYNC`` is 0)."""

    src: Source
    slot: int
    index: int
    type: str
    num_blocks: int
    args: int


@dataclass(frozen=True, slots=True)
class TaskQueue:
    """A16/A17: first of the four replicated queues of one core type."""

    src: Source
    core_type: str
    offset: int
    task_cnt: int | None
    tasks: tuple[QueueTask, ...]


@dataclass(frozen=True, slots=True)
class CounterEntry:
    """One A18 line; legacy ``launch=/exit=`` (D0–D2) maps launch → ``op_state`` (triage §3.1.3)."""

    src: Source
    core: int
    index: int
    op_state: int
    state_name: str
    exit: int | None
    legacy: bool


@dataclass(frozen=True, slots=True)
class CounterTable:
    """The printed counter table (A18, PrintCounterInfo): its offset in the args and one entry per core."""

    src: Source
    offset: int
    entries: tuple[CounterEntry, ...]


@dataclass(frozen=True, slots=True)
class DfxNode:
    """A20–A22. ``name_kind``: origin, failed (ret in ``name_error_ret``), not_func, legacy or None."""

    src: Source
    node: int
    bin_hdl: int
    func_hdl_ori: int
    aic_size: int
    aiv_size: int
    num_blocks: int | None
    cube_num: int | None
    vec_num: int | None
    name_kind: str | None
    origin_name: str | None
    name_error_ret: int | None
    entry_aic: tuple[int, int, int, int]  # 0 = not printed (the handler prints only non-zero entries)
    entry_aiv: tuple[int, int, int, int]
    sources: Sources

    @property
    def is_func(self) -> bool | None:
        if self.name_kind is None:
            return None
        return self.name_kind != "not_func"

    def source_of(self, name: str) -> Source | None:
        return _src_of(self.sources, name)


@dataclass(frozen=True, slots=True)
class DfxTable:
    """The printed DfxInfo table (A19–A22, PrintDfxInfo): its offset in the args, the node count it declares
    and the nodes printed."""

    src: Source
    offset: int
    node_cnt: int
    nodes: tuple[DfxNode, ...]


@dataclass(frozen=True, slots=True)
class TraceSymbol:
    """Symbol lines after a trace step (PrintSymbolByCoreId); role: next_first|running|last_finished|next."""

    src: Source
    role: str
    op_id: int
    core_type: str | None
    start_pc: int | None
    current_pc: int | None
    function_name: str | None
    no_name: bool
    lookups: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CoreTrace:
    """§1.4.4 for one core. ``core_type_guessed``: the label comes from ``coreId < 25`` (T7)."""

    src: Source
    core_id: int
    core_type: str
    core_type_guessed: bool
    op_state: int
    state_name: str
    op_id: int
    legacy_exit: int | None
    not_executed: bool
    started: bool
    running: int | None
    #: ``opId=N finished, checking current and next operators`` (OP_FINISHED, §1.4.4): the op id the
    #: core reports finished; ``last_finished`` is the ``> Last finished opId=`` line that follows
    finished_op: int | None
    last_finished: int | None
    next_op: int | None
    next_is_first: bool
    no_next: tuple[int, int] | None
    completed: bool
    unknown_state: int | None
    symbols: tuple[TraceSymbol, ...]
    sources: Sources

    def source_of(self, name: str) -> Source | None:
        return _src_of(self.sources, name)


@dataclass(frozen=True, slots=True)
class CondInfo:
    """§1.4.5 for one core: printed value, printed state/index, full decode (cond.py) and messages."""

    src: Source
    core_id: int
    core_type: str | None
    arch: str | None
    reg_low_idx: int | None
    reg_high_idx: int | None
    unavailable: bool  # "driver package not upgraded" (COND = 0, row 35)
    value: int | None
    printed_state: int | None
    printed_index: int | None
    decoded: CondDecode | None
    message: str | None  # origin, launched, running, finished, completed, unknown
    message_index: int | None
    next_name: str | None
    current_name: str | None
    last_finished_name: str | None
    sources: Sources

    def source_of(self, name: str) -> Source | None:
        return _src_of(self.sources, name)


@dataclass(frozen=True, slots=True)
class ExceptionCore:
    """One faulting core (A26): §1.4.2 matched / §1.4.3 no-match block + §1.4.4 trace + §1.4.5 COND.

    ``matched`` is True (``Found in node``), False (``No sub kernel matched``) or None (no PC block
    printed: D0, or PC = 0 in D1–D4). ``current_pc == 0`` is kept distinct from None (T9).
    """

    src: Source
    order: int
    callback: str  # "A" or "B" (D4 callback B re-prints blocks, row 43)
    core_id: int
    matched: bool | None
    core_type: str | None
    model_idx: int | None
    model_id: str | None
    original_model_ri: int | None
    sk_scope_id: int | None
    start_pc: int | None
    start_pc_label: str | None  # "StartPC" or "startPC"
    current_pc: int | None
    node: int | None
    entry: int | None
    entry_addr: int | None
    end_addr: int | None
    func_size: int | None
    func_size_dec: int | None
    num_blocks: int | None
    cube_num: int | None
    vec_num: int | None
    not_func_node: int | None
    origin_name: str | None
    origin_name_legacy: bool
    origin_name_error: tuple[int, int] | None  # (node, ret) from the core-less failure line (row 31)
    bin_buffer_error: tuple[int, int] | None  # (node, rtRet)
    computed_func_offset: int | None
    bin_dev_addr: int | None
    func_offset_zero: bool
    sk_symbol: str | None
    sk_symbol_bind: str | None
    sk_symbol_size: int | None
    sk_symbol_failed_offset: int | None
    dev_args: int | None
    error_node_idx: int | None
    exceeds_aicore_nums: int | None
    trace: CoreTrace | None
    cond: CondInfo | None
    notes: tuple[tuple[str, Source], ...]
    sources: Sources

    @property
    def pc_unknown(self) -> bool:
        """T9: a printed ``CurrentPC: 0x0`` means no PC was captured, not "in entry code"."""
        return self.current_pc == 0

    def source_of(self, name: str) -> Source | None:
        return _src_of(self.sources, name)


@dataclass(frozen=True, slots=True)
class ModelMap:
    """A27: ``kind`` "modelId" (D5, values "<rtsId>_<n>") or "modelRI" (D2–D4, values hex strings)."""

    src: Source
    kind: str
    total: int
    entries: tuple[tuple[int, str], ...]

    def lookup(self, idx: int) -> str | None:
        for i, v in self.entries:
            if i == idx:
                return v
        return None


@dataclass(frozen=True, slots=True)
class AllCoreTrace:
    """A28: §1.4.4 for every core with PC 0. Labels are from a table, never measured (T7)."""

    src: Source
    core_count: int
    core_type_guessed: bool
    traces: tuple[CoreTrace, ...]


@dataclass(frozen=True, slots=True)
class DumpTensor:
    """One tensor of an ``Adx::ExceptionDumpInfo`` record (§1.4.6): its index and each printed field, in
    order."""

    src: Source
    index: int
    fields: tuple[tuple[str, str], ...]  # label → printed value, in print order

    def get(self, name: str) -> str | None:
        for k, v in self.fields:
            if k == name:
                return v
        return None


@dataclass(frozen=True, slots=True)
class DumpRecord:
    """One ``Adx::ExceptionDumpInfo [i]`` record (§1.4.6)."""

    src: Source
    index: int
    fields: tuple[tuple[str, str], ...]
    tensors: tuple[DumpTensor, ...]

    def get(self, name: str) -> str | None:
        for k, v in self.fields:
            if k == name:
                return v
        return None


@dataclass(frozen=True, slots=True)
class SkipDuplicate:
    """An ``Adx::ExceptionDumpInfo`` the dump callback skipped as a duplicate (its binary handle, core id and
    core type)."""

    src: Source
    bin_handle: int
    core_id: int
    core_type: int


@dataclass(frozen=True, slots=True)
class CallbackB:
    """Callback B of the same incident (second A5 + dump-info array); not a fault of its own (row 43)."""

    src: Source
    anchor: Source | None
    entry: str | None
    array_count: int | None
    array_empty: bool
    records: tuple[DumpRecord, ...]
    skipped_duplicates: tuple[SkipDuplicate, ...]
    fill_core_num: int | None
    fill_valid_dump: int | None
    cores: tuple[ExceptionCore, ...]
    failure: str | None
    notes: tuple[tuple[str, Source], ...]


@dataclass(frozen=True, slots=True)
class AbortInfo:
    """Why the handler stopped early (A9, A10, A11, A13, A14 variants, A23) — row 42."""

    src: Source
    code: str
    reason: str
    ret: int | None


@dataclass(frozen=True, slots=True)
class Incident:
    """One SK fault as printed by the handler (callback A, optionally callback B)."""

    src: Source  # anchor line, or first line when no anchor was written (filelog, AOT@index)
    anchor: Source | None
    entry: str | None
    op_trace: bool | None
    dialect: str  # "D0".."D5" or "unknown"
    dialect_candidates: tuple[str, ...]
    pid: int | None
    first_ts: datetime | None
    last_ts: datetime | None
    origins: tuple[str, ...]
    files: tuple[str, ...]
    args_dev: int | None
    args_len: int | None
    total_size: int | None
    reg_core_num: int | None
    header: SkHeaderInfo | None
    aic_queue: TaskQueue | None
    aiv_queue: TaskQueue | None
    counters: CounterTable | None
    dfx: DfxTable | None
    cores: tuple[ExceptionCore, ...]
    model_map: ModelMap | None
    model_id_errors: tuple[tuple[int, int, Source], ...]  # GetModelIdByIndex (index, size, src)
    all_cores: AllCoreTrace | None
    callback_b: CallbackB | None
    complete: bool
    abort: AbortInfo | None
    incomplete_reason: str | None
    notes: tuple[tuple[str, Source], ...]
    line_count: int
    merged_from: tuple[Source, ...] = ()
    sources: Sources = ()

    @property
    def sk_scope_id(self) -> int | None:
        if self.header is not None and self.header.sk_scope_id is not None:
            return self.header.sk_scope_id
        for c in self.cores:
            if c.sk_scope_id is not None:
                return c.sk_scope_id
        return None

    @property
    def model_idx(self) -> int | None:
        if self.header is not None and self.header.model_idx is not None:
            return self.header.model_idx
        for c in self.cores:
            if c.model_idx is not None:
                return c.model_idx
        return None

    @property
    def model_id(self) -> str | None:
        for c in self.cores:
            if c.model_id:
                return c.model_id
        if self.header is not None and self.header.model_id:
            return self.header.model_id
        return None

    @property
    def node_cnt(self) -> int | None:
        if self.dfx is not None:
            return self.dfx.node_cnt
        if self.header is not None:
            return self.header.node_cnt
        return None

    def cond_check(self, core: ExceptionCore) -> CondCheck | None:
        """COND of ``core`` vs its printed SkScopeId/ModelIdx (else the header), with T5 wrap recovery."""
        if core.cond is None or core.cond.value is None and not core.cond.unavailable:
            return None
        value = 0 if core.cond.unavailable or core.cond.value is None else core.cond.value
        scope = core.sk_scope_id if core.sk_scope_id is not None else self.sk_scope_id
        midx = core.model_idx if core.model_idx is not None else self.model_idx
        return check_cond(value, sk_scope_id=scope, model_idx=midx, node_cnt=self.node_cnt)

    def source_of(self, name: str) -> Source | None:
        return _src_of(self.sources, name)


@dataclass(frozen=True, slots=True)
class NonSkFault:
    """A fault the handler declined: A3/A4 (row 45), A0–A2, callback-B "Not superkernel exception"."""

    src: Source
    kind: (
        str  # non_aot_sk | not_sk_entry | entry_check_failed | null_exception_info | skip_notice | dump_skip
    )
    kernel_name: str | None
    family: str | None  # constant_codegen | jit_te_superkernel | None
    detail: str
    ret: int | None
    pid: int | None
    ts: datetime | None
    sources: tuple[Source, ...]


@dataclass(frozen=True, slots=True)
class ParseTrace:
    """How one parse consumed its messages, kept so that a copy of the same block printed elsewhere
    (the plog copy of a ``super_kernel.log`` block, row 47) can be derived instead of parsed again
    (:mod:`skdbg.parsers.sk_copies`). Not part of the result's value: equality ignores it.

    It holds the messages' own strings and sources, not the messages: those die as soon as they are
    parsed, and keeping eighteen thousand of them alive made the collector walk the heap more often."""

    texts: tuple[str, ...]  # per message, in feed order
    funcs: tuple[str | None, ...]
    srcs: tuple[Source, ...]
    single_stream: bool  # every message in one stream (one pid, one file): the only case derived
    inert: frozenset[int]  # indices of A6 lines that only added a note to an open incident
    touched: tuple[tuple[Source, ...], ...]  # per incident (result order): the sources it counted


@dataclass(slots=True)
class SkHandlerResult:
    """What the exception-handler parser found: the incidents, the faults the handler declined
    (``non_aot``: a non-AOT SK entry, a kernel that is no ``sk_entry``, callback B's "Not superkernel
    exception"), the lines it could not read and the gaps. ``trace`` (one parse of one stream of lines)
    lets a copy of that block be derived; a result that merges several streams has none."""

    incidents: list[Incident] = field(default_factory=list)
    non_aot: list[NonSkFault] = field(default_factory=list)
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    foreign_lines: int = 0  # SK lines of other components outside/inside incidents (not handler output)
    trace: ParseTrace | None = field(default=None, repr=False, compare=False)

    def to_frame(self) -> pd.DataFrame:
        from skdbg.parsers.sk_frames import incidents_frame  # the frames module builds on these records

        return incidents_frame(self.incidents)
