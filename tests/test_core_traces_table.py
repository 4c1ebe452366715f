"""The ``core-traces`` table: every core's counter trace (artifacts.md §1.4.4), the exception cores' and
the all-cores block's (A28), with the op a core reports finished (``finished_op``).

The plog lines are written by hand from the handler's formats (§1.4.4, the plog prefix of the bundled
scene), not by the scene builder, so a format mistake shared by builder and parser cannot cancel out.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from click.testing import CliRunner
from sk_core_block import CORE_30_MATCHED

from skdbg.cli import main
from skdbg.parsers.sk_handler import parse_plog_file, traces_frame

PREFIX = "[ERROR] ASCENDCKERNEL(48213,python3):2026-06-10-14:03:21.518.402 [sk_dfx_exception_handler.cpp:644]"

MESSAGES = [
    (
        "IsSuperKernelException",
        "Exception is from superkernel function 'sk_entry_mix11_op_trace', op_trace=true, proceeding with handling",
    ),
    *CORE_30_MATCHED,
    ("PrintCoreSymbols", "[Core 30] Type=AIV, opState=3, opId=2"),  # line 9
    ("PrintCoreSymbols", "[Core 30] opId=2 finished, checking current and next operators"),
    ("PrintCoreSymbols", "[Core 30] > Last finished opId=2:"),
    ("PrintSymbolByCoreId", "    Function name: add_custom"),
    ("PrintCoreSymbols", "[Core 30] > No next operator (opId=3/3)"),
    ("PrintAllCoreSymbols", "=================================================="),
    ("PrintAllCoreSymbols", "=== Sub-kernel running info on all 3 cores ==="),
    ("PrintAllCoreSymbols", "=================================================="),
    ("PrintCoreSymbols", "[Core 0] Type=AIC, opState=3, opId=1"),  # line 17
    ("PrintCoreSymbols", "[Core 0] opId=1 finished, checking current and next operators"),
    ("PrintCoreSymbols", "[Core 0] > Last finished opId=1:"),
    ("PrintSymbolByCoreId", "    Function name: MatMul_1"),
    ("PrintCoreSymbols", "[Core 0] > Next opId=2:"),
    ("PrintSymbolByCoreId", "    Function name: add_custom"),
    ("PrintCoreSymbols", "[Core 1] Type=AIC, opState=0, opId=0"),  # line 23
    ("PrintCoreSymbols", "[Core 1] No SK entry executed yet."),
    ("PrintCoreSymbols", "[Core 2] Type=AIC, opState=2, opId=1"),  # line 25
    ("PrintCoreSymbols", "[Core 2] Currently running opId=1"),
    ("PrintSymbolByCoreId", "    Function name: MatMul_1"),
]


def write_plog(path: Path) -> Path:
    path.write_text("".join(f"{PREFIX}[SK][{func}] {text}\n" for func, text in MESSAGES))
    return path


def test_every_core_trace_is_a_row_with_its_finished_op(tmp_path: Path) -> None:
    plog = write_plog(tmp_path / "plog-48213_20260610140321518.log")
    frame = traces_frame(parse_plog_file(str(plog)).incidents)
    got = [
        (
            r.block,
            r.core_id,
            r.state_name,
            r.op_id,
            r.finished_op,
            r.last_finished,
            r.next_op,
            r.running,
            r.line,
        )
        for r in frame.itertuples()
    ]
    na = None
    assert [tuple(na if pd.isna(v) else v for v in row) for row in got] == [  # missing: pd.NA
        ("exception core (A)", 30, "OP_FINISHED", 2, 2, 2, na, na, 9),
        ("all cores", 0, "OP_FINISHED", 1, 1, 1, 2, na, 17),
        ("all cores", 1, "ORIGIN", 0, na, na, na, na, 23),
        ("all cores", 2, "OP_LAUNCHED", 1, na, na, na, 1, 25),
    ]
    first = frame.iloc[0]
    assert (first["no_next_op"], first["no_next_count"]) == (3, 3)
    assert first["symbols"] == "last_finished:add_custom"
    assert frame.iloc[1]["symbols"] == "last_finished:MatMul_1,next:add_custom"
    assert bool(frame.iloc[2]["not_executed"]) is True and bool(frame.iloc[1]["not_executed"]) is False


def test_inspect_prints_the_core_traces_table(tmp_path: Path) -> None:
    scene = tmp_path / "scene"
    (scene / "log" / "plog").mkdir(parents=True)
    write_plog(scene / "log" / "plog" / "plog-48213_20260610140321518.log")
    result = CliRunner().invoke(main, ["inspect", str(scene), "--table", "core-traces", "--format", "csv"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = lines[0].split(",")
    assert header[:3] == ["incident", "block", "core_id"] and "finished_op" in header
    finished = [row.split(",")[header.index("finished_op")] for row in lines[1:]]
    assert finished == ["2", "1", "", ""]
