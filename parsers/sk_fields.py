"""What each handler line kind writes: a table of (line kind → fields, converters).

Why a table: the ``[Core N]`` lines (§1.4.2–§1.4.4) each write a fixed set of fields, converted from
fixed regex groups of their :class:`~skdbg.parsers.sk_lines.LineKind`. Written as data, the parser
keeps only the decisions that are not a plain copy (which block a line opens, conflicts, symbols),
and a test checks every key against the kinds :mod:`skdbg.parsers.sk_lines` defines. The order of
the rules is the order the fields are recorded in (it is the order of their sources).

What a block under construction holds is typed too: each kind of block keeps its printed values in a
dict whose keys and value types are one of the ``*Values`` types below (a ``TypedDict`` is a plain dict
at run time), so every read of a value is checked by the type checker, and a test checks the table's
fields against the keys of the block they go to. Why not attributes: a value's presence matters (a
field printed twice with another value is a conflict, a repeated block key starts a new core block),
and the values' sources are kept in the order the fields were printed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypedDict

Groups = tuple[str | None, ...]


class CoreValues(TypedDict, total=False):
    """A ``[Core N]`` block (§1.4.2/§1.4.3): :data:`CORE_LINE`'s fields and the parser's own."""

    model_idx: int
    model_id: str
    original_model_ri: int
    sk_scope_id: int
    no_match: bool
    matched: bool
    core_type: str | None
    start_pc: int
    start_pc_label: str | None
    current_pc: int
    node: int
    entry: int
    entry_addr: int
    end_addr: int
    func_size: int
    func_size_dec: int
    num_blocks: int
    cube_num: int
    vec_num: int
    not_func_node: int
    origin_name: str
    origin_name_legacy: bool
    origin_name_error: tuple[int, int]
    bin_buffer_error: tuple[int, int]
    computed_func_offset: int
    bin_dev_addr: int
    func_offset_zero: bool
    sk_symbol: str
    sk_symbol_bind: str | None
    sk_symbol_size: int
    sk_symbol_failed_offset: int
    dev_args: int
    error_node_idx: int
    exceeds_aicore_nums: int


class TraceValues(TypedDict, total=False):
    """A core's counter trace (§1.4.4): :data:`TRACE_HEADER`'s and :data:`TRACE_STEP`'s fields."""

    core_type: str
    op_state: int
    op_id: int
    legacy_exit: int
    not_executed: bool
    started: bool
    next_op: int
    next_is_first: bool
    no_next: tuple[int, int]
    running: int
    finished_op: int
    last_finished: int
    completed: bool
    unknown_state: int


class _SymbolOf(TypedDict):
    """What a symbol block is made with (its trace step's role and op id)."""

    role: str
    op_id: int


class SymbolValues(_SymbolOf, total=False):
    """The symbol lines of the op a trace step names."""

    core_type: str | None
    start_pc: int
    current_pc: int
    function_name: str
    no_name: bool


class CondValues(TypedDict, total=False):
    """A core's COND register lines (§1.4.5)."""

    arch: str
    reg_low_idx: int
    reg_high_idx: int
    unavailable: bool
    core_type: str | None
    value: int
    printed_state: int
    printed_index: int
    message: str
    message_index: int
    next_name: str
    current_name: str
    last_finished_name: str


class PreValues(TypedDict, total=False):
    """Incident-level values outside any table: the device entry arguments (A7/A8/A12) and the
    exception-register core count (A24)."""

    args_dev: int
    args_len: int
    total_size: int
    reg_core_num: int


class HeaderValues(TypedDict, total=False):
    """SkHeaderInfo: the offsets as printed (field names from the log) and the model identity."""

    aicQueOffset: int
    aivQueOffset: int
    counterOffset: int
    wsOffset: int
    dfxOffset: int
    nodeCnt: int
    totalSize: int
    model_scope_value: int
    model_idx: int
    sk_scope_id: int
    model_id: str
    original_model_ri: int


class QueueValues(TypedDict, total=False):
    """A task queue's header."""

    offset: int
    task_cnt: int


class DfxNodeValues(TypedDict, total=False):
    """A DfxInfo node row and the lines about it."""

    node: int
    bin_hdl: int
    func_hdl_ori: int
    aic_size: int
    aiv_size: int
    num_blocks: int
    cube_num: int
    vec_num: int
    name_kind: str
    origin_name: str
    name_error_ret: int


class BValues(TypedDict, total=False):
    """Callback B's dump-array lines."""

    array_count: int
    array_empty: bool
    fill_core_num: int
    fill_valid_dump: int


#: a field value made from the regex groups of one line
Convert = Callable[[Groups], object]


@dataclass(frozen=True, slots=True)
class FieldRule:
    """One field a line kind writes, and how its value is made from the line's regex groups."""

    field: str
    convert: Convert


def _int(s: str | None) -> int:
    return int(s or "0", 10)


def _hex(s: str | None) -> int:
    return int(s or "0", 16)


def _ptr(s: str | None) -> int:
    """A printed pointer: ``(nil)`` is 0."""
    return 0 if s is None or s == "(nil)" else int(s, 16)


def dec(i: int) -> Convert:
    """Group ``i`` as a decimal integer (absent = 0, as the parser always read it)."""
    return lambda g: _int(g[i])


