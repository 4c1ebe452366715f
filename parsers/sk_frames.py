"""Tables of SK incidents for ``inspect``/``--format csv`` (the output edge): incidents, exception cores,
their counter traces and the all-cores trace, the DfxInfo table and the counter table. Each is a column spec read by
:func:`skdbg.parsers.frames.records_frame` (which imports pandas only when a table is built); addresses
and PCs stay exact integers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from skdbg.parsers.frames import SRC_COLS, Col, records_frame
from skdbg.parsers.sk_records import CondInfo, CoreTrace, DfxNode, ExceptionCore, Incident

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

TRACE_COLS = (
    Col("incident"),
    Col("block"),
    Col("core_id"),
    Col("core_type"),
    Col("core_type_guessed"),
    Col("op_state"),
    Col("state_name"),
    Col("op_id"),
    Col("legacy_exit"),
    Col("not_executed"),
    Col("started"),
    Col("running"),
    Col("finished_op"),
    Col("last_finished"),
    Col("next_op"),
    Col("next_is_first"),
    Col("no_next_op", lambda t: t.no_next[0] if t.no_next is not None else None),
    Col("no_next_count", lambda t: t.no_next[1] if t.no_next is not None else None),
    Col("completed"),
    Col("unknown_state"),
    Col("symbols", lambda t: ",".join(f"{s.role}:{s.function_name or '?'}" for s in t.symbols)),
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


def _exception_cores(inc: Incident) -> tuple[ExceptionCore, ...]:
    """The incident's exception cores: callback A's, then callback B's."""
    return (*inc.cores, *(inc.callback_b.cores if inc.callback_b is not None else ()))


def _cores(incidents: Iterable[Incident]) -> Iterator[tuple[dict[str, int], ExceptionCore]]:
    for i, inc in enumerate(incidents):
        for c in _exception_cores(inc):
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


def _traces(incidents: Iterable[Incident]) -> Iterator[tuple[dict[str, Any], CoreTrace]]:
    for i, inc in enumerate(incidents):
        for c in _exception_cores(inc):
            if c.trace is not None:
                yield {"incident": i, "block": f"exception core ({c.callback})"}, c.trace
        if inc.all_cores is not None:
            for t in inc.all_cores.traces:
                yield {"incident": i, "block": "all cores"}, t


def traces_frame(incidents: Iterable[Incident]) -> pd.DataFrame:
    """One row per core's counter trace (§1.4.4): each exception core's, then the all-cores trace's.

    Why a table of its own: the trace says what each core was doing at the fault (the op it runs, the
    op it reports finished, the next one), and the cores table holds only the exception cores'
    state and op id."""
    return records_frame(_traces(incidents), TRACE_COLS)


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
