"""The SK handler parser's blocks made records: an :class:`~skdbg.parsers.sk_records.Incident` per fault,
with its dialect (D0–D5, triage.md §3.1.3) and what the block lacks.

Why apart from the parser (:mod:`skdbg.parsers.sk_parser`): the parser's job is which block each line
goes to; this one's is what a finished block says. It runs once per incident, when the parser is done
(``finish``, after the last message).
"""

from __future__ import annotations

from skdbg.parsers.bulk import frozen_builder
from skdbg.parsers.common import Gap, Unrecognized
from skdbg.parsers.cond import decode_cond, state_name
from skdbg.parsers.sk_builders import _CoreB, _IncidentB, _TraceB
from skdbg.parsers.sk_records import (
    DIALECTS,
    AllCoreTrace,
    CallbackB,
    CondInfo,
    CoreTrace,
    CounterTable,
    DfxNode,
    DfxTable,
    DumpRecord,
    DumpTensor,
    ExceptionCore,
    Incident,
    ModelMap,
    SkHandlerResult,
    SkHeaderInfo,
    TaskQueue,
    TraceSymbol,
)

#: DfxNode without the frozen ``__init__`` (2,500 nodes on the bench model; see bulk.py)
_build_dfx_node = frozen_builder(DfxNode)


def dialect(b: _IncidentB) -> tuple[str, tuple[str, ...]]:
    """The dialect (D0–D5, triage.md §3.1.3) the block's signature lines allow, and the candidates."""
    lo, hi = 0, 5
    for s_lo, s_hi, _why in b.sigs:
        lo, hi = max(lo, s_lo), min(hi, s_hi)
    for core in b.cores:
        if core.f.values.get("matched") is True:
            label = core.f.values.get("start_pc_label")
            if label == "startPC":
                lo, hi = max(lo, 1), min(hi, 1)
            elif label == "StartPC":
                lo = max(lo, 2)
    # D4+ print a COND line for every exception core (§1.4.5); a PC block without any COND → ≤ D3.
    has_block = any(c.f.has("current_pc") or c.f.has("matched") for c in b.cores)
    if has_block and b.abort is None and not any(c.cond is not None for c in b.cores):
        hi = min(hi, 3)
    if not b.sigs and b.anchor is None:
        return "unknown", ()
    if lo > hi:
        return "unknown", ()
    cands = tuple(DIALECTS[lo : hi + 1])
    if lo == hi:
        return DIALECTS[lo], cands
    return "unknown", cands


def freeze_trace(t: _TraceB, guessed: bool) -> CoreTrace:
    """A core's counter trace as its record (``guessed``: the core type was inferred, T7)."""
    f = t.f
    syms = []
    for sf, lookups in t.symbols:
        syms.append(
            TraceSymbol(
                src=sf.srcs["role"],
                role=sf.values["role"],
                op_id=sf.values["op_id"],
                core_type=sf.values.get("core_type"),
                start_pc=sf.values.get("start_pc"),
                current_pc=sf.values.get("current_pc"),
                function_name=sf.values.get("function_name"),
                no_name=bool(sf.values.get("no_name", False)),
                lookups=tuple(lookups),
            )
        )
    st = f.values.get("op_state", 0)
    return CoreTrace(
        src=t.src,
        core_id=t.core_id,
        core_type=f.values.get("core_type", ""),
        core_type_guessed=guessed,
        op_state=st,
        state_name=state_name(st),
        op_id=f.values.get("op_id", 0),
        legacy_exit=f.values.get("legacy_exit"),
        not_executed=bool(f.values.get("not_executed", False)),
        started=bool(f.values.get("started", False)),
        running=f.values.get("running"),
        finished_op=f.values.get("finished_op"),
        last_finished=f.values.get("last_finished"),
        next_op=f.values.get("next_op"),
        next_is_first=bool(f.values.get("next_is_first", False)),
        no_next=f.values.get("no_next"),
        completed=bool(f.values.get("completed", False)),
        unknown_state=f.values.get("unknown_state"),
        symbols=tuple(syms),
        sources=f.sources(),
    )


