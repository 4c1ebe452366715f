"""Tables of SK incidents for ``inspect``/``--format csv`` (the output edge): incidents, exception cores,
the DfxInfo table and the counter table. pandas is imported by :mod:`skdbg.parsers.frames` only when a
table is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from skdbg.parsers.frames import rows_frame

if TYPE_CHECKING:
    import pandas as pd
from skdbg.parsers.sk_records import Incident

# --------------------------------------------------------------------------------------------- frames


def incidents_frame(incidents: Iterable[Incident]) -> pd.DataFrame:

    rows = []
    for i, inc in enumerate(incidents):
        rows.append(
            {
                "incident": i,
                "file": inc.src.file,
                "line": inc.src.line,
                "entry": inc.entry,
                "dialect": inc.dialect,
                "pid": inc.pid,
                "first_ts": inc.first_ts,
                "last_ts": inc.last_ts,
                "op_trace": inc.op_trace,
                "complete": inc.complete,
                "incomplete_reason": inc.incomplete_reason,
                "node_cnt": inc.node_cnt,
                "core_count": len(inc.cores),
                "sk_scope_id": inc.sk_scope_id,
                "model_idx": inc.model_idx,
                "model_id": inc.model_id,
                "callback_b": inc.callback_b is not None,
                "origins": ",".join(inc.origins),
            }
        )
    cols = [
        "incident",
        "file",
        "line",
        "entry",
        "dialect",
        "pid",
        "first_ts",
        "last_ts",
        "op_trace",
        "complete",
        "incomplete_reason",
        "node_cnt",
        "core_count",
        "sk_scope_id",
        "model_idx",
        "model_id",
        "callback_b",
        "origins",
    ]
    frame: pd.DataFrame = rows_frame(rows, cols)
    return frame


def cores_frame(incidents: Iterable[Incident]) -> pd.DataFrame:

    rows = []
    for i, inc in enumerate(incidents):
        all_cores = list(inc.cores) + (list(inc.callback_b.cores) if inc.callback_b is not None else [])
        for c in all_cores:
            cond = c.cond
            rows.append(
                {
                    "incident": i,
                    "callback": c.callback,
                    "order": c.order,
                    "core_id": c.core_id,
                    "core_type": c.core_type,
                    "matched": c.matched,
                    "start_pc": c.start_pc,
                    "current_pc": c.current_pc,
                    "pc_unknown": c.pc_unknown,
                    "node": c.node,
                    "entry": c.entry,
                    "entry_addr": c.entry_addr,
                    "end_addr": c.end_addr,
                    "func_size": c.func_size,
                    "origin_name": c.origin_name,
                    "sk_symbol": c.sk_symbol,
                    "sk_symbol_bind": c.sk_symbol_bind,
                    "error_node_idx": c.error_node_idx,
                    "trace_state": c.trace.op_state if c.trace is not None else None,
                    "trace_op_id": c.trace.op_id if c.trace is not None else None,
                    "cond_value": cond.value if cond is not None else None,
                    "cond_unavailable": cond.unavailable if cond is not None else None,
                    "cond_state": cond.decoded.state
                    if cond is not None and cond.decoded is not None
                    else None,
                    "cond_index": cond.decoded.op_index
                    if cond is not None and cond.decoded is not None
                    else None,
                    "cond_scope_id": cond.decoded.scope_id
                    if cond is not None and cond.decoded is not None
                    else None,
                    "file": c.src.file,
                    "line": c.src.line,
                }
            )
    cols = [
        "incident",
        "callback",
        "order",
        "core_id",
        "core_type",
        "matched",
        "start_pc",
        "current_pc",
        "pc_unknown",
        "node",
        "entry",
        "entry_addr",
        "end_addr",
        "func_size",
        "origin_name",
        "sk_symbol",
        "sk_symbol_bind",
        "error_node_idx",
        "trace_state",
        "trace_op_id",
        "cond_value",
        "cond_unavailable",
        "cond_state",
        "cond_index",
        "cond_scope_id",
        "file",
        "line",
    ]
    frame: pd.DataFrame = rows_frame(rows, cols)
    return frame


def dfx_frame(incidents: Iterable[Incident]) -> pd.DataFrame:

    rows = []
    for i, inc in enumerate(incidents):
        if inc.dfx is None:
            continue
        for n in inc.dfx.nodes:
            row: dict[str, Any] = {
                "incident": i,
                "node": n.node,
                "bin_hdl": n.bin_hdl,
                "func_hdl_ori": n.func_hdl_ori,
                "aic_size": n.aic_size,
                "aiv_size": n.aiv_size,
                "num_blocks": n.num_blocks,
                "cube_num": n.cube_num,
                "vec_num": n.vec_num,
                "name_kind": n.name_kind,
                "origin_name": n.origin_name,
                "name_error_ret": n.name_error_ret,
                "is_func": n.is_func,
            }
            for j in range(4):
                row[f"entry_aic{j}"] = n.entry_aic[j]
                row[f"entry_aiv{j}"] = n.entry_aiv[j]
            row["file"] = n.src.file
            row["line"] = n.src.line
            rows.append(row)
    cols = [
        "incident",
        "node",
        "bin_hdl",
        "func_hdl_ori",
        "aic_size",
        "aiv_size",
        "num_blocks",
        "cube_num",
        "vec_num",
        "name_kind",
        "origin_name",
        "name_error_ret",
        "is_func",
    ]
    cols += [f"entry_{t}{j}" for j in range(4) for t in ("aic", "aiv")] + ["file", "line"]
    frame: pd.DataFrame = rows_frame(rows, cols)
    return frame


def counters_frame(incidents: Iterable[Incident]) -> pd.DataFrame:

    rows = []
    for i, inc in enumerate(incidents):
        if inc.counters is None:
            continue
        for e in inc.counters.entries:
            rows.append(
                {
                    "incident": i,
                    "core": e.core,
                    "index": e.index,
                    "op_state": e.op_state,
                    "state_name": e.state_name,
                    "exit": e.exit,
                    "legacy": e.legacy,
                    "file": e.src.file,
                    "line": e.src.line,
                }
            )
    cols = ["incident", "core", "index", "op_state", "state_name", "exit", "legacy", "file", "line"]
    frame: pd.DataFrame = rows_frame(rows, cols)
    return frame