def hexa(i: int) -> Convert:
    """Group ``i`` as a hexadecimal integer (``0x`` prefix included in the group)."""
    return lambda g: _hex(g[i])


def text(i: int) -> Convert:
    """Group ``i`` as text (absent = empty)."""
    return lambda g: g[i] or ""


def raw(i: int) -> Convert:
    """Group ``i`` as printed (None when the group did not take part)."""
    return lambda g: g[i]


def dec_pair(i: int, j: int) -> Convert:
    return lambda g: (_int(g[i]), _int(g[j]))


def const(value: object) -> Convert:
    """A value the kind itself states (``No sub kernel matched`` → ``no_match=True``)."""
    return lambda g: value


def _r(*rules: tuple[str, Convert]) -> tuple[FieldRule, ...]:
    return tuple(FieldRule(name, conv) for name, conv in rules)


#: ``[Core N]`` lines of §1.4.2/§1.4.3 (PC matched a child, or not)
CORE_LINE: Mapping[str, tuple[FieldRule, ...]] = {
    "c_model_id": _r(("model_idx", dec(0)), ("model_id", text(1)), ("sk_scope_id", dec(2))),
    "c_model_ri": _r(("model_idx", dec(0)), ("original_model_ri", hexa(1)), ("sk_scope_id", dec(2))),
    "c_no_match": _r(("no_match", const(True)), ("matched", const(False))),
    "c_core_type": _r(("core_type", raw(0))),
    "c_start_pc": _r(("start_pc", hexa(1)), ("start_pc_label", raw(0))),
    "c_current_pc": _r(("current_pc", hexa(0))),
    "c_found": _r(("matched", const(True)), ("node", dec(0)), ("entry", dec(1))),
    "c_entry_addr": _r(("entry_addr", hexa(0))),
    "c_end_addr": _r(("end_addr", hexa(0))),
    "c_func_size": _r(("func_size", hexa(0)), ("func_size_dec", dec(1))),
    "c_blocks": _r(("num_blocks", dec(0)), ("cube_num", dec(1)), ("vec_num", dec(2))),
    "c_not_func": _r(("not_func_node", dec(0))),
    "c_origin_name": _r(("origin_name", text(0)), ("origin_name_legacy", const(False))),
    "c_legacy_name": _r(("origin_name", text(0)), ("origin_name_legacy", const(True))),
    "c_bin_buffer": _r(("bin_buffer_error", dec_pair(0, 1))),
    "c_computed": _r(("computed_func_offset", hexa(0)), ("bin_dev_addr", hexa(3))),
    "c_offset_zero": _r(("func_offset_zero", const(True))),
    "c_bound": _r(("sk_symbol", text(0)), ("sk_symbol_bind", raw(1)), ("sk_symbol_size", hexa(2))),
    "c_symbol_failed": _r(("sk_symbol_failed_offset", hexa(2))),
    "c_dev_args": _r(("dev_args", hexa(1))),
}

#: the block key of the first six kinds: a repeat of it on one core id starts a new core block
CORE_KEY: Mapping[str, str] = {
    "c_model_id": "model_idx",
    "c_model_ri": "model_idx",
    "c_no_match": "no_match",
    "c_core_type": "core_type",
    "c_start_pc": "start_pc",
    "c_current_pc": "current_pc",
}

#: ``[Core N]`` counter-trace header lines (§1.4.4): they open the core's trace
TRACE_HEADER: Mapping[str, tuple[FieldRule, ...]] = {
    "t_type": _r(("core_type", raw(0)), ("op_state", dec(1)), ("op_id", dec(2))),
    "t_type_legacy": _r(
        ("core_type", raw(0)), ("op_state", dec(1)), ("legacy_exit", dec(2)), ("op_id", dec(3))
    ),
}

#: the counter-trace steps by opState (§1.4.4); ``finished_op`` is OP_FINISHED's own line
TRACE_STEP: Mapping[str, tuple[FieldRule, ...]] = {
    "t_not_executed": _r(("not_executed", const(True))),
    "t_started": _r(("started", const(True))),
    "t_next_first": _r(("next_op", dec(0)), ("next_is_first", const(True))),
    "t_no_next": _r(("no_next", dec_pair(0, 1))),
    "t_running": _r(("running", dec(0))),
    "t_finished": _r(("finished_op", dec(0))),
    "t_last": _r(("last_finished", dec(0))),
    "t_next": _r(("next_op", dec(0))),
    "t_completed": _r(("completed", const(True))),
    "t_unknown": _r(("unknown_state", dec(0))),
    "t_unknown_legacy": _r(("unknown_state", dec(0))),
}

#: trace steps that are followed by symbol lines of the op they name: (role, group of the op id)
TRACE_SYMBOL: Mapping[str, tuple[str, int]] = {
    "t_next_first": ("next_first", 0),
    "t_running": ("running", 0),
    "t_last": ("last_finished", 0),
    "t_next": ("next", 0),
}

__all__ = [
    "CORE_KEY",
    "CORE_LINE",
    "TRACE_HEADER",
    "TRACE_STEP",
    "TRACE_SYMBOL",
    "BValues",
    "CondValues",
    "CoreValues",
    "DfxNodeValues",
    "FieldRule",
    "Groups",
    "HeaderValues",
    "PreValues",
    "QueueValues",
    "SymbolValues",
    "TraceValues",
]
