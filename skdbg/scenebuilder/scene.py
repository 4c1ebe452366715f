"""General test-scene builder: a compact :class:`SceneSpec` → a complete failure scene folder.

Why: every triage rule id (gate F1–F9, evidence E1–E4, traps T1–T9, confidence C0–C6, routes) needs a
small scene whose files agree with each other the way a real run's do, in any handler dialect D0–D5.
:mod:`skdbg.scenebuilder.example` builds ONE such scene by hand; this module generalises its approach so a
test can describe "two streams, an event pair, core 3 in child 1, COND OP_LAUNCHED 1, dialect D4" in a few
lines and get the plog, ``sk_meta/<pid>/model_<id>/…``, ``bin_files`` ELFs, ``run.json``, the env probe,
``src/model.py`` and ``source_sites.json`` — all derived from one resolved model (:class:`_Sk`), so the
numbers cannot drift apart:

* ELF images come first (:func:`skdbg.scenebuilder.elf.child_elf`); every entry address is
  ``image base + variant offset`` and every ``Function size`` is the variant's ``st_size`` (§4.6), so a
  ``CurrentPC`` built from ``("child", k)`` resolves through ``bin_files`` to child k (or to the shared
  image of the child it ``shares_binary_with`` — T4);
* task indices are fused positions unless ``reorder`` moves wait nodes (T6); the DFX table, device args
  ``idx``/``nodeId``, task queue ``nodeIndex``, counters and COND all use task indices;
* the handler block is :func:`skdbg.scenebuilder.sk_incident.to_plog_lines` of an ``IncidentSpec`` built
  from the same nodes/tasks/addresses, in the requested dialect;
* the runtime fault lines (§1.5) name the same core, PCs, args base and entry.

Output is deterministic (fixed seed, fixed clocks). The API contract is documented in the module's
dataclasses; :class:`BuiltScene` returns the facts tests assert against.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from skdbg.parsers.cond import STATE_NAMES, encode_cond
from skdbg.parsers.markers import ge_scope_text, marker_text, requote
from skdbg.parsers.run_identity import format_time
from skdbg.scenebuilder import jsonart, skmeta
from skdbg.scenebuilder.elf import ChildKernel, bin_file_name, child_elf, entry_elf
from skdbg.scenebuilder.plog import (
    PROC,
    core_report_msg,
    dump_exception_msg,
    errcode_msg,
    error_tracking_msg,
    extend_info_msg,
    ge_line,
    idedd_line,
    kernel_fault_msg,
    kernel_task_error_msg,
    noise_lines,
    report_module_msg,
    runtime_line,
    stream_sync_failed_msg,
)
from skdbg.scenebuilder.sk_incident import CallbackBSpec, CoreSpec, IncidentSpec, render, to_filelog_lines
from skdbg.scenebuilder.sk_incident import NodeSpec as DfxNodeSpec
from skdbg.scenebuilder.sk_incident import TaskSpec as HandlerTaskSpec
from skdbg.scenebuilder.sk_incident import to_plog_lines as handler_plog_lines

__all__ = [
    "ALL_FILES",
    "BuiltScene",
    "Event",
    "FaultCore",
    "Kernel",
    "SceneSpec",
    "SkDef",
    "build_scene",
    "model_source",
]

ALL_FILES = frozenset(
    {
        "fused_nodes",
        "node_detail",
        "scope_split",
        "fail_reasons",
        "device_args",
        "task_queue",
        "super_kernel_log",
        "bin_files",
    }
)
KERNEL_TYPES = ("AIC_ONLY", "AIV_ONLY", "MIX_AIC_1_1", "MIX_AIC_1_2")
EVENT_KINDS = ("EventNotify", "EventWait", "EventReset", "MemoryWrite", "MemoryWait")
#: task type of each event kind as the task builder prints it (§3.9: value write/wait use the event tasks)
EVENT_TASK = {
    "EventNotify": "EVENT_NOTIFY",
    "EventWait": "EVENT_WAIT",
    "EventReset": "EVENT_RESET",
    "MemoryWrite": "EVENT_NOTIFY",
    "MemoryWait": "EVENT_WAIT",
}
#: ``UpdateNodeScopeBitFlags`` node type of each event kind (§3.6)
EVENT_DETAIL = {
    "EventNotify": "NOTIFY",
    "EventWait": "WAIT",
    "EventReset": "RESET",
    "MemoryWrite": "MEMORY_WRITE",
    "MemoryWait": "MEMORY_WAIT",
}
STATE_CODES = {name: code for code, name in STATE_NAMES.items()}
#: scope-level break reasons of ``BreakInfo`` (§3.7); other ``scope_reasons`` are node-level fusion fail reasons
BREAK_REASONS = frozenset(
    {"NONE", "UNFUSIBLE_NODE", "DEADLOCK_DETECTED", "SYNCALL_OP_DROP", "DEBUG_PER_OP_MAX_CORE"}
)

# Fixed layout constants (the §1.7 layout: header 48 B, queues, counters at 2176, dfx at 6976).
AICORE_NUMS = 75
AIC_QUE_OFFSET = 48
AIV_QUE_OFFSET = 944
COUNTER_OFFSET = 2176
DFX_OFFSET = 6976
DFX_SIZE = 168
EVENT_CONFIG_SIZE = 32
ENTRY_FUNC_SIZE = 0x200  # per sk_entry_* function in the entry ELF (kept small: scenes stay < 200 KB)
ENTRY_BASE = 0x124080A03000
CHILD_BASE = 0x124080B00000
ARGS_BASE = 0x12C100400000  # SK entry args (one per SK, 1 MiB apart)
CHILD_ARGS_BASE = 0x12C110000000  # child args pointers (FUNC task args)
BIN_HDL_BASE = 0xAAAAF3C00A50
ENTRY_BIN_HDL = 0xAAAAF3B00010
ENTRY_FUNC_HDL = 0xAAAAF3B00C40
EVENT_FLAG_BASE = 0x12C100800000
VARIANT_SIZE = 0x1A0
FAULT_OFFSET = 0x58  # PC offset inside the matched SK variant
ENTRY_PC_OFFSET = 0x64  # PC offset inside the SK entry function
BASE_ENTRIES = ("sk_entry_aic", "sk_entry_aiv", "sk_entry_mix11", "sk_entry_mix12")
TID = skmeta.DEFAULT_TID
RUNTIME_TASK_ID = 1

_DEFAULT_RUN_START = datetime(2026, 6, 10, 14, 0, 58, 0)
_DEFAULT_RUN_END = datetime(2026, 6, 10, 14, 3, 24, 0)
_DEFAULT_BUILD_TS = datetime(2026, 6, 10, 14, 1, 2, 345000)
_DEFAULT_FAULT_TS = datetime(2026, 6, 10, 14, 3, 21, 518402)


# ------------------------------------------------------------------------------------------ descriptions


@dataclass(frozen=True)
class Kernel:
    """One fused kernel child (see scenebuilder_api: kernel_type, stream, node_id, blocks, debug options…)."""

    func_name: str
    kernel_type: str = "AIV_ONLY"
    stream: int = 0
    node_id: int | None = None
    num_blocks: int | None = None
    debug_options: int = 0
    shares_binary_with: int | None = None
    statement: str | None = None
    sync_after: int | None = None
    same_statement_as: int | None = None
    sync_blocks: int = 0  # blk of the SYNC task after it (SyncAll: the active core count it waits for)

    @property
    def has_aic(self) -> bool:
        return self.kernel_type != "AIV_ONLY"

    @property
    def has_aiv(self) -> bool:
        return self.kernel_type != "AIC_ONLY"


@dataclass(frozen=True)
class Event:
    """One event/value node: EventNotify | EventWait | EventReset | MemoryWrite | MemoryWait."""

    kind: str
    event_id: int
    stream: int = 0
    node_id: int | None = None
    statement: str | None = None
    same_statement_as: int | None = None


Child = Kernel | Event


@dataclass(frozen=True)
class FaultCore:
    """One exception core. ``pc``: ("child", k) | ("entry",) | ("zero",) | ("addr", int).

    ``("child", k)``: a PC inside the code of task k (task index — equal to the position in ``children``
    unless ``reorder`` moved a wait node; ``BuiltScene.task_index`` maps positions to task indices), at
    ``entry[core_id % 4] + 0x58`` of the core type's entries.

    ``state``: (name or number, task index) of the counter/COND trace; None → ORIGIN.
    ``cond``: "auto" (encode the state), "unavailable" (COND 0) or an explicit value (T5 wrap cases).
    """

    core_id: int
    core_type: str = "AIV"
    pc: tuple[Any, ...] = ("child", 0)
    state: tuple[str | int, int] | None = None
    cond: str | int = "auto"


@dataclass(frozen=True)
class SkDef:
    """Another SK (scope) in the same model directory (C1 ambiguity, F5/F6 tests)."""

    scope_id: int
    scope_name: str
    children: Sequence[Child]
    break_text: str | None = None  # ``BreakInfo::Format()`` of this SK (None → breakReason=NONE)
    flags: str | None = None  # scope bit flags (None → one bit per SK)
    entry: str | None = None  # the SK entry function (None → derived from the kernel types)
    reorder: Mapping[int, int] | str = field(default_factory=dict)  # as SceneSpec.reorder ("auto" or a map)


@dataclass
class SceneSpec:
    """Compact description of one failure scene; every field but ``children`` has a consistent default.

    * identity: ``pid``/``rank``/``device``/``model_id`` (``model_<id>`` dir)/``scope_id``/``scope_name``;
      ``meta_pid`` (file-logger prefix pid), ``sk_meta_pid`` (``sk_meta/<pid>`` folder), ``plog_pid`` (plog
      file name + line headers) and ``fault_device`` (runtime ``device_id=``) break one fact for gate tests.
    * handler: ``dialect`` D0–D5, ``op_trace`` (counters + all-core listing; entry suffix), ``entry``
      (default from the kernel types), ``handler`` full | anchor_only | none (default: full iff fault="sk"),
      ``dfx=False`` (aborts before the DFX table), ``cores`` (:class:`FaultCore`), ``counters`` (trace state
      ``{core: (state, task index)}`` of non-exception cores, op_trace only).
    * fault: ``fault`` sk | non_sk (``non_sk_kernel``) | ge_sk (no sk_meta) | none (hang/timeout),
      ``failure_phase`` (default device_fault, timeout for fault="none").
    * metadata: ``reorder`` ({position: task index} or "auto", T6), ``files`` (subset of :data:`ALL_FILES`),
      ``unfusible`` ((Kernel, REASON) outside the SK), ``scope_reasons`` (BreakInfo of this scope),
      ``extra_sks`` (:class:`SkDef` in the same model dir), ``extra_models`` (copies in other model dirs),
      ``meta_prefix=False`` (hand-written style, mtime = ``build_ts``).
    * side files: ``run`` (overrides deep-merged into run.json; None → none), ``probe`` (same for
      env/check_environment.json), ``source`` (src/model.py + source_sites.json), ``marker_form``
      (``npugraph_ex`` begin/end calls, or ``ge`` — ``with torchair.scope.super_kernel(name):``;
      default ``ge`` for fault="ge_sk"), ``sk_meta=False`` (no ``sk_meta/`` at all, e.g. a compile
      that died before any SK was built), ``debug_options``
      (candidate.super_kernel_debug_options), ``cache_writers`` ({writer nodeId: [reader nodeIds]}).
    * clocks: ``run_start``/``run_end`` (run.json; process start = run_start + 123 ms), ``build_ts``
      (metadata), ``fault_ts`` (first handler line; runtime lines 302 µs earlier); ``noise_lines``, ``seed``.
    """

    children: Sequence[Child]
    cores: Sequence[FaultCore] = ()
    name: str = "scene"
    pid: int = 48213
    rank: int = 3
    device: int = 3
    model_id: str = "48_1"
    scope_id: int = 7
    scope_name: str = "decoder.layer.0.mlp"
    dialect: str = "D5"
    op_trace: bool = False
    entry: str | None = None
    fault: str = "sk"  # sk | non_sk | ge_sk | none
    handler: str | None = None  # full | anchor_only | none; None → full for fault="sk", else none
    dfx: bool = True
    reorder: Mapping[int, int] | str = field(default_factory=dict)  # {position: task index} or "auto"
    files: frozenset[str] | set[str] = ALL_FILES
    unfusible: Sequence[tuple[Child, str]] = ()
    scope_reasons: Sequence[str] = ()
    extra_sks: Sequence[SkDef] = ()
    extra_models: Sequence[str] = ()
    run: Mapping[str, Any] | None = field(default_factory=dict)
    probe: Mapping[str, Any] | None = field(default_factory=dict)
    source: bool = True
    marker_form: str | None = None  # npugraph_ex | ge; None → ge for fault="ge_sk", else npugraph_ex
    sk_meta: bool = True
    # run.json candidate.super_kernel_debug_options (F9). Default {} even with op_trace — a "clean manifest
    # but *_op_trace entry" scene (F9 conflict); None → derived: {"debug_op_exec_trace": 1} iff op_trace entry
    debug_options: Mapping[str, Any] | None = field(default_factory=dict)
    cache_writers: Mapping[int, Sequence[int]] = field(default_factory=dict)
    run_start: datetime = _DEFAULT_RUN_START
    run_end: datetime = _DEFAULT_RUN_END
    build_ts: datetime = _DEFAULT_BUILD_TS
    fault_ts: datetime = _DEFAULT_FAULT_TS
    meta_pid: int | None = None
    sk_meta_pid: int | None = None
    plog_pid: int | None = None
    meta_prefix: bool = True
    failure_phase: str | None = None  # None → device_fault (timeout for fault="none")
    noise_lines: int = 50
    plog_level: str = "INFO"  # ERROR drops the handler's INFO lines (header, queues, counters — row 25)
    non_sk_kernel: str = "Add_7c1e_kernel0"
    fault_device: int | None = None  # device_id in the runtime fault line (default: ``device``)
    counters: Mapping[int, tuple[str | int, int]] = field(default_factory=dict)  # other cores' trace state
    seed: int = 48213
    runtime_timeout: bool = (
        False  # the runtime reports a task timeout (hang): retCode 0x25 [aicore timeout], 507014
    )
    # emulator hooks (skdbg.sim): the main SK's launch position among ``extra_sks`` (0 = first), its
    # verbatim BreakInfo text (overrides ``scope_reasons``), and whether the prologue/epilogue filler
    # kernels outside every SK are added (a model that describes its whole graph has none)
    main_position: int = 0
    break_text: str | None = None
    fillers: bool = True
    # capture order of the whole graph as (nodeId, scope bit flags) rows of sk_node_detail.log (emulator);
    # None → filler prologue, the SKs' nodes, then the nodes outside
    graph: Sequence[tuple[int, str]] | None = None
    scope_flags: str | None = None  # the main SK's scope bit flags (None → one bit per SK)


@dataclass
class BuiltScene:
    """Facts of a built scene that tests assert against (all for the main SK)."""

    root: Path
    node_ids: list[int]
    task_index: list[int]
    source_lines: dict[int, int]
    current_pcs: dict[int, int]
    plog: Path
    model_dir: Path
    entry: str = ""
    start_pc: int = 0
    sk_func_name: str = ""
    matches: dict[int, tuple[int, int] | None] = field(default_factory=dict)  # core → handler (node, entry)
    cond: dict[int, int] = field(default_factory=dict)  # core → COND value printed (D4+)
    entries: dict[int, tuple[tuple[int, int, int, int], tuple[int, int, int, int]]] = field(
        default_factory=dict
    )
    bin_files: dict[int, str] = field(default_factory=dict)  # position → bin_files name of its image
    extra_model_dirs: list[Path] = field(default_factory=list)
    run_json: Path | None = None
    probe_json: Path | None = None


# ------------------------------------------------------------------------------------------ resolved model


@dataclass
class _Image:
    """Device image of one kernel child (possibly shared with an earlier child, T4)."""

    base: int
    name: str  # bin_files file name
    data: bytes
    bin_hdl: int
    func_hdl: int
    offsets: tuple[int, ...]  # the four SK variant offsets (sknlFunc[0..3])
    symbols: tuple[str, ...]
    size: int  # code size per core type inside a variant
    owner: int  # position that created the image
    mix: bool = False  # a mix variant holds its AIC code first, its AIV code right after (size each)

    def aic(self, has_aic: bool) -> tuple[int, int, int, int]:
        if not has_aic:
            return (0, 0, 0, 0)
        o = self.offsets[:4]
        return (self.base + o[0], self.base + o[1], self.base + o[2], self.base + o[3])

    def aiv(self, has_aic: bool, has_aiv: bool) -> tuple[int, int, int, int]:
        if not has_aiv:
            return (0, 0, 0, 0)
        o = self.offsets[:4]
        d = self.size if self.mix else 0
        return (self.base + o[0] + d, self.base + o[1] + d, self.base + o[2] + d, self.base + o[3] + d)


@dataclass
class _Task:
    index: int  # task index (node index)
    type: str
    blk: int
    args: int
    entries: tuple[int, ...]
    debug_options: int
    position: int


@dataclass
class _Sk:
    """One SK resolved: ids, task indices, images, queues, DFX rows."""

    ordinal: int
    scope_id: int
    scope_name: str
    children: list[Child]
    node_ids: list[int]
    task_index: list[int]
    order: list[int]  # order[t] = position of task index t
    images: dict[int, _Image]  # position → image (kernels only)
    dev_args: dict[int, int]
    aic: list[_Task]
    aiv: list[_Task]
    entry: str
    entry_base: int
    args_dev: int
    streams: list[int]  # stream ids in graph order
    reorder: dict[int, int] = field(default_factory=dict)  # moved position → task index
    reorder_auto: bool = False  # "auto": every deferrable wait is logged, moved or not
    break_text: str | None = None  # verbatim BreakInfo (emulator), else derived from the spec
    main: bool = False  # the SK the spec's cores/handler describe
    flags: str | None = None  # scope bit flags as printed (emulator: one bit per scope name)

    @property
    def scope_flags(self) -> str:
        return self.flags if self.flags is not None else format(1 << self.ordinal, "b")

    @property
    def kernels(self) -> list[int]:
        return [p for p, c in enumerate(self.children) if isinstance(c, Kernel)]

    @property
    def start_pc(self) -> int:
        return self.entry_base + self.entry_names.index(self.entry) * ENTRY_FUNC_SIZE

    @property
    def entry_names(self) -> tuple[str, ...]:
        return BASE_ENTRIES if self.entry in BASE_ENTRIES else (*BASE_ENTRIES, self.entry)

    @property
    def entry_file(self) -> str:
        return f"sk_entry_0x{self.entry_base:X}.o"

    @property
    def dfx_offsets(self) -> tuple[int, int, int, int, int]:
        return (AIC_QUE_OFFSET, AIV_QUE_OFFSET, COUNTER_OFFSET, DFX_OFFSET, self.event_config_offset)

    @property
    def event_config_offset(self) -> int:
        return DFX_OFFSET + len(self.children) * DFX_SIZE

    @property
    def total_size(self) -> int:
        return self.event_config_offset + EVENT_CONFIG_SIZE

    def entries_of(self, p: int) -> tuple[tuple[int, int, int, int], tuple[int, int, int, int]]:
        c = self.children[p]
        if not isinstance(c, Kernel):
            return (0, 0, 0, 0), (0, 0, 0, 0)
        img = self.images[p]
        return img.aic(c.has_aic), img.aiv(c.has_aic, c.has_aiv)

    def func_name(self) -> str:
        ks = [c for c in self.children if isinstance(c, Kernel)]
        if not ks:
            return skmeta.sk_func_name(self.scope_id, self.scope_name, None, None)
        return skmeta.sk_func_name(self.scope_id, self.scope_name, ks[0].func_name, ks[-1].func_name)


def _default_entry(children: Sequence[Child], op_trace: bool) -> str:
    types = {c.kernel_type for c in children if isinstance(c, Kernel)}
    if "MIX_AIC_1_2" in types:
        base = "sk_entry_mix12"
    elif "MIX_AIC_1_1" in types or ({"AIC_ONLY", "AIV_ONLY"} <= types):
        base = "sk_entry_mix11"
    elif types == {"AIC_ONLY"}:
        base = "sk_entry_aic"
    else:
        base = "sk_entry_aiv"
    return base + ("_op_trace" if op_trace else "")


def _wait_targets(kids: Sequence[Child]) -> list[int | None]:
    """Per position: the next kernel on the same stream after a wait node (the kernel it gates), else None."""
    out: list[int | None] = [None] * len(kids)
    for p, c in enumerate(kids):
        if isinstance(c, Event) and c.kind in ("EventWait", "MemoryWait"):
            out[p] = next(
                (
                    q
                    for q in range(p + 1, len(kids))
                    if isinstance(kids[q], Kernel) and kids[q].stream == c.stream
                ),
                None,
            )
    return out


def _auto_reorder(kids: Sequence[Child]) -> dict[int, int]:
    """``ReorderWaitNodesForTaskBuild`` (auto_op_parallel = CUSTOMIZE_QUEUE): every EventWait with a later
    kernel on its stream is deferred and placed right before that kernel; other nodes keep their order."""
    targets = _wait_targets(kids)
    order: list[int] = []
    pending: list[int] = []

    def flush(current: int) -> None:
        ready = [p for p in pending if (targets[p] or 0) <= current]
        for p in ready:
            order.append(p)
            pending.remove(p)

    for p, c in enumerate(kids):
        if isinstance(c, Event) and c.kind == "EventWait" and targets[p] is not None:
            pending.append(p)
            continue
        flush(p)
        order.append(p)
    flush(len(kids))
    return {p: t for t, p in enumerate(order) if t != p}


def auto_task_indices(children: Sequence[Child]) -> list[int]:
    """Task index per position under ``reorder="auto"`` (what :func:`build_scene` will use), so a
    caller can aim a :class:`FaultCore` at a child before the scene exists (the emulator)."""
    return _task_indices(len(children), _auto_reorder(children))


def _task_indices(n: int, reorder: Mapping[int, int]) -> list[int]:
    """Task index per position: ``reorder`` places moved (wait) nodes; the rest keep their relative order."""
    for p, t in reorder.items():
        if not (0 <= p < n and 0 <= t < n):
            raise ValueError(f"reorder {p}->{t} out of range for {n} children")
    if len(set(reorder.values())) != len(reorder):
        raise ValueError("reorder maps two positions to the same task index")
    free = iter(t for t in range(n) if t not in set(reorder.values()))
    return [reorder[p] if p in reorder else next(free) for p in range(n)]


def _blocks(k: Kernel) -> int:
    if k.num_blocks is not None:
        return k.num_blocks
    return 48 if k.kernel_type == "AIV_ONLY" else 24


def _cube_vec(k: Kernel) -> tuple[int, int]:
    b = _blocks(k)
    return {
        "AIC_ONLY": (b, 0),
        "AIV_ONLY": (0, b),
        "MIX_AIC_1_1": (b, b),
        "MIX_AIC_1_2": (b, 2 * b),
    }[k.kernel_type]


def _task_ratio(k: Kernel) -> tuple[int, int]:
    return {"AIC_ONLY": (1, 0), "AIV_ONLY": (0, 1), "MIX_AIC_1_1": (1, 1), "MIX_AIC_1_2": (1, 2)}[
        k.kernel_type
    ]


def _resolve_sk(
    ordinal: int,
    scope_id: int,
    scope_name: str,
    children: Sequence[Child],
    *,
    entry: str | None,
    op_trace: bool,
    reorder: Mapping[int, int] | str,
    id_base: int,
) -> _Sk:
    kids = list(children)
    n = len(kids)
    auto = isinstance(reorder, str)
    if isinstance(reorder, str):
        if reorder != "auto":
            raise ValueError(f"reorder must be a {{position: task index}} map or 'auto', got {reorder!r}")
        reorder = _auto_reorder(kids)
    for c in kids:
        if isinstance(c, Kernel) and c.kernel_type not in KERNEL_TYPES:
            raise ValueError(f"kernel_type must be one of {KERNEL_TYPES}, got {c.kernel_type!r}")
        if isinstance(c, Event) and c.kind not in EVENT_KINDS:
            raise ValueError(f"event kind must be one of {EVENT_KINDS}, got {c.kind!r}")
    node_ids = [c.node_id if c.node_id is not None else id_base + p for p, c in enumerate(kids)]
    if len(set(node_ids)) != n:
        raise ValueError(f"duplicate node ids in scope {scope_id}: {node_ids}")
    tix = _task_indices(n, reorder)
    order = [0] * n
    for p, t in enumerate(tix):
        order[t] = p
    slot0 = ordinal * 4096  # address slots per SK (no overlap below 4096 children)
    images: dict[int, _Image] = {}
    dev_args: dict[int, int] = {}
    for p, c in enumerate(kids):
        if not isinstance(c, Kernel):
            continue
        dev_args[p] = CHILD_ARGS_BASE + (slot0 + p) * 0x2000
        if c.shares_binary_with is not None:
            q = c.shares_binary_with
            if not (0 <= q < p) or q not in images:
                raise ValueError(f"child {p}: shares_binary_with={q} must name an earlier kernel")
            src = kids[q]
            assert isinstance(src, Kernel)
            if src.kernel_type != c.kernel_type:
                raise ValueError(f"child {p}: a shared binary needs the same kernel type as child {q}")
            images[p] = images[q]
            continue
        base = CHILD_BASE + (slot0 + p) * 0x20000
        mix = c.has_aic and c.has_aiv
        vsize = 2 * VARIANT_SIZE if mix else VARIANT_SIZE
        data, layout = child_elf(ChildKernel(c.func_name, base, variant_size=vsize, variant_bind="WEAK"))
        hdl = BIN_HDL_BASE + (slot0 + p) * 0x10000
        images[p] = _Image(
            base=base,
            name=bin_file_name(c.func_name, base),
            data=data,
            bin_hdl=hdl,
            func_hdl=hdl + 0x6C0,
            offsets=tuple(o for _n, o, _s in layout.variants),
            symbols=tuple(nm for nm, _o, _s in layout.variants),
            size=VARIANT_SIZE,
            owner=p,
            mix=mix,
        )
    ent = entry or _default_entry(kids, op_trace)
    streams = sorted({c.stream for c in kids})
    sk = _Sk(
        ordinal=ordinal,
        scope_id=scope_id,
        scope_name=scope_name,
        children=kids,
        node_ids=node_ids,
        task_index=tix,
        order=order,
        images=images,
        dev_args=dev_args,
        aic=[],
        aiv=[],
        entry=ent,
        entry_base=ENTRY_BASE + ordinal * 0x10000,
        args_dev=ARGS_BASE + ordinal * 0x100000,
        streams=streams,
        reorder={p: t for p, t in reorder.items() if p != t},
        reorder_auto=auto,
    )
    _build_queues(sk)
    return sk


def _reorder_msgs(sk: _Sk) -> list[str]:
    """``ReorderWaitNodesForTaskBuild`` log lines (upstream wording): disabled, or defer/place/finished."""
    if not sk.reorder and not sk.reorder_auto:
        return ["task reorder disabled: auto_op_parallel is not CUSTOMIZE_QUEUE"]
    targets = _wait_targets(sk.children)
    n = len(sk.children)
    deferred = [
        p
        for p, c in enumerate(sk.children)
        if p in sk.reorder
        or (sk.reorder_auto and isinstance(c, Event) and c.kind == "EventWait" and targets[p] is not None)
    ]
    msgs: list[str] = []
    for p in deferred:
        c = sk.children[p]
        tgt = targets[p]
        tk = tgt if tgt is not None else n
        tnode = sk.node_ids[tgt] if tgt is not None else 0xFFFFFFFFFFFFFFFF
        msgs.append(
            f"task reorder: defer wait node for same-stream kernel, waitNodeId={sk.node_ids[p]}, "
            f"streamIdx={sk.streams.index(c.stream)}, originalIdx={p}, targetKernelIdx={tk}, "
            f"targetKernelNodeId={tnode}"
        )
    for p in sorted(deferred, key=lambda q: sk.task_index[q]):
        c = sk.children[p]
        tgt = targets[p]
        msgs.append(
            f"task reorder: place deferred wait node, waitNodeId={sk.node_ids[p]}, "
            f"streamIdx={sk.streams.index(c.stream)}, originalIdx={p}, finalIdx={sk.task_index[p]}, "
            f"targetKernelIdx={tgt if tgt is not None else n}"
        )
    moved = sum(1 for p, t in enumerate(sk.task_index) if p != t and p in deferred)
    msgs.append(f"task reorder finished: originalCount={n}, moveCount={moved}")
    return msgs


def _build_queues(sk: _Sk) -> None:
    """Task queues in task order: FUNC per core type, SYNC after (sync_after), EVENT_* in every used queue."""
    kernels = [c for c in sk.children if isinstance(c, Kernel)]
    use_aic = any(c.has_aic for c in kernels)
    use_aiv = any(c.has_aiv for c in kernels) or not use_aic
    for t, p in enumerate(sk.order):
        c = sk.children[p]
        if isinstance(c, Kernel):
            aic_e, aiv_e = sk.entries_of(p)
            blk = _blocks(c)
            cube, vec = _cube_vec(c)
            if c.has_aic:
                sk.aic.append(_Task(t, "FUNC", cube or blk, sk.dev_args[p], aic_e, c.debug_options, p))
            if c.has_aiv:
                sk.aiv.append(_Task(t, "FUNC", vec or blk, sk.dev_args[p], aiv_e, c.debug_options, p))
            if c.sync_after is not None:
                for q, used in ((sk.aic, c.has_aic), (sk.aiv, c.has_aiv)):
                    if used:
                        q.append(_Task(t, "SYNC", c.sync_blocks, c.sync_after, (), 0, p))
        else:
            flag = EVENT_FLAG_BASE + c.event_id * 0x40
            for q, used in ((sk.aic, use_aic), (sk.aiv, use_aiv)):
                if used:
                    q.append(_Task(t, EVENT_TASK[c.kind], 0, flag, (), 0, p))


# ------------------------------------------------------------------------------------------ sk_meta


def _graph_node(sk: _Sk, p: int, *, built: bool) -> skmeta.NodeSpec:
    """A child as ``Format()`` prints it; ``built`` adds the device args assigned at build time."""
    c = sk.children[p]
    sidx = sk.streams.index(c.stream)
    nidx = 1 + sum(1 for q in range(p) if sk.children[q].stream == c.stream)
    if isinstance(c, Event):
        kind = {"MemoryWrite": "memory_write", "MemoryWait": "memory_wait"}.get(c.kind, "event")
        return skmeta.NodeSpec(
            sk.node_ids[p],
            kind=kind,
            stream_id=c.stream,
            stream_idx=sidx,
            node_idx=nidx,
            event_type=c.kind if kind == "event" else "EventNotify",
            event_id=c.event_id,
            memory_value=1 if kind != "event" else 0,
        )
    img = sk.images[p]
    cube, vec = _cube_vec(c)
    return skmeta.NodeSpec(
        sk.node_ids[p],
        stream_id=c.stream,
        stream_idx=sidx,
        node_idx=nidx,
        func_name=c.func_name,
        kernel_type=c.kernel_type,
        task_ratio=_task_ratio(c),
        num_blocks=_blocks(c),
        cube_num=cube,
        vec_num=vec,
        bin_hdl=img.bin_hdl,
        func_hdl=img.func_hdl,
        dev_args=sk.dev_args[p] if built else None,
    )


def _related(sk: _Sk, p: int) -> str:
    c = sk.children[p]
    return c.kernel_type if isinstance(c, Kernel) else "DEFAULT"


def _meta_sk(sk: _Sk) -> skmeta.SkSpec:
    """The scheduled scope as the sk_meta printers see it (fused nodes in position order, args in task order)."""

    def tasks(q: list[_Task]) -> list[skmeta.TaskSpec]:
        return [
            skmeta.TaskSpec(
                t.type,
                t.index,
                node_id=sk.node_ids[t.position],
                related_type=_related(sk, t.position),
                blk=t.blk,
                entries=t.entries,
                args=t.args,
                debug_options=t.debug_options,
            )
            for t in q
        ]

    dfx = []
    for p in sk.order:
        c = sk.children[p]
        if isinstance(c, Kernel):
            aic_e, aiv_e = sk.entries_of(p)
            img = sk.images[p]
            cube, vec = _cube_vec(c)
            dfx.append(
                skmeta.DfxSpec(
                    bin=img.bin_hdl,
                    ori=img.func_hdl,
                    aic_size=img.size if c.has_aic else 0,
                    aiv_size=img.size if c.has_aiv else 0,
                    num_blocks=_blocks(c),
                    cube_num=cube,
                    vec_num=vec,
                    entry_aic=aic_e,
                    entry_aiv=aiv_e,
                )
            )
        else:
            dfx.append(skmeta.DfxSpec(num_blocks=0, vec_num=0))
    return skmeta.SkSpec(
        sk.scope_id,
        sk.scope_name,
        [_graph_node(sk, p, built=True) for p in range(len(sk.children))],
        aic_tasks=tasks(sk.aic),
        aiv_tasks=tasks(sk.aiv),
        dfx=dfx,
        aic_cap=len(sk.aic),
        aiv_cap=len(sk.aiv),
        header_offsets=sk.dfx_offsets,
        total_size=sk.total_size,
    )


def _queue_json(sk: _Sk) -> jsonart.ScopeSpec:
    def q(tasks: list[_Task]) -> jsonart.QueueSpec:
        if not tasks:
            return jsonart.QueueSpec(tasks=None)
        return jsonart.QueueSpec(
            tuple(jsonart.TaskSpec(t.index, t.type, t.blk, t.args, t.debug_options, t.entries) for t in tasks)
        )

    return jsonart.ScopeSpec(sk.scope_id, aic=q(sk.aic), aiv=q(sk.aiv))


def _detail_type(c: Child) -> str:
    return "KERNEL" if isinstance(c, Kernel) else EVENT_DETAIL[c.kind]


def _outside_node(c: Child, nid: int, node_idx: int) -> skmeta.NodeSpec:
    """A graph node outside every SK as the metadata printers see it (an unfused kernel or event)."""
    if isinstance(c, Event):
        kind = {"MemoryWrite": "memory_write", "MemoryWait": "memory_wait"}.get(c.kind, "event")
        return skmeta.NodeSpec(nid, kind=kind, stream_id=c.stream, node_idx=node_idx,
                               event_type=c.kind if kind == "event" else "EventNotify", event_id=c.event_id,
                               memory_value=1 if kind != "event" else 0)  # fmt: skip
    cube, vec = _cube_vec(c)
    return skmeta.NodeSpec(nid, stream_id=c.stream, node_idx=node_idx, func_name=c.func_name,
                           kernel_type=c.kernel_type, task_ratio=_task_ratio(c), num_blocks=_blocks(c),
                           cube_num=cube, vec_num=vec, bin_hdl=0xAAAAF3E00000 + nid * 0x100,
                           func_hdl=0xAAAAF3E00080 + nid * 0x100)  # fmt: skip


def _outside_nodes(sks: Sequence[_Sk], spec: SceneSpec) -> list[tuple[skmeta.NodeSpec, str, str]]:
    """Graph nodes outside every SK: (node, fail reason, node_detail type) — a prologue and an epilogue
    kernel (NOT_IN_SCOPE, unless ``fillers=False``) around ``unfusible``."""
    used = {nid for sk in sks for nid in sk.node_ids}
    used |= {k.node_id for k, _r in spec.unfusible if k.node_id is not None}
    nxt = max(used, default=0) + 1
    out: list[tuple[skmeta.NodeSpec, str, str]] = []
    lo = min((nid for sk in sks for nid in sk.node_ids), default=1)
    if spec.fillers and lo - 1 >= 0 and lo - 1 not in used:
        out.append(
            (
                skmeta.NodeSpec(lo - 1, node_idx=0, func_name="static_kernel_RmsNorm_5c1d07aa", num_blocks=48,
                                vec_num=48, bin_hdl=0xAAAAF3A90C30, func_hdl=0xAAAAF3A91E40),
                "NOT_IN_SCOPE",
                "KERNEL",
            )
        )  # fmt: skip
    for k, reason in spec.unfusible:
        nid = k.node_id
        if nid is None:
            nid = nxt
            nxt += 1
        out.append((_outside_node(k, nid, 50 + len(out)), reason, _detail_type(k)))
    if spec.fillers:
        out.append(
            (
                skmeta.NodeSpec(nxt, node_idx=99, func_name="static_kernel_MatMulV3_e07b3c19", kernel_type="AIC_ONLY",
                                task_ratio=(1, 0), num_blocks=24, cube_num=24, vec_num=0,
                                bin_hdl=0xAAAAF3E10F00, func_hdl=0xAAAAF3E11A20),
                "NOT_IN_SCOPE",
                "KERNEL",
            )
        )  # fmt: skip
    return out


class _Meta:
    """Renders the metadata of one model directory (all SKs of it)."""

    def __init__(self, spec: SceneSpec, sks: list[_Sk], pid: int) -> None:
        self.spec = spec
        self.sks = sks
        self.pid = pid

    def style(self, ts: datetime, src_file: str, level: str = "INFO") -> skmeta.LogStyle:
        return skmeta.LogStyle(real=self.spec.meta_prefix, ts=ts, pid=self.pid, tid=TID, level=level,
                               src_file=src_file)  # fmt: skip

    def break_info(self) -> str:
        """``BreakInfo::Format()`` of the main scope (§3.7): the scope-level break reason (``breakReason=``,
        one of BREAK_REASONS) and a node-level ``fusionFailReason=`` for any other recorded reason, with
        every reason named in the quoted ``detail`` (last field)."""
        reasons = list(self.spec.scope_reasons)
        if not reasons:
            return "breakReason=NONE"
        brk = [r for r in reasons if r in BREAK_REASONS]
        other = [r for r in reasons if r not in BREAK_REASONS]
        # no triggerNode: a scope-level record (tests add one by post-editing when they need it)
        parts = [f"breakReason={brk[0] if brk else 'UNFUSIBLE_NODE'}"]
        if other:
            parts.append(f"fusionFailReason={other[0]}")
        parts.append(f'detail="scope {self.sks[0].scope_name} recorded {", ".join(reasons)}"')
        return ", ".join(parts)

    def sk_break(self, sk: _Sk) -> str:
        """The final-snapshot BreakInfo of one SK: verbatim when given, else the spec's for the main SK."""
        if sk.break_text is not None:
            return sk.break_text
        return self.break_info() if sk.main else "breakReason=NONE"

    def detail(self, outside: list[tuple[skmeta.NodeSpec, str, str]]) -> list[str]:
        if self.spec.graph is not None:
            return self.graph_detail(outside)
        rows: list[skmeta.NodeDetailSpec] = []
        if outside:
            rows.append(
                skmeta.NodeDetailSpec(outside[0][0], outside[0][2], scope_flags="0", is_fusible=False)
            )
        for sk in self.sks:
            for p, c in enumerate(sk.children):
                flag = sk.scope_flags
                rows.append(skmeta.NodeDetailSpec(_graph_node(sk, p, built=False), _detail_type(c),
                                                  scope_flags=flag, is_fusible=True))  # fmt: skip
        for n, _r, typ in outside[1:]:
            rows.append(skmeta.NodeDetailSpec(n, typ, scope_flags="0", is_fusible=False))
        return skmeta.node_detail_lines(rows, self.style(self.spec.build_ts, "sk_graph.cpp"))

    def graph_detail(self, outside: list[tuple[skmeta.NodeSpec, str, str]]) -> list[str]:
        """Node detail rows in the capture order of ``spec.graph`` (each with its scope flags); nodes
        the graph does not list follow in the default order."""
        known: dict[int, tuple[skmeta.NodeSpec, str, bool]] = {}
        for sk in self.sks:
            for p, c in enumerate(sk.children):
                known[sk.node_ids[p]] = (_graph_node(sk, p, built=False), _detail_type(c), True)
        for n, _r, typ in outside:
            known.setdefault(n.node_id, (n, typ, False))
        rows: list[skmeta.NodeDetailSpec] = []
        listed: set[int] = set()
        for nid, flags in self.spec.graph or ():
            if nid not in known or nid in listed:
                raise ValueError(f"graph row nodeId {nid} is not a node of the scene (or listed twice)")
            n, typ, fusible = known[nid]
            listed.add(nid)
            rows.append(skmeta.NodeDetailSpec(n, typ, scope_flags=flags, is_fusible=fusible))
        for nid, (n, typ, fusible) in known.items():
            if nid not in listed:
                rows.append(skmeta.NodeDetailSpec(n, typ, scope_flags="0", is_fusible=fusible))
        return skmeta.node_detail_lines(rows, self.style(self.spec.build_ts, "sk_graph.cpp"))

    def snapshots(self) -> list[skmeta.ScopeSnapshotSpec]:
        out = []
        for sk in self.sks:
            nodes = [_graph_node(sk, p, built=False) for p in range(len(sk.children))]
            streams = []
            for j, s in enumerate(sk.streams):
                ids = [sk.node_ids[p] for p, c in enumerate(sk.children) if c.stream == s]
                streams.append((j, ids[0], ids[-1], len(ids)))
            out.append(
                skmeta.ScopeSnapshotSpec(
                    sk.scope_id,
                    nodes,
                    scope_bit_flags=sk.scope_flags,
                    scope_names=sk.scope_name,
                    break_info=self.sk_break(sk),
                    streams=streams,
                )
            )
        return out

    def split(self) -> list[str]:
        snaps = self.snapshots()
        return skmeta.scope_split_lines(
            [[skmeta.PassSpec("InitialScopeSplitPass", snaps)]],
            skmeta.PassSpec("ScopeSplitPipelineFinal", snaps),
            self.style(self.spec.build_ts + timedelta(milliseconds=20), "sk_scope_split.cpp"),
        )

    def fail(self, outside: list[tuple[skmeta.NodeSpec, str, str]]) -> list[str]:
        reasons = list(self.spec.scope_reasons)
        fused = []
        for sk in self.sks:
            main = sk.main and bool(reasons) and sk.break_text is None
            fused.append(
                skmeta.FusedScopeSpec(
                    sk.scope_id,
                    sk.scope_flags,
                    list(sk.node_ids),
                    scope_names=sk.scope_name,
                    break_info=self.break_info() if main else sk.break_text,
                    break_reason_detail=f"scope {sk.scope_name} recorded {', '.join(reasons)}"
                    if main
                    else "",
                )
            )
        return skmeta.fail_reasons_lines(
            [skmeta.UnfusibleSpec(n, r) for n, r, _t in outside],
            [
                skmeta.OriginalScopeSpec(sk.scope_id, sk.scope_flags, sk.scope_name, list(sk.node_ids))
                for sk in self.sks
            ],
            fused,
            style=self.style(self.spec.build_ts + timedelta(milliseconds=40), "sk_graph.cpp"),
        )

    def facts(self, model_rel: str) -> list[str]:
        """super_kernel.log build facts (§3.3): bind map, child ↔ binDevAddr, splits, task order, dumps."""
        recs: list[tuple[str, str]] = []
        for sk in self.sks:
            # Schedule(): wait-node reorder, then the task order the builder uses (printed even unchanged)
            recs += [("ReorderWaitNodesForTaskBuild", m) for m in _reorder_msgs(sk)]
            nodes = [_graph_node(sk, p, built=False) for p in sk.order]
            recs += [("PrintTaskNodesDetail", m) for m in skmeta.reordered_nodes_msgs(nodes)]
            n_events = sum(1 for c in sk.children if isinstance(c, Event))
            recs.append(
                (
                    "Schedule",
                    f"schedule scope: taskCount={len(sk.children)}, customTaskCount={n_events}, "
                    f"updateStreamCount={len(sk.streams)}",
                )
            )
            for p in sk.kernels:
                c = sk.children[p]
                assert isinstance(c, Kernel)
                img = sk.images[p]
                if img.owner != p:
                    continue
                offs = img.offsets
                recs.append(
                    ("InitSuperKernelBindMap", f"binHdl=0x{img.bin_hdl:x}, metaNum=1, payloadSize=52")
                )
                recs.append(
                    (
                        "InitSuperKernelBindMap",
                        f"[0] cap=0, globalFunc=0x0, skFunc[0]=0x{offs[0]:x}, skFunc[1]=0x{offs[1]:x}, "
                        f"skFunc[2]=0x{offs[2]:x}, skFunc[3]=0x{offs[3]:x}",
                    )
                )
                aic_addr = img.base if c.has_aic else 0
                aiv_addr = img.base if c.has_aiv else 0
                recs.append(
                    (
                        "GetSubKernelAddr",
                        f"funcName={c.func_name}, binDevAddr=0x{img.base:x}, binDevSize={len(img.data)}, "
                        f"aicAddr=0x{aic_addr:x}, aivAddr=0x{aiv_addr:x}",
                    )
                )
                recs.append(("GetSubKernelAddr", "aicOffset=0x0, aivOffset=0x0"))
                for core in ("AIC", "AIV"):
                    if (core == "AIC" and not c.has_aic) or (core == "AIV" and not c.has_aiv):
                        continue
                    for j, sym in enumerate(img.symbols):
                        recs.append(
                            (
                                "GetSplitSymbol",
                                f"split[{j}] {core} symbol={sym}, size=0x{img.size:x}, bind=WEAK",
                            )
                        )
            recs.append(
                (
                    "GenEntryInfo",
                    f"GenEntryInfo: enableDebug={int('_debug' in sk.entry)}, "
                    f"enableProfiling={int('_dump_profiling' in sk.entry)}, "
                    f"enableOpTrace={int('op_trace' in sk.entry)}, enableEarlyStart=0, useSimtEntry=0",
                )
            )
            for t, p in enumerate(sk.order):
                n = _graph_node(sk, p, built=True)
                typ = _detail_type(sk.children[p])
                recs.append(
                    ("BuildTaskQueue", f"index={t}, nodeType={typ}, nodeInfo={skmeta.render_node(n)}")
                )
            etype = {"sk_entry_aic": "AIC_ONLY", "sk_entry_aiv": "AIV_ONLY", "sk_entry_mix12": "MIX_AIC_1_2"}
            base = "sk_entry_" + sk.entry.removeprefix("sk_entry_").split("_")[0]  # suffixes dropped
            recs.append(
                (
                    "ScheduleScope",
                    f"schedule scope: build finished, entryType={etype.get(base, 'MIX_AIC_1_1')}, "
                    f"entryFuncHandle=0x{ENTRY_FUNC_HDL + sk.ordinal * 0x100:x}, skFuncName={sk.func_name()}",
                )
            )
            for p in sk.kernels:
                img = sk.images[p]
                if img.owner == p:
                    recs.append(
                        (
                            "DumpKernelBinaries",
                            f"Dumped kernel binary: {model_rel}/bin_files/{img.name}, size={len(img.data)}, "
                            f"codeSegAddr={img.base}",
                        )
                    )
            edata = entry_elf(sk.entry_names, size=ENTRY_FUNC_SIZE)
            recs.append(
                (
                    "DumpKernelBinaries",
                    f"Dumped SK entry binary: {model_rel}/bin_files/{sk.entry_file}, size={len(edata)}, "
                    f"codeSegAddr={sk.entry_base}",
                )
            )
        return skmeta.super_kernel_log_lines(
            recs, self.style(self.spec.build_ts + timedelta(milliseconds=60), "sk_node.cpp")
        )

    def write(self, model_dir: Path, model_id: str, handler_filelog: list[str]) -> None:
        spec, files = self.spec, set(self.spec.files)
        outside = _outside_nodes(self.sks, spec)
        detail = self.detail(outside)
        split = self.split()
        fail = self.fail(outside)
        model_rel = f"sk_meta/{model_dir.parent.name}/{model_dir.name}"
        facts = self.facts(model_rel)
        metas = [_meta_sk(sk) for sk in self.sks]
        fused = skmeta.fused_nodes_lines(metas, self.style(spec.build_ts + timedelta(milliseconds=80),
                                                           "sk_optimizer.cpp"))  # fmt: skip
        args = skmeta.device_args_lines(
            metas,
            style=self.style(spec.build_ts + timedelta(milliseconds=100), "sk_task_builder.cpp", "DEBUG"),
        )
        written: list[Path] = []
        for key, name, lines in (
            ("node_detail", "sk_node_detail.log", detail),
            ("scope_split", "sk_scope_split.log", split),
            ("fail_reasons", "sk_fusion_fail_reasons.log", fail),
            ("fused_nodes", "sk_fused_nodes.log", fused),
            ("device_args", "sk_device_args.log", args),
        ):
            if key in files:
                written.append(skmeta.write_lines(model_dir / name, lines))
        if "super_kernel_log" in files:
            written.append(
                skmeta.write_lines(
                    model_dir / "super_kernel.log",
                    [*detail, *split, *fail, *facts, *fused, *args, *handler_filelog],
                )
            )
        if "task_queue" in files:
            written.append(
                jsonart.write_task_queue(
                    model_dir / "sk_task_queue.json", model_id, [_queue_json(sk) for sk in self.sks]
                )
            )
        if "bin_files" in files:
            bins = model_dir / "bin_files"
            bins.mkdir(parents=True, exist_ok=True)
            for sk in self.sks:
                for p in sk.kernels:
                    img = sk.images[p]
                    if img.owner == p:
                        (bins / img.name).write_bytes(img.data)
                (bins / sk.entry_file).write_bytes(entry_elf(sk.entry_names, size=ENTRY_FUNC_SIZE))
        model_dir.mkdir(parents=True, exist_ok=True)
        if not spec.meta_prefix:
            # hand-written-style metadata has no timestamps: its mtime is its time (scene-layout.md)
            t = spec.build_ts.timestamp()
            for pth in written:
                os.utime(pth, (t, t))


