"""CSV text of a table held as columns, as the ``csv`` module writes it, a block of rows at a time.

Why not ``csv.writer`` row by row: ``skdbg symbolize`` prints a row per PC, and the writer looks at
every character of a million rows one at a time (~25 ns each, 140 MB: about half of the command).
Here each column of a block is checked once, in C (one join, four substring searches):

* a column of numbers or of plain names needs no quotes and goes to the rows as it is;
* a column whose every cell needs quotes (symbolize's reasons, which all hold a comma) gets them
  from the row template;
* only a column that mixes the two is quoted cell by cell.

Each row is then one ``%`` of the block's template. The quoting is the ``csv`` module's default
(``QUOTE_MINIMAL``, a quote inside a field doubled), down to which characters call for it on the
running Python: 3.13 quotes a lone carriage return with ``lineterminator="\\n"``, earlier versions do
not, so :data:`QUOTED_BY` is asked of ``csv`` itself. ``tests/test_csv_columns.py`` holds the two
writers to the same bytes.
"""

from __future__ import annotations

import csv
import io
import itertools
import operator
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: rows per block: the columns' slices and cells of one block stay a few MB
BLOCK_ROWS = 1 << 16


def _quoted_by() -> tuple[str, ...]:
    """The characters that make this Python's ``csv.writer`` (``lineterminator="\\n"``) quote a field."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    found = []
    for ch in (",", '"', "\n", "\r"):
        buf.seek(0)
        buf.truncate()
        writer.writerow(["a" + ch, "b"])
        if buf.getvalue().startswith('"'):
            found.append(ch)
    return tuple(found)


QUOTED_BY = _quoted_by()


def _quote(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _needs_quotes(text: str) -> bool:
    return any(ch in text for ch in QUOTED_BY)


#: cell types whose ``str()`` never needs quotes (None is written as an empty cell); exact types: a
#: subclass may print itself otherwise
_NUMBERS = frozenset({int, bool, float, type(None)})
_TEXT = frozenset({str, type(None)})
#: exact cell types whose equal values print the same (not float: ``0.0 == -0.0``)
_SAME_WHEN_EQUAL = frozenset({str, int, bool, type(None)})
_EMPTY_FOR_NONE = {None: ""}


@dataclass(frozen=True, slots=True)
class ColumnText:
    """One column of a block as the row template takes it: ``field`` is the column's part of the
    template (``%s``, ``"%s"``, or, for a column whose every cell is the same, that cell's text with
    ``%`` doubled), ``cells`` what each row's ``%s`` takes (None for a repeated cell's column)."""

    field: str
    cells: Sequence[Any] | None = None


def cell_text(value: Any) -> str:
    """What ``csv.writer`` writes for one cell, before quoting: a str's own text (even a subclass
    whose ``__str__`` says otherwise), a float's ``repr``, nothing for None, any other value's ``str``."""
    if isinstance(value, str):
        return str.__str__(value)
    if value is None:
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def column_text(column: Sequence[Any]) -> ColumnText:
    """How one column of a block is written. Every step is a C-level pass over the column; only a
    column that mixes quoted and bare text (or odd cell types) is quoted in a Python loop. A column
    of one repeated cell (a file name, a base, nothing at all) goes into the template once."""
    kinds = set(map(type, column))
    n = len(column)
    if len(kinds) == 1 and kinds <= _SAME_WHEN_EQUAL:
        first = column[0]
        if column[-1] == first and column[n // 2] == first and column.count(first) == n:
            text = cell_text(first)
            return ColumnText((_quote(text) if _needs_quotes(text) else text).replace("%", "%%"))
    if not (kinds <= _NUMBERS or kinds <= _TEXT):  # text beside numbers, or subclasses: cell by cell
        texts = list(map(cell_text, column))
        return ColumnText("%s", [_quote(t) if _needs_quotes(t) else t for t in texts])
    cells: Sequence[Any] = list(map(_EMPTY_FOR_NONE.get, column, column)) if type(None) in kinds else column
    if kinds <= _NUMBERS:
        return ColumnText("%s", cells)
    joined = "\0".join(cells)
    if not _needs_quotes(joined):
        return ColumnText("%s", cells)
    if not any(ch in joined for ch in QUOTED_BY if ch != ","):
        # only commas call for quotes: which cells hold one is a C-level map, no quote needs doubling
        flags = list(map(operator.contains, cells, itertools.repeat(",")))
        if all(flags):
            return ColumnText('"%s"', cells)
        return ColumnText("%s", ['"' + t + '"' if f else t for t, f in zip(cells, flags, strict=True)])
    return ColumnText("%s", [_quote(t) if _needs_quotes(t) else t for t in cells])


def csv_blocks(columns: Mapping[str, Sequence[Any]], order: Sequence[str]) -> Iterator[str]:
    """The CSV text of ``columns`` in ``order``: the header line, then a block of rows at a time
    (each line ends with ``\\n``). Cells hold str, int, bool, float or None; a table of one column
    is written by ``csv`` itself, whole (its row of one empty cell is ``""``, a rare table). Columns
    of different lengths are a ValueError, as ``csv`` over ``zip(strict=True)`` made them."""
    lengths = {c: len(columns[c]) for c in order}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"columns of different lengths: {lengths}")
    head = io.StringIO()
    writer = csv.writer(head, lineterminator="\n")
    writer.writerow(order)
    if len(order) == 1:
        writer.writerows(zip(columns[order[0]]))
    yield head.getvalue()
    if len(order) < 2:
        return
    total = len(columns[order[0]])
    for start in range(0, total, BLOCK_ROWS):
        block = [column_text(columns[c][start : start + BLOCK_ROWS]) for c in order]
        template = ",".join(col.field for col in block) + "\n"
        varying = [col.cells for col in block if col.cells is not None]
        if varying:
            yield "".join(map(template.__mod__, zip(*varying, strict=True)))
        else:  # every column one repeated cell
            yield (template % ()) * min(BLOCK_ROWS, total - start)
