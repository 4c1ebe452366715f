"""The lines of an open SK handler block: the table rows, the per-core lines, the COND and trace lines,
callback B's dump lines (:class:`_BlockLines`, a base of :class:`~skdbg.parsers.sk_parser._Parser`).

Why apart from the parser: the parser's own job is the stream (which block is open, when a message
starts a new incident, callback B's second anchor); once it has a block and a classified line, what the
line writes into that block is this module's, and it needs nothing of the stream but the result its
gaps and unrecognized lines go to.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skdbg.parsers.bulk import frozen_builder
from skdbg.parsers.common import Gap, Source, Unrecognized
from skdbg.parsers.cond import state_name
from skdbg.parsers.sk_builders import V, _CoreB, _Fields, _IncidentB, _TraceB
from skdbg.parsers.sk_fields import (
    CORE_KEY,
    CORE_LINE,
    TRACE_HEADER,
    TRACE_STEP,
    TRACE_SYMBOL,
    CondValues,
    DfxNodeValues,
    Groups,
    SymbolValues,
    _hex,
    _int,
    _ptr,
)
from skdbg.parsers.sk_records import AbortInfo, CounterEntry, QueueTask, SkHandlerResult, SkipDuplicate

if TYPE_CHECKING:
    from skdbg.parsers.sk_lines import Classified
    from skdbg.parsers.sk_parser import SkMessage

# the records made per table line, built without the frozen __init__ (same objects, see bulk.py)
_build_task = frozen_builder(QueueTask)
_build_counter = frozen_builder(CounterEntry)

# the source keys of the DfxInfo entry addresses (``entryAic[j]=``: Aic, else Aiv, as printed)
_ENTRY_AIC = tuple(f"entryAic[{j}]" for j in range(4))
_ENTRY_AIV = tuple(f"entryAiv[{j}]" for j in range(4))

# Field written by each ``[Core N]`` line kind: a repeat of the field on the same core id starts a new block.
CORE_FIELD = {
    "c_found": "node",
    "c_entry_addr": "entry_addr",
    "c_end_addr": "end_addr",
    "c_func_size": "func_size",
    "c_blocks": "num_blocks",
    "c_not_func": "not_func_node",
    "c_origin_name": "origin_name",
    "c_legacy_name": "origin_name",
    "c_bin_buffer": "bin_buffer_error",
    "c_computed": "computed_func_offset",
    "c_offset_zero": "func_offset_zero",
    "c_bound": "sk_symbol",
    "c_symbol_failed": "sk_symbol_failed_offset",
    "c_dev_args": "dev_args",
}


class _BlockLines:
    """What each kind of line writes into the open block: the methods of
    :class:`~skdbg.parsers.sk_parser._Parser` that take the open incident and a classified line (or, for
    the table rows, its kind, groups, source and text)."""

    #: where gaps and unrecognized lines go (the parser's result)
    result: SkHandlerResult

    def _put(self, f: _Fields[V], key: str, value: object, src: Source) -> None:
        if not f.put(key, value, src):
            self.result.gaps.append(
                Gap(
                    "conflicting_value",
                    f"{key} printed twice with different values ({f.values.get(key)!r} vs {value!r})",
                    src,
                )
            )

    def _abort(self, cur: _IncidentB, code: str, reason: str, ret: int | None, src: Source) -> None:
        if cur.abort is None:
            cur.abort = AbortInfo(src, code, reason, ret)

    def _pre(self, cur: _IncidentB, msg: SkMessage, c: Classified) -> None:
        k, g, src, text = c.kind, c.groups, msg.src, msg.text.strip()
        if k == "a7_args_dev":
            self._put(cur.pre, "args_dev", _ptr(g[0]), src)
        elif k == "a8_args_len":
            self._put(cur.pre, "args_len", _int(g[0]), src)
        elif k == "a12_total":
            self._put(cur.pre, "total_size", _int(g[0]), src)
        elif k == "a9_get_args_failed":
            self._abort(cur, "A9", text, _int(g[0]), src)
        elif k == "a10_no_args":
            self._abort(cur, "A10", text, None, src)
        elif k in ("a11_op_failed", "a11_direct"):
            self._abort(cur, "A11", text, _int(g[1]), src)
        elif k == "a13_total_exceeds":
            self._abort(cur, "A13", text, None, src)
        elif k in ("a14_ge", "a14_end"):
            self._abort(cur, "A14", text, None, src)

    # ------------------------------------------------------------------ table lines
    # Each takes a line of its kinds (True) or leaves it to the rest of _dispatch_into (False, nothing
    # changed). The bulk path (_feed_run) calls the same functions, so a table line has one meaning.
    # ``int(g[i] or "0")`` and ``int(g[i] or "0", 16)`` are _int and _hex written out (once per row).

    def _queue_task(self, cur: _IncidentB, k: str, g: Groups, src: Source, text: str) -> bool:
        if cur.section != "queue" or cur.queue_key is None:
            return False
        cur.queues[cur.queue_key][2].append(
            _build_task(
                src, int(g[0] or "0"), int(g[1] or "0"), g[2] or "", int(g[3] or "0"), int(g[4] or "0", 16)
            )
        )
        return True

    def _counter(self, cur: _IncidentB, k: str, g: Groups, src: Source, text: str) -> bool:
        if cur.counters is None:
            cur.counters = (src, 0, [])
            self.result.gaps.append(Gap("counter_header_missing", "counter line without A18 header", src))
        st = _int(g[2])
        legacy = k == "counter_legacy"
        cur.counters[2].append(
            _build_counter(
                src, _int(g[0]), _int(g[1]), st, state_name(st), _int(g[3]) if legacy else None, legacy
            )
        )
        return True

    def _dfx_node(self, cur: _IncidentB, k: str, g: Groups, src: Source, text: str) -> bool:
        if cur.dfx is None:
            cur.dfx = (src, 0, 0, [])
            self.result.gaps.append(Gap("dfx_header_missing", "DfxInfo node line without A19 header", src))
        values: DfxNodeValues = {
            "node": int(g[0] or "0"),
            "bin_hdl": int(g[1] or "0", 16),
            "func_hdl_ori": int(g[2] or "0", 16),
            "aic_size": int(g[3] or "0", 16),
            "aiv_size": int(g[4] or "0", 16),
        }
        if k == "dfx_node":
            values["num_blocks"] = int(g[5] or "0")
            values["cube_num"] = int(g[6] or "0")
            values["vec_num"] = int(g[7] or "0")
        # a new node: every key is new, each from this line (what put would record)
        cur.dfx[3].append((src, _Fields.of(values, dict.fromkeys(values, src)), [0, 0, 0, 0], [0, 0, 0, 0]))
        cur.section = "dfx"
        return True

    def _dfx_sub(self, cur: _IncidentB, k: str, g: Groups, src: Source, text: str) -> bool:
        """A line about the last DfxInfo node (entry addresses, its name): only inside the table."""
        if cur.section != "dfx" or cur.dfx is None or not cur.dfx[3]:
            return False
        nsrc, f, aic, aiv = cur.dfx[3][-1]
        if k == "entry_addr":
            j = int(g[1] or "0")
            if 0 <= j < 4:
                if g[0] == "Aic":
                    aic[j] = int(g[2] or "0", 16)
                    f.srcs.setdefault(_ENTRY_AIC[j], src)
                else:
                    aiv[j] = int(g[2] or "0", 16)
                    f.srcs.setdefault(_ENTRY_AIV[j], src)
            else:
                self.result.unrecognized.append(Unrecognized(src, text, "sk_handler:dfx:entry_index"))
            return True
        node = f.values.get("node")
        if k in ("origin_name_failed", "node_not_func", "legacy_name_failed") and _int(g[0]) != node:
            self.result.gaps.append(
                Gap("dfx_node_mismatch", f"line names node {g[0]} inside node {node}", src)
            )
        if k == "origin_name":
            self._put(f, "name_kind", "origin", src)
            self._put(f, "origin_name", g[0] or "", src)
        elif k == "function_name":
            cur.sigs.append((0, 2, "dfx_legacy_name"))
            self._put(f, "name_kind", "legacy", src)
            self._put(f, "origin_name", g[0] or "", src)
        elif k in ("origin_name_failed", "legacy_name_failed"):
            self._put(f, "name_kind", "failed", src)
            self._put(f, "name_error_ret", _int(g[1]), src)
        elif k == "node_not_func":
            self._put(f, "name_kind", "not_func", src)
        return True

    # ------------------------------------------------------------------ per-core lines
    def _core_for(self, cores: list[_CoreB], core_id: int, key: str, src: Source, callback: str) -> _CoreB:
        """Positional attribution: continue the last core unless the id changes or the field repeats."""
        last = cores[-1] if cores else None
        if last is not None and last.core_id == core_id and not self._has(last, key):
            return last
        nc = _CoreB(src, core_id, callback)
        cores.append(nc)
        return nc

    @staticmethod
    def _has(core: _CoreB, key: str) -> bool:
        if key.startswith("trace"):
            return core.trace is not None and key == "trace"
        if key.startswith("cond"):
            return core.cond is not None and key == "cond"
        return core.f.has(key)

    def _core_line(
        self, cur: _IncidentB, cores: list[_CoreB], cb: str, msg: SkMessage, c: Classified
    ) -> None:
        k, g, src, text = c.kind, c.groups, msg.src, msg.text.strip()
        last = cores[-1] if cores else None
        if c.core is None:
            # core-less lines: attributed to the block they are printed in (§1.8, rows 31/33)
            if k == "cond_arch":
                cur.pending_arch = (g[0] or "", _int(g[1]), _int(g[2]), src)
                return
            if k == "core_exceeds":
                core = self._core_for(cores, _int(g[0]), "exceeds_aicore_nums", src, cb)
                core.f.put("exceeds_aicore_nums", _int(g[1]), src)
                return
            if last is None:
                self.result.unrecognized.append(
                    Unrecognized(src, msg.text, f"sk_handler:{cur.section}:no_core")
                )
                return
            if k == "error_node_idx":
                if not last.f.put("error_node_idx", _int(g[0]), src):
                    self.result.gaps.append(
                        Gap("conflicting_value", "errorNodeIdx_ printed twice for one core", src)
                    )
            elif k in ("origin_name_failed", "legacy_name_failed"):
                self._put(last.f, "origin_name_error", (_int(g[0]), _int(g[1])), src)
                if last.f.has("node") and last.f.values.get("node") != _int(g[0]):
                    self.result.gaps.append(Gap("core_node_mismatch", f"name failure for node {g[0]}", src))
            elif k in ("sym_header", "function_name", "no_function_name", "lookup"):
                self._trace_symbol_line(last, msg, c)
            elif k == "symtab":
                last.notes.append((text, src))
            return
        cid = c.core
        if k.startswith("t_"):
            self._trace_line(cur, cores, cb, msg, c, in_all_core=False)
            return
        if k.startswith("k_"):
            self._cond_line(cur, cores, cb, msg, c)
            return
        core = self._core_for(cores, cid, CORE_KEY.get(k) or CORE_FIELD.get(k, k), src, cb)
        for rule in CORE_LINE.get(k, ()):
            core.f.put(rule.field, rule.convert(g), src)

    def _trace_line(
        self,
        cur: _IncidentB,
        cores: list[_CoreB],
        cb: str,
        msg: SkMessage,
        c: Classified,
        *,
        in_all_core: bool,
    ) -> None:
        k, g, src = c.kind, c.groups, msg.src
        assert c.core is not None
        cid = c.core
        if k in TRACE_HEADER:
            core = self._core_for(cores, cid, "trace", src, cb)
            t = _TraceB(src, cid, in_all_core)
            for rule in TRACE_HEADER[k]:
                t.f.put(rule.field, rule.convert(g), src)
            core.trace = t
            return
        last = cores[-1] if cores else None
        if last is None or last.core_id != cid or last.trace is None:
            core = self._core_for(cores, cid, "trace_orphan", src, cb)
            core.trace = _TraceB(src, cid, in_all_core)
            self.result.gaps.append(
                Gap("trace_header_missing", f"trace line for core {cid} without Type= line", src)
            )
            last = core
        assert last.trace is not None
        self._trace_step(last.trace, k, g, src)

    def _trace_step(self, t: _TraceB, k: str, g: tuple[str | None, ...], src: Source) -> None:
        for rule in TRACE_STEP.get(k, ()):
            t.f.put(rule.field, rule.convert(g), src)
        sym = TRACE_SYMBOL.get(k)
        if sym is not None:
            self._new_symbol(t, sym[0], _int(g[sym[1]]), src)

    @staticmethod
    def _new_symbol(t: _TraceB, role: str, op_id: int, src: Source) -> None:
        # made with the two keys a symbol block always has (SymbolValues requires them)
        values: SymbolValues = {"role": role, "op_id": op_id}
        t.symbols.append((_Fields.of(values, {"role": src, "op_id": src}), []))

    def _trace_symbol_line(self, core: _CoreB, msg: SkMessage, c: Classified) -> None:
        k, g, src, text = c.kind, c.groups, msg.src, msg.text.strip()
        t = core.trace
        sym = t.symbol() if t is not None else None
        if sym is None:
            if k == "lookup":
                core.notes.append((text, src))  # COND name lookups (§1.4.5) and B lookups
                return
            self.result.unrecognized.append(
                Unrecognized(src, msg.text, "sk_handler:symbol_without_trace_step")
            )
            return
        f, lookups = sym
        if k == "lookup":
            if f.has("function_name") or f.has("no_name"):
                core.notes.append((text, src))
            else:
                lookups.append(text)
        elif k == "sym_header":
            f.put("core_type", g[1], src)
            f.put("start_pc", _hex(g[2]), src)
            f.put("current_pc", _hex(g[3]), src)
        elif k == "function_name":
            if not f.put("function_name", g[0] or "", src):
                self.result.unrecognized.append(
                    Unrecognized(src, msg.text, "sk_handler:duplicate_symbol_name")
                )
        elif k == "no_function_name":
            f.put("no_name", True, src)

    def _cond_line(
        self, cur: _IncidentB, cores: list[_CoreB], cb: str, msg: SkMessage, c: Classified
    ) -> None:
        k, g, src = c.kind, c.groups, msg.src
        assert c.core is not None
        if k in ("k_unavailable", "k_value"):
            core = self._core_for(cores, c.core, "cond", src, cb)
            f: _Fields[CondValues] = _Fields()
            core.cond = f
            if cur.pending_arch is not None:
                arch, lo, hi, asrc = cur.pending_arch
                f.put("arch", arch, asrc)
                f.put("reg_low_idx", lo, asrc)
                f.put("reg_high_idx", hi, asrc)
                cur.pending_arch = None
            if k == "k_unavailable":
                f.put("unavailable", True, src)
            else:
                f.put("core_type", g[0], src)
                f.put("value", _hex(g[1]), src)
                f.put("printed_state", _int(g[2]), src)
                f.put("printed_index", _int(g[3]), src)
            return
        last = cores[-1] if cores else None
        if last is None or last.core_id != c.core or last.cond is None:
            self.result.unrecognized.append(Unrecognized(src, msg.text, "sk_handler:cond_without_value"))
            return
        f = last.cond
        msgs = {
            "k_origin": "origin",
            "k_launched": "launched",
            "k_running": "running",
            "k_finished": "finished",
            "k_completed": "completed",
            "k_unknown": "unknown",
        }
        if k in msgs:
            f.put("message", msgs[k], src)
            if k in ("k_launched", "k_running", "k_finished"):
                f.put("message_index", _int(g[0]), src)
            elif k == "k_unknown":
                f.put("message_index", _int(g[1]), src)
        elif k == "k_next_name":
            f.put("next_name", g[0] or "", src)
        elif k == "k_current_name":
            f.put("current_name", g[0] or "", src)
        elif k == "k_last_name":
            f.put("last_finished_name", g[0] or "", src)

    def _all_core_line(self, cur: _IncidentB, msg: SkMessage, c: Classified) -> bool:
        assert cur.all_core is not None
        traces = cur.all_core[2]
        k, g, src = c.kind, c.groups, msg.src
        if k in ("t_type", "t_type_legacy") and c.core is not None:
            t = _TraceB(src, c.core, True)
            t.f.put("core_type", g[0], src)
            t.f.put("op_state", _int(g[1]), src)
            if k == "t_type":
                t.f.put("op_id", _int(g[2]), src)
            else:
                t.f.put("legacy_exit", _int(g[2]), src)
                t.f.put("op_id", _int(g[3]), src)
            traces.append(t)
            return True
        if k.startswith("t_") and c.core is not None:
            if traces and traces[-1].core_id == c.core:
                self._trace_step(traces[-1], k, g, src)
            else:
                self.result.unrecognized.append(Unrecognized(src, msg.text, "sk_handler:allcore:orphan"))
            return True
        if k in ("sym_header", "function_name", "no_function_name", "lookup") and traces:
            holder = _CoreB(src, traces[-1].core_id, "A")
            holder.trace = traces[-1]
            self._trace_symbol_line(holder, msg, c)
            cur.notes.extend(holder.notes)
            return True
        return False

    # ------------------------------------------------------------------ callback B
    def _in_b(self, cur: _IncidentB, msg: SkMessage, c: Classified) -> None:
        b = cur.b
        assert b is not None
        k, g, src, text = c.kind, c.groups, msg.src, msg.text.strip()
        if k in ("a5_anchor", "a5_anchor_d0"):
            if b.anchor is None:
                b.anchor = src
                b.entry = g[0]
            if cur.entry is not None and g[0] != cur.entry:
                self.result.gaps.append(
                    Gap(
                        "callback_b_entry_mismatch",
                        f"callback B names {g[0]!r}, callback A {cur.entry!r}",
                        src,
                    )
                )
            return
        if k == "b_array_header":
            b.f.put("array_count", _int(g[0]), src)
            b.in_tensor = False
            return
        if k == "b_array_empty":
            b.f.put("array_empty", True, src)
            return
        if k == "b_record":
            b.records.append((src, _int(g[0]), [], []))
            b.in_tensor = False
            return
        if k == "b_tensor" and b.records:
            b.records[-1][3].append((src, _int(g[0]), []))
            b.in_tensor = True
            return
        if k in ("b_field", "b_tensor_field") and b.records:
            label, value = (g[0] or ""), (g[1] or "").strip()
            rec = b.records[-1]
            if b.in_tensor and rec[3] and k == "b_tensor_field":
                rec[3][-1][2].append((label, value))
            elif k == "b_field":
                rec[2].append((label, value))
            else:
                self.result.unrecognized.append(Unrecognized(src, msg.text, "sk_handler:b:field"))
            return
        if k == "b_skip_dup":
            b.skips.append(SkipDuplicate(src, _hex(g[0]), _int(g[1]), _int(g[2])))
            return
        if k == "b_fill_ok":
            b.f.put("fill_core_num", _int(g[0]), src)
            b.f.put("fill_valid_dump", _int(g[1]), src)
            return
        if k == "b_failed":
            if b.failure is None:
                b.failure = text
            return
        if k in (
            "a23_reg_failed",
            "a9_get_args_failed",
            "a10_no_args",
            "a11_op_failed",
            "a11_direct",
            "a13_total_exceeds",
            "a14_ge",
            "a14_end",
        ):
            if b.failure is None:
                b.failure = text
            return
        if k == "separator":
            return
        if c.core is not None or k in (
            "error_node_idx",
            "cond_arch",
            "sym_header",
            "function_name",
            "no_function_name",
            "symtab",
            "origin_name_failed",
            "legacy_name_failed",
            "core_exceeds",
        ):
            self._core_line(cur, b.cores, "B", msg, c)
            return
        b.notes.append((text, src))
