"""What each handler line kind writes: a table of (line kind → fields, converters).

Why a table: the ``[Core N]`` lines (§1.4.2–§1.4.4) each write a fixed set of fields, converted from
fixed regex groups of their :class:`~skdbg.parsers.sk_lines.LineKind`. Written as data, the parser
keeps only the decisions that are not a plain copy (which block a line opens, conflicts, symbols),
and a test checks every key against the kinds :mod:`skdbg.parsers.sk_lines` defines. The order of
the rules is the order the fields are recorded in (it is the order of their sources).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

Groups = tuple[str | None, ...]
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

__all__ = ["CORE_KEY", "CORE_LINE", "TRACE_HEADER", "TRACE_STEP", "TRACE_SYMBOL", "FieldRule", "Groups"]