# ------------------------------------------------------------------------------------------ handler


def _state(value: tuple[str | int, int] | None) -> tuple[int, int]:
    """(state code, task index) from a (name or number, index) pair; None → ORIGIN."""
    if value is None:
        return 0, 0
    st, idx = value
    code = STATE_CODES[st] if isinstance(st, str) else int(st)
    return code, idx


def _core_pc(sk: _Sk, c: FaultCore) -> int:
    kind = c.pc[0]
    if kind == "zero":
        return 0
    if kind == "entry":
        return sk.start_pc + ENTRY_PC_OFFSET
    if kind == "addr":
        return int(c.pc[1])
    if kind == "child":
        k = int(c.pc[1])
        if not 0 <= k < len(sk.order):
            raise ValueError(f"core {c.core_id}: task index {k} out of range")
        aic_e, aiv_e = sk.entries_of(sk.order[k])
        ent = aic_e if c.core_type == "AIC" else aiv_e
        if not any(ent):
            raise ValueError(f"core {c.core_id}: task {k} has no {c.core_type} code")
        return ent[c.core_id % 4] + FAULT_OFFSET
    raise ValueError(f"unknown pc form {c.pc!r}")


def _match(sk: _Sk, core_type: str, pc: int) -> tuple[int, int] | None:
    """The handler's first match over DFX nodes in task order (T4: lowest index wins)."""
    if pc == 0:
        return None
    for t, p in enumerate(sk.order):
        c = sk.children[p]
        if not isinstance(c, Kernel):
            continue
        aic_e, aiv_e = sk.entries_of(p)
        ent = aic_e if core_type == "AIC" else aiv_e
        for j, e in enumerate(ent):
            if e and e <= pc < e + sk.images[p].size:
                return (t, j)
    return None


