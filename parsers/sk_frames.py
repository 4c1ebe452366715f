"""Tables of SK incidents for ``inspect``/``--format csv`` (the output edge): incidents, exception cores,
the DfxInfo table and the counter table. Each is a column spec read by
:func:`skdbg.parsers.frames.records_frame` (which imports pandas only when a table is built); addresses
and PCs stay exact integers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from skdbg.parsers.frames import SRC_COLS, Col, records_frame
from skdbg.parsers.sk_records import CondInfo, DfxNode, ExceptionCore, Incident

if TYPE_CHECKING:
    import pandas as pd

# --------------------------------------------------------------------------------------------- specs

INCIDENT_COLS = (
    Col("incident"),
    *SRC_COLS,
    Col("entry"),
    Col("dialect"),
    Col("pid"),
    Col("first_ts"),
    Col("last_ts"),
    Col("op_trace"),
    Col("complete"),
    Col("incomplete_reason"),
    Col("node_cnt"),
    Col("core_count", lambda inc: len(inc.cores)),
    Col("sk_scope_id"),
    Col("model_idx"),
    Col("model_id"),
    Col("callback_b", lambda inc: inc.callback_b is not None),
    Col("origins", lambda inc: ",".join(inc.origins)),
)


def _decoded(name: str) -> Any:
    """A field of the core's COND decode (None without a COND block or a decode)."""

    def get(c: ExceptionCore) -> Any:
        cond: CondInfo | None = c.cond
        return getattr(cond.decoded, name) if cond is not None and cond.decoded is not None else None

    return get


CORE_COLS = (
    Col("incident"),
    Col("callback"),
    Col("order"),
    Col("core_id"),
    Col("core_type"),
    Col("matched"),
    Col("start_pc"),
    Col("current_pc"),
    Col("pc_unknown"),
    Col("node"),
    Col("entry"),
    Col("entry_addr"),
    Col("end_addr"),
    Col("func_size"),
    Col("origin_name"),
    Col("sk_symbol"),
    Col("sk_symbol_bind"),
    Col("error_node_idx"),
    Col("trace_state", lambda c: c.trace.op_state if c.trace is not None else None),
    Col("trace_op_id", lambda c: c.trace.op_id if c.trace is not None else None),
    Col("cond_value", lambda c: c.cond.value if c.cond is not None else None),
    Col("cond_unavailable", lambda c: c.cond.unavailable if c.cond is not None else None),
    Col("cond_state", _decoded("state")),
    Col("cond_index", _decoded("op_index")),
    Col("cond_scope_id", _decoded("scope_id")),
    *SRC_COLS,
)


def _entry(side: str, j: int) -> Col:
    return Col(f"entry_{side}{j}", lambda n: getattr(n, f"entry_{side}")[j])


DFX_COLS = (
    Col("incident"),
    Col("node"),
    Col("bin_hdl"),
    Col("func_hdl_ori"),
    Col("aic_size"),
    Col("aiv_size"),
    Col("num_blocks"),
    Col("cube_num"),
    Col("vec_num"),
    Col("name_kind"),
    Col("origin_name"),
    Col("name_error_ret"),
    Col("is_func"),
    *(_entry(side, j) for j in range(4) for side in ("aic", "aiv")),
    *SRC_COLS,
)

COUNTER_COLS = (
    Col("incident"),
    Col("core"),
    Col("index"),
    Col("op_state"),
    Col("state_name"),
    Col("exit"),
    Col("legacy"),
    *SRC_COLS,
)

# --------------------------------------------------------------------------------------------- frames


def incidents_frame(incidents: Iterable[Incident]) -> pd.DataFrame:
    """One row per incident."""
    return records_frame((({"incident": i}, inc) for i, inc in enumerate(incidents)), INCIDENT_COLS)


def _cores(incidents: Iterable[Incident]) -> Iterator[tuple[dict[str, int], ExceptionCore]]:
    for i, inc in enumerate(incidents):
        for c in (*inc.cores, *(inc.callback_b.cores if inc.callback_b is not None else ())):
            yield {"incident": i}, c


def cores_frame(incidents: Iterable[Incident]) -> pd.DataFrame:
    """One row per exception core (callback A, then callback B's cores)."""
    return records_frame(_cores(incidents), CORE_COLS)


def _dfx(incidents: Iterable[Incident]) -> Iterator[tuple[dict[str, int], DfxNode]]:
    for i, inc in enumerate(incidents):
        if inc.dfx is not None:
            for n in inc.dfx.nodes:
                yield {"incident": i}, n


def dfx_frame(incidents: Iterable[Incident]) -> pd.DataFrame:
    """One row per node of the SkDfxInfo table."""
    return records_frame(_dfx(incidents), DFX_COLS)


def counters_frame(incidents: Iterable[Incident]) -> pd.DataFrame:
    """One row per SkCounterInfo entry."""
    return records_frame(
        (
            ({"incident": i}, e)
            for i, inc in enumerate(incidents)
            if inc.counters is not None
            for e in inc.counters.entries
        ),
        COUNTER_COLS,
    )
