"""Render the SK exception-handler output of one incident, in any dialect D0–D5 (artifacts.md §1.4, §1.7).

Why: no public plog of an AOT SK fault exists. The parser tests, the bundled example scene and the
benchmark describe an incident with :class:`IncidentSpec` (default = the §1.7 example) and render the
exact message sequence the handler of that dialect prints, then wrap it as plog records
(:func:`to_plog_lines`, filtered by the plog level) or as ``super_kernel.log`` lines
(:func:`to_filelog_lines`, DEBUG and above, no plog-only ``SK_DLOG*`` lines).

Every derived value follows the handler code: the matched entry address is ``entryAic/Aiv[j]`` of the node,
``End = Entry + size`` of the core type, COND is ``encode_cond`` of the core's counter state (D4+), the
all-core listing labels core types by ``coreId < 25`` before D5 and by the arch table in D5 (§1.6.5).

Dialect layouts: D1, D4 and D5 follow source read in full (mirror-cann 69de634f; two D4 revisions;
hicann cff1d8e8). D0, D2 and D3 use the signature lines of triage.md §3.1.3 inside the D1/D4 skeleton;
their exact line order beyond those signatures is inferred.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from skdbg.parsers.cond import encode_cond
from skdbg.scenebuilder.lines import SK_HANDLER_FILE, filelog_line, sk_plog_line

DIALECTS = ("D0", "D1", "D2", "D3", "D4", "D5")
FILELOG_LEVEL = {"ERROR": "ERROR", "WARNING": "WARN", "INFO": "INFO", "DEBUG": "DEBUG"}
PLOG_KEEP = {
    "ERROR": ("ERROR", "WARNING"),
    "INFO": ("ERROR", "WARNING", "INFO"),
    "DEBUG": ("ERROR", "WARNING", "INFO", "DEBUG"),
}
SEP60 = "=" * 60
SEP52 = "=" * 52
SEP50 = "=" * 50
SEP62 = "=" * 62
A14_VARIANTS = (
    "aic_ge", "aic_end", "aiv_ge", "aiv_end", "counter_ge", "counter_end", "dfx_ge", "dfx_end",
)  # fmt: skip
ABORTS = (
    "A9", "A10", "A11:temp_malloc", "A11:temp_memcpy", "A11:host_malloc", "A11:host_memcpy", "A13", "A23",
    *(f"A14:{v}" for v in A14_VARIANTS),
)  # fmt: skip


@dataclass(frozen=True)
class SkLine:
    """One rendered handler message; ``plog_only`` marks ``SK_DLOG*`` sites (AOT@index variant, §1.3)."""

    level: str  # ERROR, WARNING, INFO, DEBUG
    func: str
    text: str
    plog_only: bool = False


@dataclass(frozen=True)
class NodeSpec:
    """One ``SkDfxInfo`` node (A20–A22). ``origin_name=None`` on a FUNC node prints the name failure."""

    bin_hdl: int
    func_hdl_ori: int
    aic_size: int = 0
    aiv_size: int = 0
    num_blocks: int = 0
    cube_num: int = 0
    vec_num: int = 0
    origin_name: str | None = "add_custom"
    is_func: bool = True
    name_error_ret: int = 107000
    entry_aic: tuple[int, int, int, int] = (0, 0, 0, 0)
    entry_aiv: tuple[int, int, int, int] = (0, 0, 0, 0)


@dataclass(frozen=True)
class TaskSpec:
    """One task of the first AIC/AIV queue (A16/A17)."""

    index: int
    type: str = "FUNC"
    num_blocks: int = 0
    args: int = 0


@dataclass(frozen=True)
class CoreSpec:
    """One faulting core. ``match=(node, entry)`` prints §1.4.2, ``None`` prints §1.4.3.

    ``symbol``: bound | failed | offset_zero | bin_buffer (PrintFuncSymbolInfo outcome, rows 27–30).
    ``cond``: explicit COND value (0 → "driver package not upgraded"); None → derived from the counter.
    """

    core_id: int
    core_type: str = "AIV"
    start_pc: int = 0x124080A03C00
    current_pc: int = 0
    match: tuple[int, int] | None = None
    symbol: str = "bound"
    sk_symbol: str = "_Z13add_custom_skILj2EEvPK13AddCustomArgsPN2sk12SkSystemArgsE"
    sk_bind: str = "WEAK"
    sk_size: int | None = None
    func_offset: int = 0x1400
    computed: tuple[int, int] | None = None  # (funcOffset, binDevAddr) → INFO "Computed funcOffset" (row 28)
    origin_error_ret: int | None = None  # core-less "Failed to get origin function name" (row 31)
    bin_rt_ret: int = 7
    cond: int | None = None


@dataclass(frozen=True)
class DumpTensorSpec:
    type: str = "WORKSPACE"
    tensor_size: int = 7512
    format: int = 2
    data_type: int = 4
    tensor_addr: int = 0x12C100400000
    addr_type: str = "RAW"
    placement: int = 1
    args_offset: int = 0
    shape: tuple[int, ...] = (7512,)
    origin_shape: tuple[int, ...] = (7512,)


@dataclass(frozen=True)
class DumpRecordSpec:
    """One ``Adx::ExceptionDumpInfo`` record of callback B (§1.4.6)."""

    core_id: int
    core_type: str
    arg_size: int
    arg_addr: int
    bin_handle: int
    kernel_name: str
    kernel_display_name: str
    tensors: tuple[DumpTensorSpec, ...]


@dataclass(frozen=True)
class CallbackBSpec:
    """Callback B. ``records=None`` derives one record per faulting core, duplicates by bin handle skipped."""

    records: tuple[DumpRecordSpec, ...] | None = None
    extra_tensors: tuple[DumpTensorSpec, ...] = ()  # appended to every derived record
    arg_size: int = 256


def _example_nodes() -> tuple[NodeSpec, ...]:
    return (
        NodeSpec(
            0xAAAAF3C21A50, 0xAAAAF3C22110, aic_size=0x2F80, num_blocks=24, cube_num=24,
            origin_name="QuantBatchMatmulV3_8ab2c4f1_1",
            entry_aic=(0x124080B04A00, 0x124080B07A00, 0x124080B0AA00, 0x124080B0DA00),
        ),
        NodeSpec(
            0xAAAAF3D00A10, 0xAAAAF3D01C80, aiv_size=0x1A2C, num_blocks=48, vec_num=48,
            origin_name="add_custom",
            entry_aiv=(0x124080C01200, 0x124080C04300, 0x124080C07400, 0x124080C0A500),
        ),
        NodeSpec(
            0xAAAAF3D80B20, 0xAAAAF3D81D90, aiv_size=0x2210, num_blocks=48, vec_num=48,
            origin_name="Cast_9f3e21_2",
            entry_aiv=(0x124080D01000, 0x124080D04000, 0x124080D07000, 0x124080D0A000),
        ),
    )  # fmt: skip


def _example_counters() -> tuple[tuple[int, int, int], ...]:
    """(core, index, opState): cube cores 0–23 finished node 0, vector cores 25–72 run node 1."""
    rows = [(c, 0, 3) for c in range(24)]
    rows += [(c, 1, 2) for c in range(25, 73)]
    return tuple(rows)


@dataclass(frozen=True)
class IncidentSpec:
    """Description of one incident; every default reproduces the §1.7 example (process 48213, core 30)."""

    entry: str = "sk_entry_mix11_op_trace"
    dialect: str = "D5"
    variant: str = "mirror"  # "index": AOT@index (SK_DLOG sites plog-only, direct A11 texts, A9 check)
    pid: int = 48213
    proc: str = "python3"
    tid: int = 140425347876672
    start: datetime = datetime(2026, 6, 10, 14, 3, 21, 518402)
    step_us: int = 23
    model_idx: int = 0
    scope_id: int = 3
    model_ids: tuple[str, ...] = ("48_1",)  # D5 modelId map (A27)
    model_ris: tuple[int, ...] = (0xAAAAF3A5C000,)  # D2–D4 modelRI map
    args_dev: int = 0x12C100400000
    args_len: int = 7512
    aic_que_offset: int = 48
    aiv_que_offset: int = 944
    counter_offset: int = 2176
    ws_offset: int = 6976  # D0/D1 header only
    dfx_offset: int = 6976
    total_size: int = 7512
    arch: str = "DAV_2201"
    aicore_nums: int = 75
    nodes: tuple[NodeSpec, ...] = field(default_factory=_example_nodes)
    aic_tasks: tuple[TaskSpec, ...] = (
        TaskSpec(0, "FUNC", 24, 0x12C100410000),
        TaskSpec(0, "SYNC", 0, 0x3),
        TaskSpec(0, "SYNC", 0, 0x6),
    )
    aiv_tasks: tuple[TaskSpec, ...] = (
        TaskSpec(0, "SYNC", 0, 0x5),
        TaskSpec(1, "FUNC", 48, 0x12C100412000),
        TaskSpec(2, "FUNC", 48, 0x12C100414000),
        TaskSpec(2, "SYNC", 0, 0x4),
    )
    counters: tuple[tuple[int, int, int], ...] = field(default_factory=_example_counters)
    cores: tuple[CoreSpec, ...] = (
        CoreSpec(30, "AIV", 0x124080A03C00, 0x124080C07E58, match=(1, 2)),
    )  # fmt: skip
    callback_b: CallbackBSpec | None = None
    abort: str | None = None
    abort_ret: int = 507899
    entry_bin_hdl: int = 0xAAAAF3B00010
    sk_func_name: str | None = None

    @property
    def d(self) -> int:
        return DIALECTS.index(self.dialect)

    @property
    def op_trace(self) -> bool:
        return "op_trace" in self.entry


def example_incident(**changes: object) -> IncidentSpec:
    """The §1.7 incident with fields replaced, e.g. ``example_incident(dialect="D3", entry=...)``."""
    return replace(IncidentSpec(), **changes)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------- rendering


class _Renderer:
    def __init__(self, spec: IncidentSpec) -> None:
        if spec.dialect not in DIALECTS:
            raise ValueError(f"dialect must be one of {DIALECTS}, got {spec.dialect!r}")
        if spec.abort is not None and spec.abort not in ABORTS:
            raise ValueError(f"abort must be one of {ABORTS}, got {spec.abort!r}")
        self.s = spec
        self.d = spec.d
        self.out: list[SkLine] = []
        self.cache: set[int] = set()
        self.func_nodes = {t.index for t in (*spec.aic_tasks, *spec.aiv_tasks) if t.type == "FUNC"}
        self.counter = {c: (i, st) for c, i, st in spec.counters}

    # -- emit helpers
    def e(self, func: str, text: str, *, dlog: bool = False) -> None:
        self.out.append(SkLine("ERROR", func, text, dlog and self.s.variant == "index"))

    def i(self, func: str, text: str, *, dlog: bool = False) -> None:
        self.out.append(SkLine("INFO", func, text, dlog and self.s.variant == "index"))

    def dbg(self, func: str, text: str, *, dlog: bool = False) -> None:
        self.out.append(SkLine("DEBUG", func, text, dlog and self.s.variant == "index"))

    # -- model identity
    def model_value(self) -> int:
        return (self.s.model_idx << 32) | (self.s.scope_id << 16)

    def model_id(self) -> str:
        s = self.s
        if 0 <= s.model_idx < len(s.model_ids):
            return s.model_ids[s.model_idx]
        self.e(
            "GetModelIdByIndex",
            f"[sk] GetModelIdByIndex: index={s.model_idx} out of range (size={len(s.model_ids)}), "
            "modelId not registered or header corrupted",
        )
        return ""

    def model_ri(self) -> int:
        s = self.s
        return s.model_ris[s.model_idx] if 0 <= s.model_idx < len(s.model_ris) else 0

    def model_line(self, core: int, func: str) -> None:
        s = self.s
        if self.d >= 5:
            mid = self.model_id()
            self.e(func, f"[Core {core}] ModelIdIdx={s.model_idx}, ModelId={mid}, SkScopeId={s.scope_id}")
        elif self.d >= 2:
            self.e(
                func,
                f"[Core {core}] ModelRIIdx={s.model_idx}, OriginalModelRI=0x{self.model_ri():x}, "
                f"SkScopeId={s.scope_id}",
            )

    # -- pieces
    def node_is_func(self, k: int) -> bool:
        if self.d < 3:  # the FUNC check (funcNodeIndices_) arrives with D3
            return 0 <= k < len(self.s.nodes)
        return k in self.func_nodes and 0 <= k < len(self.s.nodes) and self.s.nodes[k].is_func

    def lookup(self, op: int) -> str:
        """GetOrLoadKernelSymbols (§1.4.4): cache, range and FUNC checks with their log lines."""
        f = "GetOrLoadKernelSymbols"
        if op in self.cache:
            self.i(f, f"Using cached function name for opId={op}")
            return self.s.nodes[op].origin_name or ""
        if op >= len(self.s.nodes):
            self.e(f, f"opId={op} exceeds nodeCnt={len(self.s.nodes)}")
            return ""
        if not self.node_is_func(op):
            self.i(f, f"opId={op} is not a FUNC type node")
            return ""
        node = self.s.nodes[op]
        self.i(f, f"Loading function name for opId={op}, funcHdl=0x{node.func_hdl_ori:x}")
        if node.origin_name is None:
            self.e(
                f,
                f"aclrtGetFunctionName failed for opId={op}, funcHdl=0x{node.func_hdl_ori:x}, "
                f"ret={node.name_error_ret}",
            )
            return ""
        self.i(f, f"Got function name for opId={op}: {node.origin_name}")
        self.cache.add(op)
        return node.origin_name

    def symbol_lines(self, core: int, ctype: str, spc: int, cpc: int, name: str) -> None:
        f = "PrintSymbolByCoreId"
        self.i(
            f,
            f"========== coreId={core}, coreType={ctype}, startPC=0x{spc:x}, currentPC=0x{cpc:x} ==========",
        )
        if name:
            self.e(f, f"    Function name: {name}")
        else:
            self.e(f, "    No function name available")

    def core_symbols(self, core: int, ctype: str, spc: int, cpc: int) -> None:
        """PrintCoreSymbols (§1.4.4) for one core."""
        s, f = self.s, "PrintCoreSymbols"
        if core >= s.aicore_nums:
            self.e(f, f"coreId={core} exceeds aicoreNums={s.aicore_nums}")
            return
        if not s.op_trace and self.d >= 1:
            return
        op, st = self.counter.get(core, (0, 0))
        n = len(s.nodes)
        if self.d >= 3:
            self.e(f, f"[Core {core}] Type={ctype}, opState={st}, opId={op}")
        else:
            self.e(f, f"[Core {core}] Type={ctype}, launch={st}, exit=0, opId={op}")
        if st == 0:
            self.e(f, f"[Core {core}] No SK entry executed yet.")
        elif st == 1:
            self.e(f, f"[Core {core}] SK started but no sub-kernel executed yet, checking next operators")
            if op < n:
                self.e(f, f"[Core {core}] > Next opId={op} (first sub-kernel):")
                self.symbol_lines(core, ctype, spc, cpc, self.lookup(op))
            else:
                self.e(f, f"[Core {core}] > No next operator (opId={op}/{n})")
        elif st == 2:
            self.e(f, f"[Core {core}] Currently running opId={op}")
            self.symbol_lines(core, ctype, spc, cpc, self.lookup(op))
        elif st == 3:
            self.e(f, f"[Core {core}] opId={op} finished, checking current and next operators")
            self.e(f, f"[Core {core}] > Last finished opId={op}:")
            self.symbol_lines(core, ctype, spc, cpc, self.lookup(op))
            if op + 1 < n:
                self.e(f, f"[Core {core}] > Next opId={op + 1}:")
                self.symbol_lines(core, ctype, spc, cpc, self.lookup(op + 1))
            else:
                self.e(f, f"[Core {core}] > No next operator (opId={op}/{n})")
        elif st == 4:
            self.e(f, f"[Core {core}] SK entry operator execution completed.")
        elif self.d >= 3:
            self.e(f, f"[Core {core}] Unknown opState: {st}")
        else:
            self.e(f, f"[Core {core}] Unknown launch status: {st}")

    def cond_value(self, c: CoreSpec) -> int:
        if c.cond is not None:
            return c.cond
        op, st = self.counter.get(c.core_id, (0, 0))
        return encode_cond(st, op, self.s.scope_id, self.s.model_idx)

    def cond_lines(self, c: CoreSpec) -> None:
        """GetCondRegValue + ParseAndPrintCondInfo + PrintCondSubKernelInfo (§1.4.5), D4+."""
        core = c.core_id
        if self.d >= 5:
            lo, hi = (32, 33) if self.s.arch == "DAV_3510" else (20, 21)
            self.e(
                "GetCondRegValue",
                f"GetCondRegValue: arch={self.s.arch}, condRegLowIdx={lo}, condRegHighIdx={hi}",
            )
        value = self.cond_value(c)
        f = "ParseAndPrintCondInfo"
        if value == 0:
            self.e(
                f,
                f"[Core {core}] Failed to get COND register value, possible reason: "
                "driver package not upgraded",
            )
            return
        st, idx = value & 0xFF, (value >> 8) & 0xFF
        self.e(
            f, f"[Core {core}] {c.core_type} COND register value: 0x{value:x} (opState={st}, opIndex={idx})"
        )
        f = "PrintCondSubKernelInfo"
        n = len(self.s.nodes)
        if st == 0:
            self.e(f, f"[Core {core}] COND: No SK entry executed yet (opState=ORIGIN).")
        elif st == 1:
            self.e(
                f, f"[Core {core}] COND: SK entry launched, no sub-kernel executed yet. Next opIndex={idx}"
            )
            if idx < n and (name := self.lookup(idx)):
                self.e(f, f"[Core {core}] COND: Next sub-kernel function name: {name}")
        elif st == 2:
            self.e(f, f"[Core {core}] COND: Currently running sub-kernel opIndex={idx}")
            if idx < n and (name := self.lookup(idx)):
                self.e(f, f"[Core {core}] COND: Current sub-kernel function name: {name}")
        elif st == 3:
            self.e(f, f"[Core {core}] COND: Sub-kernel opIndex={idx} finished, about to run next.")
            if idx < n and (name := self.lookup(idx)):
                self.e(f, f"[Core {core}] COND: Last finished sub-kernel function name: {name}")
            if idx + 1 < n and (name := self.lookup(idx + 1)):
                self.e(f, f"[Core {core}] COND: Next sub-kernel function name: {name}")
        elif st == 4:
            self.e(f, f"[Core {core}] COND: SK entry execution completed.")
        else:
            self.e(f, f"[Core {core}] COND: Unknown opState={st}, opIndex={idx}")

    def match_geometry(self, c: CoreSpec) -> tuple[NodeSpec, int, int, int]:
        assert c.match is not None
        node = self.s.nodes[c.match[0]]
        entries = node.entry_aic if c.core_type == "AIC" else node.entry_aiv
        size = node.aic_size if c.core_type == "AIC" else node.aiv_size
        addr = entries[c.match[1]]
        return node, addr, addr + size, size

    def dev_args(self, c: CoreSpec) -> int | None:
        """PrintNodeDevArgs: FUNC task of the node in the queue of the core's type."""
        assert c.match is not None
        tasks = self.s.aic_tasks if c.core_type == "AIC" else self.s.aiv_tasks
        for t in tasks:
            if t.index == c.match[0] and t.type == "FUNC":
                return t.args
        return None

    def pc_block(self, c: CoreSpec) -> None:
        """IdentifyErrorNodeByPC for one core (§1.4.2 / §1.4.3)."""
        s, core, d = self.s, c.core_id, self.d
        if d == 0:
            return  # D0: no PC → node match at all
        no_pc = c.current_pc == 0 or s.dfx_offset == 0 or not s.nodes
        if no_pc and d <= 4:
            return  # before D5 the handler returned silently for PC 0 (T9)
        if c.match is None or no_pc:
            f = "PrintNoMatchInfo" if d >= 2 else "IdentifyErrorNodeByPC"
            self.e(f, SEP60)
            self.e(f, f"[Core {core}] No sub kernel matched, aicore error occurred in sk entry.")
            self.model_line(core, f)
            self.e(f, f"[Core {core}] CoreType: {c.core_type}")
            self.e(f, f"[Core {core}] startPC: 0x{c.start_pc:x}")
            self.e(f, f"[Core {core}] CurrentPC: 0x{c.current_pc:x}")
            self.e(f, SEP60)
            if d >= 4:
                self.e("IdentifyErrorNodeByPC", "errorNodeIdx_ = -1")
            return
        node, addr, end, size = self.match_geometry(c)
        k, j = c.match
        f = "PrintMatchedNodeBasicInfo" if d >= 2 else "IdentifyErrorNodeByPC"
        self.e(f, SEP60)
        self.model_line(core, f)
        self.e(f, f"[Core {core}] CoreType: {c.core_type}")
        self.e(f, f"[Core {core}] {'StartPC' if d >= 2 else 'startPC'}: 0x{c.start_pc:x}")
        self.e(f, f"[Core {core}] CurrentPC: 0x{c.current_pc:x}")
        self.e(f, f"[Core {core}] Found in node[{k}], entry[{j}]")
        self.e(f, f"[Core {core}] Entry address: 0x{addr:x}")
        self.e(f, f"[Core {core}] End address: 0x{end:x}")
        self.e(f, f"[Core {core}] Function size: 0x{size:x} ({size} bytes)")
        if d >= 2:
            self.e(
                f,
                f"[Core {core}] numBlocks={node.num_blocks}, cubeNum={node.cube_num}, vecNum={node.vec_num}",
            )
        if d <= 2:
            if c.origin_error_ret is None and node.origin_name is not None:
                self.e(f, f"[Core {core}] Function name: {node.origin_name}")
            else:
                ret = c.origin_error_ret if c.origin_error_ret is not None else node.name_error_ret
                self.e(f, f"Failed to get function name for node[{k}], ret={ret}")
        else:
            self.func_symbol_info(c, node, k, j, size)
        if d >= 2 and (args := self.dev_args(c)) is not None:
            self.e("PrintNodeDevArgs", f"[Core {core}] node[{k}] devArgs: 0x{args:x}")
        self.e("IdentifyErrorNodeByPC", SEP60)
        if d >= 4:
            self.e("IdentifyErrorNodeByPC", f"errorNodeIdx_ = {k}")

    def func_symbol_info(self, c: CoreSpec, node: NodeSpec, k: int, j: int, size: int) -> None:
        f, core = "PrintFuncSymbolInfo", c.core_id
        if not self.node_is_func(k):
            self.e(f, f"[Core {core}] Node[{k}] is not a FUNC type")
            return
        if c.origin_error_ret is None and node.origin_name is not None:
            self.e(f, f"[Core {core}] Origin function name: {node.origin_name}")
        else:
            ret = c.origin_error_ret if c.origin_error_ret is not None else node.name_error_ret
            self.e(f, f"Failed to get origin function name for node[{k}], ret={ret}")
        if c.symbol == "bin_buffer":
            self.e(f, f"[Core {core}] Failed to get bin buffer for node[{k}], rtRet={c.bin_rt_ret}")
            return
        if c.computed is not None:
            off, base = c.computed
            self.i(
                f,
                f"[Core {core}] Computed funcOffset=0x{off:x} for node[{k}] entry[{j}] "
                f"(binDevAddr=0x{base:x})",
            )
        if c.symbol == "offset_zero":
            self.e(
                f, f"[Core {core}] funcOffset is 0 for node[{k}] entry[{j}], cannot resolve SK symbol name"
            )
            return
        if c.symbol == "failed":
            off = c.computed[0] if c.computed is not None else c.func_offset
            self.e(
                f, f"[Core {core}] Failed to get SK symbol name for node[{k}] entry[{j}], offset=0x{off:x}"
            )
            return
        sk_size = c.sk_size if c.sk_size is not None else size
        self.e(f, f"[Core {core}] Bound SK symbol name: {c.sk_symbol} (bind={c.sk_bind}, size=0x{sk_size:x})")

    # -- callback A
    def abort_at(self, code: str) -> bool:
        s = self.s
        if s.abort != code:
            return False
        r = s.abort_ret
        if code == "A9":
            self.e("ExtractSkDeviceEntryArgsPtr", f"aclrtGetArgsFromExceptionInfo failed, ret={r}", dlog=True)
        elif code == "A10":
            self.i("ExtractSkDeviceEntryArgsPtr", "no args, callback return", dlog=True)
        elif code.startswith("A11:"):
            what = {
                "temp_malloc": "aclrtMallocHost for temp SkHeaderInfo",
                "temp_memcpy": "aclrtMemcpy for SkHeaderInfo",
                "host_malloc": "aclrtMallocHost for skDeviceEntryArgsHost",
                "host_memcpy": "aclrtMemcpy for skDeviceEntryArgs",
            }[code[4:]]
            if s.variant == "index" and code[4:].startswith("temp"):
                self.e("ExtractSkHeaderInfo", f"{what} failed, ret={r}", dlog=True)
            else:
                self.e("CheckError", f"Operation failed: {what} returned error code {r}")
        elif code == "A13":
            self.e(
                "CopySkDeviceEntryArgsToHost",
                f"totalSize({s.total_size}) exceeds skDeviceEntryArgsPtrLen({s.args_len}), "
                "invalid device address range",
            )
        elif code.startswith("A14:"):
            self.e("ValidateSkHeaderOffsets", self.a14_text(code[4:]))
        elif code == "A23":
            self.e(
                "GetExceptionRegInfo",
                f"Call rtGetExceptionRegInfo for error register information failed. ret: {r}",
            )
        return True

    def a14_text(self, v: str) -> str:
        s = self.s
        t = s.total_size
        aic_size, aiv_size = 224 * 4, 296 * 4
        tail = f"exceeds totalSize({t}), invalid offset"
        if v == "aic_ge":
            return f"aicQueOffset({s.aic_que_offset}) >= totalSize({t}), invalid offset"
        if v == "aic_end":
            return f"aicQueOffset({s.aic_que_offset}) + aicQueSize({aic_size}) {tail}"
        if v == "aiv_ge":
            return f"aivQueOffset({s.aiv_que_offset}) >= totalSize({t}), invalid offset"
        if v == "aiv_end":
            return f"aivQueOffset({s.aiv_que_offset}) + aivQueSize({aiv_size}) {tail}"
        if v == "counter_ge":
            return f"counterOffset({s.counter_offset}) >= totalSize({t}), invalid offset"
        if v == "counter_end":
            return (
                f"counterOffset({s.counter_offset}) + aicoreNums({s.aicore_nums}) * sizeof(SkCounterInfo) "
                f"exceeds totalSize({t}), invalid offset"
            )
        if v == "dfx_ge":
            return f"dfxOffset({s.dfx_offset}) >= totalSize({t}), invalid offset"
        return (
            f"dfxOffset({s.dfx_offset}) + nodeCnt({len(s.nodes)}) * sizeof(SkDfxInfo) "
            f"exceeds totalSize({t}), invalid offset"
        )

    def anchor(self) -> None:
        s = self.s
        f = "IsSuperKernelException"
        if self.d == 0:
            self.e(
                f, f"Exception is from superkernel function '{s.entry}', proceeding with handling", dlog=True
            )
        else:
            ot = "true" if s.op_trace else "false"
            self.e(
                f,
                f"Exception is from superkernel function '{s.entry}', op_trace={ot}, "
                "proceeding with handling",
                dlog=True,
            )

    def args_extraction(self) -> bool:
        """A7–A14 (shared by both callbacks). False = aborted."""
        s = self.s
        f = "ExtractSkDeviceEntryArgsPtr"
        self.i(
            f, f"---skDeviceEntryArgsDev: {'(nil)' if s.args_dev == 0 else f'0x{s.args_dev:x}'}", dlog=True
        )
        self.i(f, f"---skDeviceEntryArgsPtrLen: {s.args_len}", dlog=True)
        if self.abort_at("A9") or self.abort_at("A10"):
            return False
        if self.abort_at("A11:temp_malloc") or self.abort_at("A11:temp_memcpy"):
            return False
        if self.d >= 5 and s.variant == "index" and not (0 <= s.model_idx < len(s.model_ids)):
            self.model_id()
        self.i("CopySkDeviceEntryArgsToHost", f"---Total SkDeviceEntryArgs size: {s.total_size} bytes")
        if self.abort_at("A13") or self.abort_at("A11:host_malloc") or self.abort_at("A11:host_memcpy"):
            return False
        return not any(self.abort_at(f"A14:{v}") for v in A14_VARIANTS)

    def header(self) -> None:
        s, f = self.s, "PrintSkHeaderInfo"
        self.i(f, "=== SkHeaderInfo ===")
        self.i(f, f"aicQueOffset: {s.aic_que_offset}")
        self.i(f, f"aivQueOffset: {s.aiv_que_offset}")
        self.i(f, f"counterOffset: {s.counter_offset}")
        if self.d <= 1:
            self.i(f, f"wsOffset: {s.ws_offset}")
        self.i(f, f"dfxOffset: {s.dfx_offset}")
        self.i(f, f"nodeCnt: {len(s.nodes)}")
        self.i(f, f"totalSize: {s.total_size}")
        v = self.model_value()
        if self.d >= 5:
            mid = self.model_id()
            self.i(
                f,
                f"modelIdIndexAndSkScopeId: 0x{v:x} (modelIdIdx={s.model_idx}, skScopeId={s.scope_id}, "
                f"modelId={mid})",
            )
        elif self.d >= 2:
            self.i(
                f,
                f"modelRIIdAndSkScopeId: 0x{v:x} (modelRIIdx={s.model_idx}, skScopeId={s.scope_id}, "
                f"originalModelRI=0x{self.model_ri():x})",
            )

    def queues(self) -> None:
        s, f = self.s, "PrintTaskQueue"
        for name, off, tasks in (
            ("AIC", s.aic_que_offset, s.aic_tasks),
            ("AIV", s.aiv_que_offset, s.aiv_tasks),
        ):
            if off <= 0:
                continue
            self.i(f, f"=== {name} TaskQue (offset={off}) ===")
            self.i(f, f"taskCnt: {len(tasks)}")
            for q, t in enumerate(tasks):
                self.i(
                    f, f"  [{q}] index={t.index}, type={t.type}, numBlocks={t.num_blocks}, args=0x{t.args:x}"
                )

    def counter_info(self) -> None:
        s, f = self.s, "PrintCounterInfo"
        if s.counter_offset <= 0:
            return
        self.i(f, f"=== SkCounterInfo (offset={s.counter_offset}) ===")
        for core in range(s.aicore_nums):
            op, st = self.counter.get(core, (0, 0))
            if self.d >= 3:
                self.i(f, f"  [core {core}] index={op}, opState={st}")
            else:
                self.i(f, f"  [core {core}] index={op}, launch={st}, exit=0")

    def dfx_info(self) -> None:
        s, f = self.s, "PrintDfxInfo"
        if s.dfx_offset <= 0:
            return
        self.e(f, f"=== SkDfxInfo (offset={s.dfx_offset}, nodeCnt={len(s.nodes)}) ===")
        for k, n in enumerate(s.nodes):
            base = f"  [node {k}] binHdl=0x{n.bin_hdl:x}, funcHdlOri=0x{n.func_hdl_ori:x}, "
            base += f"aicSize=0x{n.aic_size:x}, aivSize=0x{n.aiv_size:x}"
            if self.d >= 2:
                base += f", numBlocks={n.num_blocks}, cubeNum={n.cube_num}, vecNum={n.vec_num}"
            self.e(f, base)
            if self.d >= 3:
                if not self.node_is_func(k):
                    self.e(f, f"    Node[{k}] is not a FUNC type")
                elif n.origin_name is not None:
                    self.e(f, f"    Origin function name: {n.origin_name}")
                else:
                    self.e(f, f"    Failed to get origin function name for node[{k}], ret={n.name_error_ret}")
            elif n.origin_name is not None:
                self.e(f, f"    Function name: {n.origin_name}")
            else:
                self.e(f, f"    Failed to get function name for node[{k}], ret={n.name_error_ret}")
            for j in range(4):
                if n.entry_aic[j]:
                    self.e(f, f"    entryAic[{j}]=0x{n.entry_aic[j]:x}")
                if n.entry_aiv[j]:
                    self.e(f, f"    entryAiv[{j}]=0x{n.entry_aiv[j]:x}")

    def model_map(self) -> None:
        s = self.s
        if self.d >= 5:
            f = "PrintModelIdIndexMap"
            self.e(f, f"=== modelId Index Map (total={len(s.model_ids)}) ===")
            for i, m in enumerate(s.model_ids):
                self.e(f, f"  [{i}] modelId={m}")
        elif self.d >= 2:
            f = "PrintModelRIIndexMap"
            self.e(f, f"=== modelRI Index Map (total={len(s.model_ris)}) ===")
            for i, ri in enumerate(s.model_ris):
                self.e(f, f"  [{i}] modelRI=0x{ri:x}")

    def core_is_aiv(self, core: int) -> bool:
        if self.d >= 5 and self.s.arch == "DAV_3510":
            return 18 <= core <= 53 or 72 <= core <= 107
        return core >= 25

    def all_cores(self) -> None:
        s, f = self.s, "PrintAllCoreSymbols"
        if self.d >= 1 and not s.op_trace:
            return
        self.e(f, SEP50)
        self.e(f, f"=== Sub-kernel running info on all {s.aicore_nums} cores ===")
        self.e(f, SEP50)
        for core in range(s.aicore_nums):
            self.core_symbols(core, "AIV" if self.core_is_aiv(core) else "AIC", 0, 0)

    def callback_a(self) -> None:
        s = self.s
        self.anchor()
        self.dbg(
            "HandleException", "Aclgraph superkernel aicore exception occurred, callback function.", dlog=True
        )
        if not self.args_extraction():
            return
        self.header()
        self.queues()
        self.counter_info()
        self.dfx_info()
        if self.abort_at("A23"):
            return
        self.i("GetExceptionRegInfo", f"Get error register information. coreNum={len(s.cores)}")
        f = "ParseAndPrintSubKernelSymbols"
        self.e(f, SEP52)
        self.e(f, "=== Sub-kernel running info on exception cores ===")
        self.e(f, SEP52)
        for c in s.cores:
            self.pc_block(c)
            self.core_symbols(c.core_id, c.core_type, c.start_pc, c.current_pc)
            if self.d >= 4:
                self.cond_lines(c)
        self.model_map()
        self.all_cores()

    # -- callback B
    def derived_records(self, b: CallbackBSpec) -> tuple[list[DumpRecordSpec], list[tuple[int, int, int]]]:
        s = self.s
        display = s.sk_func_name or f"{s.entry}_scope{s.scope_id}"
        tensor = DumpTensorSpec(
            tensor_size=s.total_size,
            tensor_addr=s.args_dev,
            shape=(s.total_size,),
            origin_shape=(s.total_size,),
        )
        records: list[DumpRecordSpec] = []
        skips: list[tuple[int, int, int]] = []
        seen: set[int] = set()
        for c in s.cores:
            matched = c.match is not None and c.current_pc != 0 and c.match[0] < len(s.nodes)
            if matched:
                assert c.match is not None
                node = s.nodes[c.match[0]]
                bin_h, name = node.bin_hdl, node.origin_name or ""
                args = next(
                    (
                        t.args
                        for t in (*s.aiv_tasks, *s.aic_tasks)
                        if t.index == c.match[0] and t.type == "FUNC"
                    ),
                    0,
                )
                size = b.arg_size if args else 0
            else:
                bin_h, name, args, size = s.entry_bin_hdl, s.entry, 0, 0
            ctype = 0 if c.core_type == "AIC" else 1
            if bin_h and bin_h in seen:
                skips.append((bin_h, c.core_id, ctype))
                continue
            seen.add(bin_h)
            records.append(
                DumpRecordSpec(
                    c.core_id, c.core_type, size, args, bin_h, name, display, (tensor, *b.extra_tensors)
                )
            )
        return records, skips

    def callback_b(self, b: CallbackBSpec) -> None:
        s = self.s
        self.cache = set()  # a new handler instance: empty symbol cache
        self.i(
            "ExceptionDumpInfoCallBack", "Start SuperKernelExceptionHandler::ProcessExceptionDump", dlog=True
        )
        self.anchor()
        if not self.args_extraction():
            self.e("PrepareExceptionDump", "Failed to extract SK entry args or task queue", dlog=True)
            return
        self.i("GetExceptionRegInfo", f"Get error register information. coreNum={len(s.cores)}")
        self.i("ProcessExceptionDump", "Exception is in SuperKernel")
        derived, skips = self.derived_records(b)
        records = list(b.records) if b.records is not None else derived
        if b.records is not None:
            skips = []
        for c in s.cores:
            if self.d == 4:
                self.pc_block(c)  # the D4 dump path re-ran IdentifyErrorNodeByPC (prints the block again)
            matched = c.match is not None and c.current_pc != 0
            f = "PopulateSubKernelFields"
            if matched:
                assert c.match is not None
                self.i(f, f"Fill sub kernel info, errorNodeIdx={c.match[0]}")
                self.lookup(c.match[0])
                self.i(f, "Match sub kernel success, exception occurred within sub kernel")
            else:
                self.i(f, "No sub kernel matched, fill with SK entry fields")
                self.i(f, f"Successfully got function name: {s.entry}")
                self.i(f, "Not match sub Kernel, exception occurred within Superkernel")
            self.i("PopulateDumpInfoFields", "PopulateSubKernelFields success")
        for bin_h, core, ctype in skips:
            self.i(
                "FillUniqueExceptionDumpInfos",
                f"Skip duplicate ExceptionDumpInfo by binHandle=0x{bin_h:x}, coreId={core}, coreType={ctype}",
            )
        self.dump_array(records)
        self.i(
            "ProcessExceptionDump",
            f"Adx::ExceptionDumpInfo fill success, coreNum={len(s.cores)}, validDump={len(records)}",
        )

    def dump_array(self, records: list[DumpRecordSpec]) -> None:
        f = "PrintExceptionDumpInfoArray"
        if not records:
            self.i(f, "Adx::ExceptionDumpInfo array is empty, skip print")
            return
        self.i(f, SEP62)
        self.i(f, f"======= SuperKernel Exception Dump Info Array (count={len(records)}) ======")
        self.i(f, SEP62)
        for i, r in enumerate(records):
            self.i(f, f"------------------ Adx::ExceptionDumpInfo [{i}] ------------------")
            rows = (
                ("coreId", str(r.core_id)),
                ("coreType", r.core_type),
                ("argSize", str(r.arg_size)),
                ("argAddr", f"0x{r.arg_addr:x}"),
                ("bin handle", f"0x{r.bin_handle:x}"),
                ("kernelName", r.kernel_name),
                ("kernelDisplayName", r.kernel_display_name),
                ("extraTensorNum", str(len(r.tensors))),
            )
            for label, value in rows:
                self.i(f, f"{label:<19}: {value}")
            for j, t in enumerate(r.tensors):
                self.i(f, f"  >>> extraTensor[{j}] <<<")
                trows = (
                    ("type", t.type),
                    ("tensorSize", f"{t.tensor_size} bytes"),
                    ("format", str(t.format)),
                    ("dataType", str(t.data_type)),
                    ("tensorAddr", f"0x{t.tensor_addr:x}"),
                    ("addrType", t.addr_type),
                    ("placement", str(t.placement)),
                    ("argsOffSet", str(t.args_offset)),
                )
                for label, value in trows:
                    self.i(f, f"    {label:<15}: {value}")
                for label, vec in (("shape", t.shape), ("originShape", t.origin_shape)):
                    shown = f"[{', '.join(str(x) for x in vec)}]" if vec else "empty"
                    self.i("PrintVector", f"    {label:<18}: {shown}")
        self.i(f, SEP62 + "\n")