def _incident(
    spec: SceneSpec, sk: _Sk, pid: int
) -> tuple[IncidentSpec, dict[int, int], dict[int, Any], dict[int, int]]:
    nodes = []
    for p in sk.order:
        c = sk.children[p]
        if isinstance(c, Kernel):
            img = sk.images[p]
            aic_e, aiv_e = sk.entries_of(p)
            cube, vec = _cube_vec(c)
            nodes.append(
                DfxNodeSpec(img.bin_hdl, img.func_hdl, aic_size=img.size if c.has_aic else 0,
                            aiv_size=img.size if c.has_aiv else 0, num_blocks=_blocks(c), cube_num=cube,
                            vec_num=vec, origin_name=c.func_name, entry_aic=aic_e, entry_aiv=aiv_e)
            )  # fmt: skip
        else:
            nodes.append(DfxNodeSpec(0, 0, origin_name=None, is_func=False))
    counters: dict[int, tuple[int, int]] = {}
    if spec.op_trace:
        for core, val in spec.counters.items():
            counters[core] = _state(val)[::-1]
        for fc in spec.cores:
            counters[fc.core_id] = _state(fc.state)[::-1]
    cores: list[CoreSpec] = []
    pcs: dict[int, int] = {}
    matches: dict[int, Any] = {}
    conds: dict[int, int] = {}
    model_idx = 0
    for fc in spec.cores:
        pc = _core_pc(sk, fc)
        pcs[fc.core_id] = pc
        m = _match(sk, fc.core_type, pc)
        matches[fc.core_id] = m
        st, idx = _state(fc.state)
        if fc.cond == "auto":
            cond = encode_cond(st, idx, sk.scope_id, model_idx)
        elif fc.cond == "unavailable":
            cond = 0
        else:
            cond = int(fc.cond)
        conds[fc.core_id] = cond
        sym, off = "", 0
        if m is not None:
            p = sk.order[m[0]]
            img = sk.images[p]
            kern = sk.children[p]
            assert isinstance(kern, Kernel)
            sym, off = img.symbols[m[1]], img.offsets[m[1]]
        cores.append(
            CoreSpec(fc.core_id, fc.core_type, sk.start_pc, pc, match=m, sk_symbol=sym, sk_bind="WEAK",
                     func_offset=off, cond=cond)
        )  # fmt: skip
    model_ids = (spec.model_id, *spec.extra_models)
    inc = IncidentSpec(
        entry=sk.entry,
        dialect=spec.dialect,
        pid=pid,
        proc=PROC,
        tid=TID,
        start=spec.fault_ts,
        model_idx=model_idx,
        scope_id=sk.scope_id,
        model_ids=model_ids,
        model_ris=tuple(0xAAAAF3A5C000 + 0x1000 * i for i in range(len(model_ids))),
        args_dev=sk.args_dev,
        args_len=sk.total_size,
        aic_que_offset=AIC_QUE_OFFSET,
        aiv_que_offset=AIV_QUE_OFFSET,
        counter_offset=COUNTER_OFFSET,
        ws_offset=DFX_OFFSET,
        dfx_offset=DFX_OFFSET,
        total_size=sk.total_size,
        aicore_nums=AICORE_NUMS,
        nodes=tuple(nodes),
        aic_tasks=tuple(HandlerTaskSpec(t.index, t.type, t.blk, t.args) for t in sk.aic),
        aiv_tasks=tuple(HandlerTaskSpec(t.index, t.type, t.blk, t.args) for t in sk.aiv),
        counters=tuple((core, idx, st) for core, (idx, st) in sorted(counters.items())),
        cores=tuple(cores),
        entry_bin_hdl=ENTRY_BIN_HDL,
        sk_func_name=sk.func_name(),
    )
    if not spec.dfx:
        inc = replace(inc, abort="A9", callback_b=CallbackBSpec() if inc.d >= 4 else None)
    return inc, pcs, matches, conds


