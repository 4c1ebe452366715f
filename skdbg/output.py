"""Render evidence tables for the terminal and for machines.

Why separate: the CLI's contract is "stdout carries data, stderr messages" (ecosystem.md §4.2),
so every table goes through one renderer with three faithful formats — a rich table for people,
CSV and JSON for scripts — and the JSON carries a schema id so consumers can rely on its shape.
"""

from __future__ import annotations

import errno
import functools
import json
import math
import os
import re
from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from skdbg.parsers.common import lazy_regex
from skdbg.parsers.frames import rows_frame

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

FORMATS = ("table", "csv", "json")
TABLE_SCHEMA = "skdbg.table/1"
WIDE_COLUMNS = 9  # more columns than this: print one record per block


def _plain(value: Any) -> Any:
    """JSON-safe scalar: NaN/NA -> None, numpy scalars -> Python, paths/times -> strings."""
    import pandas as pd

    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        try:
            return _plain(value.item())
        except (ValueError, AttributeError):
            pass
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (str, int, bool, float)):
        return value
    return str(value)


@functools.cache
def _pipe_console() -> type[Console]:
    """rich's Console, except that a write to a reader that went away raises ``BrokenPipeError``.

    Why: rich's own answer (``Console.on_broken_pipe``) exits 1, the code of an skdbg bug; raised,
    the error reaches the CLI, which stops as every command does then (exit 141, nothing printed)."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return PipeConsole


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    cols = [str(c) for c in frame.columns]
    return [dict(zip(cols, (_plain(v) for v in row), strict=True)) for row in frame.itertuples(index=False)]


#: columns people read as addresses/handles/bit patterns: shown in hex in the human table (compiled on
#: first use: ``analyze --format json`` imports this module for its format names only)
HEX_COLUMN_RE = lazy_regex(
    r"(?:^|_)(?:pc|addr|address|hdl|handle|base|cond_value|args|devargs|para_base|entry_ai[cv]\d|entry\d)$"
    r"|^(?:binHdl|funcHdl|devArgs|launchKernelCfg|start_pc|current_pc|pc_start|pc_current|offset|sym_start|offset_in_symbol)$",
    re.IGNORECASE,
)


def _cell(value: Any, *, hex_int: bool = False) -> str:
    v = _plain(value)
    if hex_int and isinstance(v, int) and not isinstance(v, bool):
        return hex(v)
    if v is None:
        return ""
    if isinstance(v, (list, dict)):
        return json.dumps(v)
    return str(v)


def write_frame(
    frame: pd.DataFrame, fmt: str, out: TextIO, *, title: str = "", meta: dict[str, Any] | None = None
) -> None:
    """Write one table in ``fmt`` (table | csv | json) to ``out``."""
    if fmt == "json":
        doc: dict[str, Any] = {"schema": TABLE_SCHEMA, "table": title}
        doc.update(meta or {})
        doc["columns"] = [str(c) for c in frame.columns]
        doc["rows"] = frame_records(frame)
        json.dump(doc, out, indent=2, ensure_ascii=False)
        out.write("\n")
    elif fmt == "csv":
        frame.to_csv(out, index=False, lineterminator="\n")
    else:
        from rich.table import Table  # people's tables only: csv/json and `analyze` never load rich

        console = _pipe_console()(
            file=out, soft_wrap=False, width=max(80, min(240, 24 * max(1, len(frame.columns))))
        )
        if len(frame.columns) > WIDE_COLUMNS and not frame.empty:
            _print_records(console, frame, title)
            return
        table = Table(title=title or None, show_lines=False, header_style="bold")
        for col in frame.columns:
            table.add_column(str(col), overflow="fold")
        hexes = [bool(HEX_COLUMN_RE().search(str(c))) for c in frame.columns]
        for row in frame.itertuples(index=False):
            table.add_row(*(_cell(v, hex_int=h) for v, h in zip(row, hexes, strict=True)))
        console.print(table)
        if frame.empty:
            console.print("(no rows)")


def write_columns(
    columns: dict[str, list[Any]],
    order: Sequence[str],
    fmt: str,
    out: TextIO,
    *,
    title: str = "",
    meta: dict[str, Any] | None = None,
) -> None:
    """Write a table held as column lists; csv and json stream straight from the lists.

    Why: ``skdbg symbolize`` prints a row per PC — a million rows. A frame plus pandas' CSV writer, or
    JSON through the pure-Python indenting encoder, cost more than the lookup itself; here CSV is
    written a block of rows at a time from the columns (:mod:`skdbg.csv_columns`, the ``csv``
    module's bytes) and each JSON row is one C-encoded ``json.dumps``. The human table goes through
    :func:`write_frame`. Cells hold only str, int, bool, float or None (what the parsers put in rows)."""
    if fmt == "csv":
        from skdbg.csv_columns import csv_blocks

        for block in csv_blocks(columns, order):  # one write per block: a text stream encodes per call
            out.write(block)
    elif fmt == "json":
        doc: dict[str, Any] = {"schema": TABLE_SCHEMA, "table": title}
        doc.update(meta or {})
        doc["columns"] = list(order)
        head = json.dumps(doc, indent=2, ensure_ascii=False)
        out.write(head[: head.rfind("}")].rstrip() + ',\n  "rows": [')
        sep = "\n    "
        dumps = json.JSONEncoder(ensure_ascii=False).encode
        for row in zip(*(columns[c] for c in order), strict=True):
            out.write(sep + dumps(dict(zip(order, row, strict=True))))
            sep = ",\n    "
        out.write("\n  ]\n}\n" if sep != "\n    " else "]\n}\n")
    else:
        write_frame(
            rows_frame(
                [dict(zip(order, r, strict=True)) for r in zip(*(columns[c] for c in order), strict=True)],
                list(order),
            ),
            fmt,
            out,
            title=title,
            meta=meta,
        )


def _print_records(console: Console, frame: pd.DataFrame, title: str) -> None:
    """Wide tables read better one record at a time (like psql's expanded mode); empty cells are left out."""
    from rich.table import Table

    cols = [str(c) for c in frame.columns]
    for i, row in enumerate(frame.itertuples(index=False)):
        cells = {c: _cell(v, hex_int=bool(HEX_COLUMN_RE().search(c))) for c, v in zip(cols, row, strict=True)}
        where = f" {cells['file']}:{cells['line']}" if cells.get("file") and cells.get("line") else ""
        record = Table(title=f"{title} [{i}]{where}", show_header=False, title_justify="left", box=None)
        record.add_column("field", style="bold")
        record.add_column("value", overflow="fold")
        for name, value in cells.items():
            if value != "":
                record.add_row(name, value)
        console.print(record)