def render(spec: IncidentSpec) -> list[SkLine]:
    """The full message sequence of one incident (callback A, then callback B when described)."""
    r = _Renderer(spec)
    r.callback_a()
    if spec.callback_b is not None and spec.d >= 4:
        r.callback_b(spec.callback_b)
    return r.out


def _src_line(func: str) -> int:
    return 200 + sum(map(ord, func)) % 1500


def to_plog_lines(spec: IncidentSpec, *, level: str = "INFO") -> list[str]:
    """Plog records as the CANN slog writes them at ``level`` (row 25: ERROR drops the I/D lines)."""
    keep = PLOG_KEEP[level]
    out: list[str] = []
    for n, line in enumerate(render(spec)):
        if line.level not in keep:
            continue
        ts = spec.start + timedelta(microseconds=n * spec.step_us)
        text, _, rest = line.text.partition("\n")
        out.append(
            sk_plog_line(line.level, spec.pid, spec.proc, ts, line.func, text, src_line=_src_line(line.func))
        )
        if rest or line.text.endswith("\n"):
            out.append("")
    return out


def to_filelog_lines(spec: IncidentSpec) -> list[str]:
    """``super_kernel.log`` lines (file logger: DEBUG and above; no plog-only SK_DLOG lines, §1.3)."""
    out: list[str] = []
    for n, line in enumerate(render(spec)):
        if line.plog_only:
            continue
        ts = spec.start + timedelta(microseconds=n * spec.step_us)
        text = line.text
        out.append(
            filelog_line(
                ts,
                spec.pid,
                spec.tid,
                FILELOG_LEVEL[line.level],
                line.func,
                text.rstrip("\n"),
                src_file=SK_HANDLER_FILE,
                src_line=_src_line(line.func),
            )
        )
        if text.endswith("\n"):
            out.append("")
    return out


def plog_lines(specs: Iterable[IncidentSpec], *, level: str = "INFO") -> list[str]:
    """Several incidents in one plog (row 44), in the order given."""
    out: list[str] = []
    for spec in specs:
        out.extend(to_plog_lines(spec, level=level))
    return out