def freeze_core(core: _CoreB, order: int, result: SkHandlerResult) -> ExceptionCore:
    """A core block as its record; a COND value whose printed fields disagree is a gap of ``result``."""
    f = core.f
    cond: CondInfo | None = None
    if core.cond is not None:
        cf = core.cond
        value = cf.values.get("value")
        cond = CondInfo(
            src=cf.srcs.get("value") or cf.srcs.get("unavailable") or core.src,
            core_id=core.core_id,
            core_type=cf.values.get("core_type"),
            arch=cf.values.get("arch"),
            reg_low_idx=cf.values.get("reg_low_idx"),
            reg_high_idx=cf.values.get("reg_high_idx"),
            unavailable=bool(cf.values.get("unavailable", False)),
            value=value,
            printed_state=cf.values.get("printed_state"),
            printed_index=cf.values.get("printed_index"),
            decoded=decode_cond(value) if value is not None else None,
            message=cf.values.get("message"),
            message_index=cf.values.get("message_index"),
            next_name=cf.values.get("next_name"),
            current_name=cf.values.get("current_name"),
            last_finished_name=cf.values.get("last_finished_name"),
            sources=cf.sources(),
        )
        if cond.decoded is not None and (
            cond.decoded.state != cond.printed_state or cond.decoded.op_index != cond.printed_index
        ):
            result.gaps.append(
                Gap("cond_print_mismatch", "printed opState/opIndex differ from the value", cond.src)
            )
    matched = f.values.get("matched")
    return ExceptionCore(
        src=core.src,
        order=order,
        callback=core.callback,
        core_id=core.core_id,
        matched=matched,
        core_type=f.values.get("core_type"),
        model_idx=f.values.get("model_idx"),
        model_id=f.values.get("model_id"),
        original_model_ri=f.values.get("original_model_ri"),
        sk_scope_id=f.values.get("sk_scope_id"),
        start_pc=f.values.get("start_pc"),
        start_pc_label=f.values.get("start_pc_label"),
        current_pc=f.values.get("current_pc"),
        node=f.values.get("node"),
        entry=f.values.get("entry"),
        entry_addr=f.values.get("entry_addr"),
        end_addr=f.values.get("end_addr"),
        func_size=f.values.get("func_size"),
        func_size_dec=f.values.get("func_size_dec"),
        num_blocks=f.values.get("num_blocks"),
        cube_num=f.values.get("cube_num"),
        vec_num=f.values.get("vec_num"),
        not_func_node=f.values.get("not_func_node"),
        origin_name=f.values.get("origin_name"),
        origin_name_legacy=bool(f.values.get("origin_name_legacy", False)),
        origin_name_error=f.values.get("origin_name_error"),
        bin_buffer_error=f.values.get("bin_buffer_error"),
        computed_func_offset=f.values.get("computed_func_offset"),
        bin_dev_addr=f.values.get("bin_dev_addr"),
        func_offset_zero=bool(f.values.get("func_offset_zero", False)),
        sk_symbol=f.values.get("sk_symbol"),
        sk_symbol_bind=f.values.get("sk_symbol_bind"),
        sk_symbol_size=f.values.get("sk_symbol_size"),
        sk_symbol_failed_offset=f.values.get("sk_symbol_failed_offset"),
        dev_args=f.values.get("dev_args"),
        error_node_idx=f.values.get("error_node_idx"),
        exceeds_aicore_nums=f.values.get("exceeds_aicore_nums"),
        trace=freeze_trace(core.trace, False) if core.trace is not None else None,
        cond=cond,
        notes=tuple(core.notes),
        sources=f.sources(),
    )


