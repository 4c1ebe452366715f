"""The column-wise CSV writer (``skdbg.csv_columns``) writes what ``csv.writer`` writes, row by row."""

from __future__ import annotations

import csv
import enum
import io
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg import csv_columns
from skdbg.csv_columns import csv_blocks


def _by_csv_module(columns: dict[str, Sequence[Any]], order: Sequence[str]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(order)
    writer.writerows(zip(*(columns[c] for c in order), strict=True))
    return buf.getvalue()


def _ours(columns: dict[str, Sequence[Any]], order: Sequence[str]) -> str:
    return "".join(csv_blocks(columns, order))


def test_a_table_written_out_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every way a column can go, with the expected bytes written by hand (not by the csv module):
    a repeated file name holding a comma and a percent sign, numbers with a gap, a reason column that
    is quoted whole, names of which one holds a comma, one a quote and one a newline, all missing.
    Blocks of two rows, so a column is repeated in one block and not in the next."""
    monkeypatch.setattr(csv_columns, "BLOCK_ROWS", 2)
    columns = {
        "file": ["a,50%.o"] * 3,
        "pc": [16, None, 1 << 64],
        "reason": ["in a, at +0x1", "gap, here", "after c, the end"],
        "symbol": ["f<int, int>", 'q"uote', "new\nline"],
        "child": [None, None, None],
        "tier": ["symtab", "symtab", "unresolved"],
        "ok": [True, False, True],
        "ratio": [0.5, 1.0, None],
    }
    order = list(columns)
    expected = (
        "file,pc,reason,symbol,child,tier,ok,ratio\n"
        '"a,50%.o",16,"in a, at +0x1","f<int, int>",,symtab,True,0.5\n'
        '"a,50%.o",,"gap, here","q""uote",,symtab,False,1.0\n'
        '"a,50%.o",18446744073709551616,"after c, the end","new\nline",,unresolved,True,\n'
    )
    assert _ours(columns, order) == expected
    assert _by_csv_module(columns, order) == expected


def test_one_column_and_no_rows() -> None:
    """A row of one empty cell is written ``""`` (a bare newline would be no row); no rows is the header."""
    assert _ours({"x": ["", None, "a"]}, ["x"]) == 'x\n""\n""\na\n'
    assert _ours({"x": [], "y": []}, ["x", "y"]) == "x,y\n"
    assert _ours({"x": [1, 1], "y": ["z", "z"]}, ["x", "y"]) == "x,y\n1,z\n1,z\n"


class _Kind(str, enum.Enum):
    """A str subclass whose ``str()`` is not its text (``_Kind.A``): csv writes the text."""

    A = "a,b"


class _Odd(float):
    def __repr__(self) -> str:
        return "odd"


@pytest.mark.parametrize(
    "cells",
    [
        [0.0, -0.0],  # equal, printed differently
        [float("nan"), float("nan")],
        [True, 1, 1.0],  # equal, printed differently
        [_Kind.A, _Kind.A],
        [_Kind.A, "x", None],
        [_Odd(1.5), 2.5],
    ],
)
def test_cells_that_compare_equal_or_print_themselves_oddly(cells: list[Any]) -> None:
    columns = {"a": cells, "b": list(range(len(cells)))}
    assert _ours(columns, ["a", "b"]) == _by_csv_module(columns, ["a", "b"])


def test_columns_of_different_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="different lengths"):
        _ours({"a": ["k", "k", "k"], "b": [1, 2]}, ["a", "b"])


def test_a_header_that_needs_quotes() -> None:
    assert _ours({"a,b": [1], 'q"': [2]}, ["a,b", 'q"']) == '"a,b","q"""\n1,2\n'


#: text cells: the characters that decide quoting, a percent sign (the row template's), a blank and a
#: non-ASCII letter (no NUL: Python 3.10's csv refuses it without an escape character)
_TEXT = st.text(alphabet=st.sampled_from(list(',"\r\n% aé')), max_size=6)
_CELL = st.one_of(
    _TEXT,
    st.none(),
    st.integers(min_value=-(1 << 70), max_value=1 << 70),
    st.booleans(),
    st.floats(),  # NaN and -0.0 too
)


_EQUALS = [0, 0.0, -0.0, False, 1, 1.0, True, None, "0", _Kind.A]


@st.composite
def _tables(draw: st.DrawFn) -> tuple[dict[str, list[Any]], list[str]]:
    n_cols = draw(st.integers(min_value=1, max_value=5))
    n_rows = draw(st.integers(min_value=0, max_value=12))
    columns: dict[str, list[Any]] = {}
    for k in range(n_cols):
        kind = draw(st.sampled_from(["mixed", "text", "numbers", "repeated", "comma-text", "equal-values"]))
        if kind == "equal-values":  # equal under ==, printed differently
            cells = draw(st.lists(st.sampled_from(_EQUALS), min_size=n_rows, max_size=n_rows))
        elif kind == "repeated":
            cells = [draw(_CELL)] * n_rows
        elif kind == "text":
            cells = draw(st.lists(st.one_of(_TEXT, st.none()), min_size=n_rows, max_size=n_rows))
        elif kind == "comma-text":
            cells = [
                t + ","
                for t in draw(
                    st.lists(st.text(alphabet="ab %", max_size=3), min_size=n_rows, max_size=n_rows)
                )
            ]
        elif kind == "numbers":
            cells = draw(st.lists(st.one_of(st.integers(), st.none()), min_size=n_rows, max_size=n_rows))
        else:
            cells = draw(st.lists(_CELL, min_size=n_rows, max_size=n_rows))
        columns[f"c{k}"] = cells
    return columns, list(columns)


@settings(max_examples=400, deadline=None)
@given(_tables(), st.integers(min_value=1, max_value=5))
def test_the_same_bytes_as_the_csv_module(table: tuple[dict[str, list[Any]], list[str]], block: int) -> None:
    columns, order = table
    old = csv_columns.BLOCK_ROWS
    csv_columns.BLOCK_ROWS = block  # small blocks: a column repeated in one block, varied in the next
    try:
        ours = _ours(columns, order)
    finally:
        csv_columns.BLOCK_ROWS = old
    assert ours == _by_csv_module(columns, order)
    if "\r" in csv_columns.QUOTED_BY or "\r" not in ours:  # 3.11's csv cannot read back its bare \r
        parsed = list(csv.reader(io.StringIO(ours, newline="")))
        assert parsed[0] == order and len(parsed) == 1 + len(columns[order[0]])
