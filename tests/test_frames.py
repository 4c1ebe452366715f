"""Frames at the output edge keep 64-bit addresses exact (issue 18 item 1).

Why: ``pd.DataFrame(rows)`` turns an integer column with one missing value into float64, and a device
PC such as 0xffff800000001235 (above 2**53, above int64) then prints as …1000. Every table of addresses
goes through ``skdbg.parsers.frames``; these tests pin that with hand-picked values.
"""

from __future__ import annotations

from dataclasses import replace

from skdbg.parsers.common import Source
from skdbg.parsers.frames import columns_frame, concat_frames, rows_frame
from skdbg.parsers.plog_line import parse_plog_line
from skdbg.parsers.sk_handler import Incident, SkMessage, cores_frame, parse_sk_messages
from skdbg.scenebuilder.sk_incident import example_incident, to_plog_lines

HIGH_PC = 0xFFFF800000001235  # past int64 and far past float64's 53-bit mantissa
MID_PC = 0x124080C07E59  # an ordinary device PC


def _incidents() -> list[Incident]:
    """The scene builder's example incident (core 30 matched), parsed back from its plog lines."""
    msgs = []
    for no, text in enumerate(to_plog_lines(example_incident(), level="INFO"), 1):
        pl = parse_plog_line(text, Source("plog-48213_1.log", no))
        if pl is not None and (m := SkMessage.from_plog(pl)) is not None:
            msgs.append(m)
    return parse_sk_messages(msgs).incidents


def test_cores_frame_keeps_a_high_pc_exact_next_to_a_missing_one() -> None:
    """Two cores: one PC above int64, one core with no PC printed; the column must not become float."""
    (inc,) = _incidents()
    core = inc.cores[0]
    cores = (replace(core, current_pc=HIGH_PC, start_pc=MID_PC), replace(core, current_pc=None, order=1))
    frame = cores_frame([replace(inc, cores=cores)])
    assert frame["current_pc"].dtype.kind != "f"
    assert int(frame.loc[0, "current_pc"]) == 0xFFFF800000001235
    assert frame["current_pc"].isna().tolist() == [False, True]
    assert int(frame.loc[0, "start_pc"]) == 0x124080C07E59
    assert str(frame["core_id"].dtype) == "Int64"


def test_rows_frame_chooses_exact_integer_types() -> None:
    rows = [
        {"id": 70, "pc": HIGH_PC, "wide": 1 << 70, "dur": 1.5, "name": "a"},
        {"id": None, "pc": None, "wide": None, "dur": None, "name": None},
    ]
    frame = rows_frame(rows, ["id", "pc", "wide", "dur", "name"])
    assert str(frame["id"].dtype) == "Int64" and frame.loc[0, "id"] == 70
    assert str(frame["pc"].dtype) == "UInt64" and int(frame.loc[0, "pc"]) == 0xFFFF800000001235
    assert frame.loc[0, "wide"] == 1 << 70  # past 64 bits: kept as a Python int object
    assert frame["dur"].dtype.kind == "f"  # a float column stays numeric
    assert frame.to_csv(index=False, lineterminator="\n").splitlines() == [
        "id,pc,wide,dur,name",
        f"70,{0xFFFF800000001235},{1 << 70},1.5,a",
        ",,,,",
    ]


def test_a_row_without_a_key_is_a_missing_integer() -> None:
    """Rows as mappings: a key some rows lack is NaN in pandas' frame, a missing value here."""
    frame = rows_frame([{"pc": HIGH_PC, "n": 1}, {"n": 2}])
    assert str(frame["pc"].dtype) == "UInt64" and frame["pc"].isna().tolist() == [False, True]
    assert int(frame.loc[0, "pc"]) == 0xFFFF800000001235