def freeze_incident(b: _IncidentB, result: SkHandlerResult) -> Incident:
    """The incident under construction as its record; what it lacks goes to ``result`` as gaps and
    unrecognized lines."""
    name, cands = dialect(b)
    guessed = name != "D5"  # T7: D0–D4 (and unknown) label all-core traces by coreId < 25
    header: SkHeaderInfo | None = None
    if b.header is not None:
        h = b.header
        header = SkHeaderInfo(
            src=b.header_src or b.src,
            aic_que_offset=h.values.get("aicQueOffset"),
            aiv_que_offset=h.values.get("aivQueOffset"),
            counter_offset=h.values.get("counterOffset"),
            ws_offset=h.values.get("wsOffset"),
            dfx_offset=h.values.get("dfxOffset"),
            node_cnt=h.values.get("nodeCnt"),
            total_size=h.values.get("totalSize"),
            model_scope_value=h.values.get("model_scope_value"),
            model_idx=h.values.get("model_idx"),
            sk_scope_id=h.values.get("sk_scope_id"),
            model_id=h.values.get("model_id"),
            original_model_ri=h.values.get("original_model_ri"),
            sources=h.sources(),
        )
    queues: dict[str, TaskQueue] = {}
    for ct, (qsrc, qf, tasks) in b.queues.items():
        queues[ct] = TaskQueue(qsrc, ct, qf.values.get("offset", 0), qf.values.get("task_cnt"), tuple(tasks))
    counters = None
    if b.counters is not None:
        counters = CounterTable(b.counters[0], b.counters[1], tuple(b.counters[2]))
    dfx = None
    if b.dfx is not None:
        nodes = []
        for nsrc, nf, aic, aiv in b.dfx[3]:
            v = nf.values.get
            nodes.append(
                _build_dfx_node(
                    nsrc,
                    v("node"),
                    v("bin_hdl"),
                    v("func_hdl_ori"),
                    v("aic_size"),
                    v("aiv_size"),
                    v("num_blocks"),
                    v("cube_num"),
                    v("vec_num"),
                    v("name_kind"),
                    v("origin_name"),
                    v("name_error_ret"),
                    (aic[0], aic[1], aic[2], aic[3]),
                    (aiv[0], aiv[1], aiv[2], aiv[3]),
                    nf.sources(),
                )
            )
        dfx = DfxTable(b.dfx[0], b.dfx[1], b.dfx[2], tuple(nodes))
        if len(nodes) != b.dfx[2]:
            result.gaps.append(
                Gap("dfx_node_count", f"nodeCnt={b.dfx[2]} but {len(nodes)} node lines", b.dfx[0])
            )
    cores = tuple(freeze_core(c, i, result) for i, c in enumerate(b.cores))
    model_map = None
    if b.model_map is not None:
        model_map = ModelMap(b.model_map[0], b.model_map[1], b.model_map[2], tuple(b.model_map[3]))
    all_cores = None
    if b.all_core is not None:
        all_cores = AllCoreTrace(
            b.all_core[0],
            b.all_core[1],
            guessed,
            tuple(freeze_trace(t, guessed) for t in b.all_core[2]),
        )
    cb = None
    if b.b is not None:
        bb = b.b
        records = tuple(
            DumpRecord(rsrc, idx, tuple(flds), tuple(DumpTensor(ts, ti, tuple(tf)) for ts, ti, tf in tens))
            for rsrc, idx, flds, tens in bb.records
        )
        cb = CallbackB(
            src=bb.src,
            anchor=bb.anchor,
            entry=bb.entry,
            array_count=bb.f.values.get("array_count"),
            array_empty=bool(bb.f.values.get("array_empty", False)),
            records=records,
            skipped_duplicates=tuple(bb.skips),
            fill_core_num=bb.f.values.get("fill_core_num"),
            fill_valid_dump=bb.f.values.get("fill_valid_dump"),
            cores=tuple(freeze_core(c, i, result) for i, c in enumerate(bb.cores)),
            failure=bb.failure,
            notes=tuple(bb.notes),
        )
    reason: str | None = None
    if b.abort is not None:
        reason = f"{b.abort.code}: {b.abort.reason}"
    elif b.tentative:
        reason = "unresolved second anchor"
    complete = b.abort is None
    if b.anchor is None and b.has_a_content():
        result.gaps.append(
            Gap(
                "anchor_missing",
                "handler block without the A5 anchor (plog-only SK_DLOGE in AOT@index, or rotated plog)",
                b.src,
                collect="read the plog of the same pid for the anchor",
            )
        )
    if b.pending_arch is not None:
        result.unrecognized.append(
            Unrecognized(
                b.pending_arch[3], "GetCondRegValue line without a following COND line", "sk_handler:cond"
            )
        )
    pre = b.pre
    entry = b.entry
    op_trace = b.op_trace
    if op_trace is None and entry is not None:
        op_trace = "op_trace" in entry  # D0 prints no op_trace=; the handler derives it the same way (§2)
    return Incident(
        src=b.src,
        anchor=b.anchor,
        entry=entry,
        op_trace=op_trace,
        dialect=name,
        dialect_candidates=cands,
        pid=b.pid,
        first_ts=b.first_ts,
        last_ts=b.last_ts,
        origins=tuple(b.origins),
        files=tuple(b.files),
        args_dev=pre.values.get("args_dev"),
        args_len=pre.values.get("args_len"),
        total_size=pre.values.get("total_size"),
        reg_core_num=pre.values.get("reg_core_num"),
        header=header,
        aic_queue=queues.get("AIC"),
        aiv_queue=queues.get("AIV"),
        counters=counters,
        dfx=dfx,
        cores=cores,
        model_map=model_map,
        model_id_errors=tuple(b.model_errors),
        all_cores=all_cores,
        callback_b=cb,
        complete=complete,
        abort=b.abort,
        incomplete_reason=reason,
        notes=tuple(b.notes),
        line_count=b.line_count,
        sources=pre.sources(),
    )


__all__ = ["dialect", "freeze_core", "freeze_incident", "freeze_trace"]