# ------------------------------------------------------------------------------------------ plog


#: plog records kept at each plog level (slog: a level keeps itself and everything more severe)
_DROPPED_AT = {
    "ERROR": ("[DEBUG]", "[TRACE]", "[INFO]", "[EVENT]"),
    "INFO": ("[DEBUG]", "[TRACE]"),
    "DEBUG": ("[TRACE]",),
}


def _noise(spec: SceneSpec, pid: int, rng: random.Random, start: datetime, n: int) -> list[str]:
    drop = _DROPPED_AT[spec.plog_level]
    return [ln for ln in noise_lines(rng, n, pid=pid, start=start) if not ln.startswith(drop)]


#: how the runtime words a task that did not finish in time (error 507014, AICORE_TIMEOUT)
TIMEOUT_REASON = "aicore timeout"
TIMEOUT_RET_CODE = 0x25


def _core_kind(core_type: str) -> str:
    return "aicore error exception" if core_type == "AIC" else "aivec error exception"


def _runtime_lines(
    ts: datetime,
    *,
    pid: int,
    device: int,
    kernel_name: str,
    cores: Sequence[tuple[int, str, int, int]],
    para_base: int,
    stream_id: int = 2,
    timeout: bool = False,
) -> list[str]:
    """The runtime side of one AI Core fault in the §1.5 order (items 1–4): one core report (+ extend info)
    per exception core ``(core_id, core_type, pc_start, pc_current)``, the kernel task error, the stream sync
    failure and the kernel identification line with this scene's ``device_id`` (gate: device). ``timeout``:
    the task did not finish in time (a hang) — the runtime's timeout wording (``retCode=0x25, [aicore
    timeout]``, extend info ``timeout or trap error``) instead of an exception's."""
    step = timedelta(microseconds=37)
    reason, ret = (TIMEOUT_REASON, TIMEOUT_RET_CODE) if timeout else ("vector core exception", 0x31)
    out: list[str] = [
        runtime_line(ts, report_module_msg(), pid=pid, func="ProcessStarsCoreErrorInfo", tags="[EXEC][EXEC]",
                     src_file="device_error_proc.cc", src_line=1166),
    ]  # fmt: skip
    k = 1
    for serial, (core_id, core_type, start, cur) in enumerate(cores, start=1):
        for msg in (
            core_report_msg(core_id=core_id, kind=_core_kind(core_type), pc_start=start, pc_current=cur,
                            para_base=para_base, serial=serial),
            extend_info_msg(errcodes=("0", "0", "0"), error_str="timeout or trap error") if timeout else extend_info_msg(),
        ):  # fmt: skip
            out.append(
                runtime_line(ts + k * step, msg, pid=pid, func="ProcessStarsCoreErrorInfo", tags="[EXEC][EXEC]",
                             src_file="device_error_proc.cc", src_line=1166)
            )  # fmt: skip
            k += 1
    out.append(
        runtime_line(ts + k * step, kernel_task_error_msg(ret_code=ret, reason=reason), pid=pid, func="PreCheckTaskErr",
                     src_file="davinci_kernel_task.cc", src_line=1200)
    )  # fmt: skip
    out.append(
        runtime_line(
            ts + (k + 1) * step,
            stream_sync_failed_msg(stream_id=stream_id, ret_code=ret, reason=reason),
            pid=pid,
            src_line=1509,
        )
    )
    out.append(
        runtime_line(
            ts + (k + 2) * step,
            kernel_fault_msg(device_id=device, kernel_name=kernel_name, stream_id=stream_id, task_id=RUNTIME_TASK_ID),
            pid=pid, func="PrintErrorInfoForDavinciTask", tags="", src_file="davinci_kernel_task.cc", src_line=1639,
        )
    )  # fmt: skip
    return out