def test_stacked_parts_keep_their_integers_exact() -> None:
    """Two models' parts of one table: one part's address column is Int64, the other's UInt64 (past
    2**63), a third part lacks the column; pandas alone would make it float and the high address 512 off."""
    low = rows_frame([{"entry": 0x124080A03000, "n": 1}, {"entry": None, "n": 2}], ["entry", "n"])
    high = rows_frame([{"entry": 0xFFFF800000A03000, "n": 3}], ["entry", "n"])
    neither = rows_frame([{"n": -4}], ["n"])
    assert (str(low["entry"].dtype), str(high["entry"].dtype)) == ("Int64", "UInt64")
    frame = concat_frames([low, high, neither])
    assert str(frame["entry"].dtype) == "UInt64" and str(frame["n"].dtype) == "Int64"
    assert frame.to_csv(index=False, lineterminator="\n").splitlines() == [
        "entry,n",
        f"{0x124080A03000},1",
        ",2",
        f"{0xFFFF800000A03000},3",
        ",-4",
    ]
    negative = rows_frame([{"entry": -1}], ["entry"])  # neither type holds -1 and 2**64 - 1 together
    both = concat_frames([high, negative])
    assert both["entry"].tolist() == [0xFFFF800000A03000, -1]
    floats = rows_frame([{"entry": 2.5}], ["entry"])  # ints and floats: Float64, as pandas stacks them
    mixed = concat_frames([low, floats])
    assert str(mixed["entry"].dtype) == "Float64" and mixed["entry"].tolist()[::2] == [0x124080A03000, 2.5]
    assert concat_frames([high, floats])["entry"].tolist() == [0xFFFF800000A03000, 2.5]  # not a float: exact
    alone = concat_frames([low, low])  # one type in every part: stacked as it is
    assert str(alone["entry"].dtype) == "Int64" and alone["n"].tolist() == [1, 2, 1, 2]


def test_columns_frame_keeps_a_negative_and_a_missing_value_exact() -> None:
    frame = columns_frame({"offset": [-(1 << 62) - 1, None], "end": [HIGH_PC, HIGH_PC + 1]})
    assert frame.loc[0, "offset"] == -(1 << 62) - 1 and str(frame["offset"].dtype) == "Int64"
    assert [int(v) for v in frame["end"]] == [0xFFFF800000001235, 0xFFFF800000001236]


def test_column_writer_matches_the_frame_writer() -> None:
    """``write_columns`` (symbolize's streaming path) prints what ``write_frame`` prints for csv and json."""
    import io
    import json

    from skdbg.output import write_columns, write_frame

    order = ["file", "pc", "symbol", "reason", "split"]
    columns = {
        "file": ["k.o", "k.o", "k.o"],
        "pc": [HIGH_PC, 0x10, 0],
        "symbol": ["a,b", None, 'q"uote'],
        "reason": ["inside a", "gap, between", ""],
        "split": [1, None, 3],
    }
    frame = rows_frame([dict(zip(order, r, strict=True)) for r in zip(*columns.values(), strict=True)], order)
    for fmt in ("csv", "json"):
        a, b = io.StringIO(), io.StringIO()
        write_columns(columns, order, fmt, a, title="t", meta={"elf": "k.o"})
        write_frame(frame, fmt, b, title="t", meta={"elf": "k.o"})
        if fmt == "csv":
            assert a.getvalue() == b.getvalue()
        else:
            assert json.loads(a.getvalue()) == json.loads(b.getvalue())
    empty = io.StringIO()
    write_columns({c: [] for c in order}, order, "json", empty, title="t")
    assert json.loads(empty.getvalue())["rows"] == []


def test_records_frame_from_a_column_spec() -> None:
    """The spec-driven builder: context columns first-class, attributes by name, getters, exact PCs."""
    from dataclasses import dataclass

    from skdbg.parsers.common import Source
    from skdbg.parsers.frames import SRC_COLS, Col, records_frame

    @dataclass(frozen=True)
    class Rec:
        src: Source
        pc: int | None
        name: str

    recs = [Rec(Source("a.log", 3), 0xFFFF800000001235, "x"), Rec(Source("a.log", 9), None, "yy")]
    cols = (Col("incident"), Col("pc"), Col("name_len", lambda r: len(r.name)), *SRC_COLS)
    frame = records_frame((({"incident": 7}, r) for r in recs), cols)
    assert list(frame.columns) == ["incident", "pc", "name_len", "file", "line"]
    assert str(frame["pc"].dtype) == "UInt64" and int(frame.loc[0, "pc"]) == 0xFFFF800000001235
    assert frame["pc"].isna().tolist() == [False, True]
    assert frame["name_len"].tolist() == [1, 2] and frame["line"].tolist() == [3, 9]
    assert frame["incident"].tolist() == [7, 7]
    empty = records_frame([], cols)
    assert list(empty.columns) == ["incident", "pc", "name_len", "file", "line"] and len(empty) == 0