def _fault_device(spec: SceneSpec) -> int:
    return spec.fault_device if spec.fault_device is not None else spec.device


def _plog(
    spec: SceneSpec, sk: _Sk | None, inc: IncidentSpec | None, pcs: dict[int, int], pid: int
) -> list[str]:
    """INFO-level plog: noise, runtime fault lines (§1.5), the SK handler block, the ErrCode line."""
    rng = random.Random(spec.seed)
    process_start = spec.run_start + timedelta(milliseconds=123)
    chunk = max(spec.noise_lines // 5, 1)
    out: list[str] = []
    for start in (
        process_start + timedelta(milliseconds=80),
        spec.build_ts - timedelta(milliseconds=240),
        spec.build_ts + (spec.fault_ts - spec.build_ts) / 3,
        spec.build_ts + (spec.fault_ts - spec.build_ts) * 2 / 3,
    ):
        out += _noise(spec, pid, rng, start, chunk)
    out += _noise(
        spec, pid, rng, spec.fault_ts - timedelta(milliseconds=30), max(spec.noise_lines - 4 * chunk, 0)
    )
    rt_ts = spec.fault_ts - timedelta(microseconds=302)
    fault_lines: list[str] = []
    if spec.fault == "sk" and sk is not None:
        cores = [(fc.core_id, fc.core_type, sk.start_pc, pcs[fc.core_id]) for fc in spec.cores]
        fault_lines = _runtime_lines(rt_ts, pid=pid, device=_fault_device(spec), kernel_name=sk.entry, cores=cores,
                                     para_base=sk.args_dev, timeout=spec.runtime_timeout)  # fmt: skip
    elif spec.fault == "non_sk":
        base = 0x124081F00000
        cores = [(fc.core_id, fc.core_type, base, base + 0x3A8) for fc in spec.cores] or [
            (30, "AIV", base, base + 0x3A8)
        ]
        fault_lines = _runtime_lines(rt_ts, pid=pid, device=_fault_device(spec), kernel_name=spec.non_sk_kernel,
                                     cores=cores, para_base=0x12C101000000)  # fmt: skip
    elif spec.fault == "ge_sk" and sk is not None:
        fault_lines = _ge_sk_lines(spec, sk, rt_ts, pid)
    out += fault_lines
    if inc is not None:
        out += _handler_lines(spec, inc)
    if fault_lines:
        # the API returns only after the exception callbacks ran: the ErrCode line follows the handler block
        n_sk = len(render(inc)) if inc is not None else 0
        ts = spec.fault_ts + timedelta(microseconds=(inc.step_us if inc else 23) * n_sk + 850)
        api_error = errcode_msg(code=507014, desc=TIMEOUT_REASON) if spec.runtime_timeout else errcode_msg()
        out.append(runtime_line(ts, api_error, pid=pid, func="rtStreamSynchronize", src_file="api_c.cc",
                                src_line=782))  # fmt: skip
    return out


def _handler_lines(spec: SceneSpec, inc: IncidentSpec) -> list[str]:
    lines = handler_plog_lines(inc, level=spec.plog_level)
    if _handler_mode(spec) == "anchor_only":
        return [ln for ln in lines if "[SK][IsSuperKernelException]" in ln]
    return lines


def _handler_mode(spec: SceneSpec) -> str:
    if spec.handler is not None:
        return spec.handler
    return "full" if spec.fault == "sk" else "none"


def _ge_sk_lines(spec: SceneSpec, sk: _Sk, ts: datetime, pid: int) -> list[str]:
    """torchair GE-mode SK fault (§3.1.4, X6): te_superkernel_<hash>, GE error tracking, adump symbol."""
    kernels = [c for c in sk.children if isinstance(c, Kernel)]
    first = kernels[0].func_name if kernels else "none"
    last = kernels[-1].func_name if kernels else "none"
    te = f"te_superkernel_{random.Random(spec.seed).getrandbits(64):016x}"
    fc = spec.cores[0] if spec.cores else FaultCore(30)
    start = 0x124082000000
    k = int(fc.pc[1]) if fc.pc[0] == "child" and 0 <= int(fc.pc[1]) < len(sk.order) else 0
    target = sk.children[sk.order[k]] if sk.order else None
    tname = target.func_name if isinstance(target, Kernel) else first
    sym = f"{tname}_sk_split{fc.core_id % 4}"
    cur = start + 0x1000 * (k + 1) + FAULT_OFFSET
    out = _runtime_lines(
        ts,
        pid=pid,
        device=_fault_device(spec),
        kernel_name=te,
        cores=[(fc.core_id, fc.core_type, start, cur)],
        para_base=0x12C101000000,
        stream_id=70,
    )
    # fmt: skip
    out.append(
        ge_line(ts + timedelta(microseconds=400),
                error_tracking_msg(origin_op_name=f"sk_{sk.scope_name}_start_{first}_end_{last}", stream_id=70),
                pid=pid)
    )  # fmt: skip
    out.append(
        idedd_line(
            ts + timedelta(microseconds=500),
            dump_exception_msg(core_id=fc.core_id, core_type=0 if fc.core_type == "AIC" else 1, start_pc=start,
                               current_pc=cur, symbol_name=sym, symbol_size=VARIANT_SIZE,
                               symbol_offset=0x1000 * (k + 1)),
            pid=pid,
        )
    )  # fmt: skip
    return out


# ------------------------------------------------------------------------------------------ source


def _snake(name: str) -> str:
    s = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    return re.sub(r"[^0-9a-zA-Z_]", "_", s).lower()


def _event_stmt(e: Event) -> str:
    obj = f"ev{e.event_id}" if e.kind.startswith("Event") else f"flag{e.event_id}"
    return {
        "EventNotify": f"{obj}.record()",
        "EventWait": f"{obj}.wait()",
        "EventReset": f"{obj}.reset()",
        "MemoryWrite": f"{obj}.write(1)",
        "MemoryWait": f"{obj}.wait_value(1)",
    }[e.kind]


def _marker_form(spec: SceneSpec) -> str:
    form = spec.marker_form or ("ge" if spec.fault == "ge_sk" else "npugraph_ex")
    if form not in ("npugraph_ex", "ge"):
        raise ValueError(f"marker_form must be npugraph_ex|ge, got {spec.marker_form!r}")
    return form


def _model_source(spec: SceneSpec, sk: _Sk) -> tuple[str, dict[int, int]]:
    """src/model.py: one statement per child inside the scope markers; nodeId → 1-based line."""
    head = [
        f'"""Model of scene {spec.name}: SK scope {sk.scope_name} (generated by skdbg.scenebuilder.scene)."""',
        "",
        "import torch",
        "import torch_npu",
        "",
        "",
        "class Model(torch.nn.Module):",
        "    def forward(self, x):",
        "        x0 = x",
    ]
    objs: list[str] = []
    for c in sk.children:
        if isinstance(c, Event):
            obj = f"ev{c.event_id}" if c.kind.startswith("Event") else f"flag{c.event_id}"
            ctor = "torch.npu.Event()" if c.kind.startswith("Event") else "torch_npu.npu_flag()"
            line = f"        {obj} = {ctor}"
            if line not in objs:
                objs.append(line)
    ge = _marker_form(spec) == "ge"
    scope = requote(None, sk.scope_name)
    if ge:  # §4.5.2: the GE form is a context manager; the children are its body
        head.insert(4, "import torchair")
        begin = "        " + ge_scope_text(scope)
    else:
        begin = "        " + marker_text("begin", scope)
    body = "            " if ge else "        "
    lines = head + objs + [begin]
    sites: dict[int, int] = {}
    stmt_line: dict[int, int] = {}
    k = 0
    for p, c in enumerate(sk.children):
        if c.same_statement_as is not None:
            q = c.same_statement_as
            if q not in stmt_line:
                raise ValueError(f"child {p}: same_statement_as={q} must name an earlier child")
            stmt_line[p] = stmt_line[q]
            sites[sk.node_ids[p]] = stmt_line[p]
            continue
        if isinstance(c, Kernel):
            text = c.statement or f"x{k + 1} = torch_npu.npu_{_snake(c.func_name)}(x{k})"
            k += 1
        else:
            text = c.statement or _event_stmt(c)
        lines.append(body + text)
        stmt_line[p] = len(lines)
        sites[sk.node_ids[p]] = len(lines)
    if not ge:
        lines.append("        " + marker_text("end", scope))
    lines.append(f"        return x{k}")
    return "\n".join(lines) + "\n", sites


def model_source(spec: SceneSpec) -> tuple[str, dict[int, int]]:
    """The ``src/model.py`` text :func:`build_scene` writes for ``spec``, and its nodeId → line map.

    Why public: a re-launched candidate scene carries the FAILED attempt's source with the proposal's
    marker edits applied, so its builder needs the failing spec's source without building that scene.
    """
    entry = spec.entry or _default_entry(spec.children, spec.op_trace)
    sk = _resolve_sk(0, spec.scope_id, spec.scope_name, spec.children, entry=entry, op_trace=spec.op_trace,
                     reorder=spec.reorder, id_base=100)  # fmt: skip
    return _model_source(spec, sk)


# ------------------------------------------------------------------------------------------ run / probe


def _deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def _run_doc(spec: SceneSpec, run: Mapping[str, Any]) -> dict[str, Any]:
    phase = spec.failure_phase or ("timeout" if spec.fault == "none" else "device_fault")
    doc = jsonart.example_run(
        experiment_id="EX1",
        round_id="EX1-BASE",
        command="python3 infer.py --config configs/scene.yaml",
        rank=spec.rank,
        device=spec.device,
        pid=spec.pid,
        start=format_time(spec.run_start),
        end=format_time(spec.run_end),
        failure_phase=phase,
        failing_path={"prompt_id": "p-0001", "step": 7},
    )
    if phase == "timeout":
        doc["exit"] = {"status": None, "signal": 9, "timeout": True}
    cand = dict(doc["candidate"])
    cand["scope_names"] = [spec.scope_name]
    cand["marker_file"] = "src/model.py"
    if spec.debug_options is not None:
        cand["super_kernel_debug_options"] = dict(spec.debug_options)
    else:  # a consistent run: the *_op_trace entry ran because debug_op_exec_trace was on (F9)
        entry = spec.entry or _default_entry(spec.children, spec.op_trace)
        cand["super_kernel_debug_options"] = {"debug_op_exec_trace": 1} if "op_trace" in entry else {}
    doc["candidate"] = cand
    doc["cache_writers"] = {str(w): list(r) for w, r in spec.cache_writers.items()}
    return _deep_merge(doc, run)


# ------------------------------------------------------------------------------------------ entry point


def build_scene(spec: SceneSpec, dest: str | os.PathLike[str]) -> BuiltScene:
    """Write the scene described by ``spec`` into ``dest`` (created; same-named files are overwritten)."""
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    if spec.dialect not in ("D0", "D1", "D2", "D3", "D4", "D5"):
        raise ValueError(f"dialect must be D0..D5, got {spec.dialect!r}")
    if spec.fault not in ("sk", "non_sk", "ge_sk", "none"):
        raise ValueError(f"fault must be sk|non_sk|ge_sk|none, got {spec.fault!r}")
    if spec.plog_level not in _DROPPED_AT:
        raise ValueError(f"plog_level must be one of {sorted(_DROPPED_AT)}, got {spec.plog_level!r}")
    if _handler_mode(spec) not in ("full", "anchor_only", "none"):
        raise ValueError(f"handler must be full|anchor_only|none, got {spec.handler!r}")
    bad = set(spec.files) - ALL_FILES
    if bad:
        raise ValueError(f"unknown files {sorted(bad)}; known: {sorted(ALL_FILES)}")
    entry = spec.entry
    if entry is None:
        entry = _default_entry(spec.children, spec.op_trace)
    sk = _resolve_sk(0, spec.scope_id, spec.scope_name, spec.children, entry=entry, op_trace=spec.op_trace,
                     reorder=spec.reorder, id_base=100)  # fmt: skip
    if not 0 <= spec.main_position <= len(spec.extra_sks):
        raise ValueError(
            f"main_position {spec.main_position} out of range for {len(spec.extra_sks)} extra SKs"
        )
    sk.main, sk.break_text, sk.flags = True, spec.break_text, spec.scope_flags
    sks = [sk]
    for i, sd in enumerate(spec.extra_sks, start=1):
        extra = _resolve_sk(i, sd.scope_id, sd.scope_name, sd.children, entry=sd.entry, op_trace=spec.op_trace,
                            reorder=sd.reorder, id_base=100 + 100 * i)  # fmt: skip
        extra.break_text, extra.flags = sd.break_text, sd.flags
        sks.append(extra)
    if spec.main_position:  # launch order: the main SK among the others (ordinals keep addresses apart)
        sks.insert(spec.main_position, sks.pop(0))
    # node/scope ids may repeat across SKs and unfusible kernels on purpose (contradiction scenes, E4/F6)
    meta_pid = spec.meta_pid if spec.meta_pid is not None else spec.pid
    dir_pid = spec.sk_meta_pid if spec.sk_meta_pid is not None else spec.pid
    plog_pid = spec.plog_pid if spec.plog_pid is not None else spec.pid

    inc: IncidentSpec | None = None
    pcs: dict[int, int] = {}
    matches: dict[int, Any] = {}
    conds: dict[int, int] = {}
    if spec.fault in ("sk", "none") and _handler_mode(spec) != "none":
        inc, pcs, matches, conds = _incident(spec, sk, plog_pid)
    elif spec.fault == "sk":
        _inc, pcs, matches, conds = _incident(spec, sk, plog_pid)

    model_dir = root / "sk_meta" / str(dir_pid) / f"model_{spec.model_id}"
    extra_dirs: list[Path] = []
    if spec.fault != "ge_sk" and spec.sk_meta:
        handler_file: list[str] = []
        if inc is not None and _handler_mode(spec) == "full" and spec.meta_prefix:
            handler_file = to_filelog_lines(replace(inc, pid=meta_pid))
        meta = _Meta(spec, sks, meta_pid)
        meta.write(model_dir, spec.model_id, handler_file)
        for mid in spec.extra_models:
            d = root / "sk_meta" / str(dir_pid) / f"model_{mid}"
            meta.write(d, mid, [])
            extra_dirs.append(d)

    process_start = spec.run_start + timedelta(milliseconds=123)
    stamp = process_start.strftime("%Y%m%d%H%M%S") + f"{process_start.microsecond // 1000:03d}"
    plog = skmeta.write_lines(root / "log" / "plog" / f"plog-{plog_pid}_{stamp}.log",
                              _plog(spec, sk, inc, pcs, plog_pid))  # fmt: skip

    sites: dict[int, int] = {}
    if spec.source:
        text, sites = _model_source(spec, sk)
        src = root / "src" / "model.py"
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(text, encoding="utf-8", newline="\n")
        jsonart.write_source_sites(root / "source_sites.json", sites)
    run_path: Path | None = None
    if spec.run is not None:
        run_path = jsonart.write_run_json(root / "run.json", _run_doc(spec, spec.run))
    probe_path: Path | None = None
    if spec.probe is not None:
        probe_path = jsonart.write_env_probe(
            root / "env" / "check_environment.json", _deep_merge(jsonart.env_probe(), spec.probe)
        )
    entries = {p: sk.entries_of(p) for p in sk.kernels}
    return BuiltScene(
        root=root,
        node_ids=list(sk.node_ids),
        task_index=list(sk.task_index),
        source_lines=sites,
        current_pcs=pcs,
        plog=plog,
        model_dir=model_dir,
        entry=sk.entry,
        start_pc=sk.start_pc,
        sk_func_name=sk.func_name(),
        matches=matches,
        cond=conds,
        entries=entries,
        bin_files={p: sk.images[p].name for p in sk.kernels},
        extra_model_dirs=extra_dirs,
        run_json=run_path,
        probe_json=probe_path,
    )
