"""Build pandas frames from record rows without losing integers — the only door to pandas.

Why: pandas costs about half a second to import, and only the output edge needs it (``inspect``,
``symbolize``, ``--format csv``); triage works on records. Every frame builder goes through this module,
which imports pandas inside its functions, so ``skdbg analyze`` and ``skdbg --help`` never load it.

Why not ``pd.DataFrame(rows)``: it turns an integer column holding a single ``None`` into float64 —
PCs and addresses lose their low bits past 2**53 (0xffff800000001235 prints as …1000) and ids print as
``70.0``. Rows are loaded as objects; integral columns become nullable ``Int64``, or ``UInt64`` when a
value is past int64 (device addresses with the top bit set), and only columns that are neither stay
Python objects (values past 64 bits). Other object columns get pandas' usual inference (floats, bools).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_UINT64_MAX = (1 << 64) - 1


def _int_dtype(values: Sequence[Any]) -> str | None:
    """``Int64``/``UInt64`` when every non-missing value is an int that fits; None otherwise."""
    import pandas as pd

    lo = hi = None
    for v in values:
        if v is None or v is pd.NA or (type(v) is float and v != v):  # missing: a row without the key is NaN
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            return None
        lo = v if lo is None or v < lo else lo
        hi = v if hi is None or v > hi else hi
    if lo is None or hi is None:
        return None
    if lo >= _INT64_MIN and hi <= _INT64_MAX:
        return "Int64"
    if lo >= 0 and hi <= _UINT64_MAX:
        return "UInt64"
    return None


def tidy_ints(frame: pd.DataFrame) -> pd.DataFrame:
    """Object columns that hold only ints (and None) become nullable Int64/UInt64; others are inferred."""
    for col in frame.columns:
        if frame[col].dtype != object:
            continue
        values = frame[col].tolist()
        dtype = _int_dtype(values)
        if dtype is not None:
            frame[col] = frame[col].astype(dtype)  # type: ignore[call-overload]
        elif not any(isinstance(v, int) and not isinstance(v, bool) for v in values):
            # floats / bools / strings: pandas' own inference (ints past 64 bits stay objects)
            frame[col] = frame[col].infer_objects()
    return frame


def rows_frame(
    rows: Sequence[Mapping[str, Any]] | Sequence[Sequence[Any]], columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """A frame of record rows (mappings, or sequences in ``columns`` order) with integer columns kept exact."""
    import pandas as pd

    if not rows:
        empty: pd.DataFrame = pd.DataFrame(columns=list(columns) if columns is not None else None)
        return empty
    frame: pd.DataFrame = pd.DataFrame(
        list(rows), columns=list(columns) if columns is not None else None, dtype=object
    )
    return tidy_ints(frame)


@dataclass(frozen=True, slots=True)
class Col:
    """One column of a record table: its name and how a record gives its value (by default the
    record's attribute of the same name)."""

    name: str
    get: Callable[[Any], Any] | None = None


#: the provenance columns every record table ends with: its file and 1-based line
SRC_COLS = (Col("file", lambda r: r.src.file), Col("line", lambda r: r.src.line))


def records_frame(records: Iterable[tuple[Mapping[str, Any], Any]], columns: Sequence[Col]) -> pd.DataFrame:
    """A table built from a column spec instead of a hand-written row dict: one row per
    ``(context, record)`` pair; a column named in ``context`` (the owning incident, block …) takes that
    value, any other comes from the record. Integer columns stay exact (:func:`rows_frame`)."""
    rows = []
    for context, rec in records:
        rows.append(
            [
                context[c.name]
                if c.name in context
                else (c.get(rec) if c.get is not None else getattr(rec, c.name))
                for c in columns
            ]
        )
    return rows_frame(rows, [c.name for c in columns])


def columns_frame(columns: Mapping[str, Any], order: Sequence[str] | None = None) -> pd.DataFrame:
    """A frame from column lists with integer columns kept exact; a scalar (a file name) fills its column."""
    import pandas as pd

    lists = {k: list(v) for k, v in columns.items() if isinstance(v, (list, tuple))}
    n = max((len(v) for v in lists.values()), default=0)
    frame: pd.DataFrame = pd.DataFrame(
        {k: lists[k] if k in lists else [v] * n for k, v in columns.items()},
        columns=list(order) if order is not None else None,
        dtype=object,
    )
    return tidy_ints(frame)


def typed_frame(
    columns: Mapping[str, Sequence[Any]], order: Sequence[str], int_dtypes: Mapping[str, str]
) -> pd.DataFrame:
    """A frame whose integer columns have known nullable types (``Int64``/``UInt64``): no per-value
    inference, so a table of a million rows costs a few array conversions, not a Python loop per cell."""
    import pandas as pd

    data: dict[str, Any] = {}
    for c in order:
        values = list(columns[c])
        try:
            data[c] = pd.array(values, dtype=int_dtypes[c]) if c in int_dtypes else values  # type: ignore[call-overload]
        except (TypeError, ValueError, OverflowError):
            data[c] = values  # a value past 64 bits or below zero: kept exact as Python ints
    frame: pd.DataFrame = pd.DataFrame(data, columns=list(order))
    return frame


def empty_frame(columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A frame with the expected columns and no rows (a table whose input is absent)."""
    import pandas as pd

    frame: pd.DataFrame = pd.DataFrame(columns=list(columns) if columns is not None else None)
    return frame


def concat_frames(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Stack frames of one table (several files or processes), integer columns still exact.

    Why not ``pd.concat`` alone: one part's column may be ``Int64`` and another's ``UInt64`` (a model
    whose addresses pass 2**63), or absent; pandas then makes the column float and an address loses its
    low bits (0xffff800000a03000 printed as 1.844660333623275e+19, 512 less). Such a column is stacked
    as Python ints and typed again over every part's values (:func:`_retyped`); a column every part
    holds with one type is stacked by pandas as it is."""
    import pandas as pd

    parts = list(frames)
    names = dict.fromkeys(c for f in parts for c in f.columns)
    mixed = [
        c
        for c in names
        if any(str(f[c].dtype) in _NULLABLE_INTS for f in parts if c in f.columns)
        and (
            any(c not in f.columns for f in parts)
            or len({str(f[c].dtype) for f in parts if c in f.columns}) > 1
        )
    ]
    if mixed:
        parts = [f.astype({c: object for c in mixed if c in f.columns}) for f in parts]
    out: pd.DataFrame = pd.concat(parts, ignore_index=True)
    for c in mixed:
        out[c] = _retyped(out[c].astype(object).where(out[c].notna(), None).tolist())
    return out


#: the nullable integer types :func:`tidy_ints` gives a column
_NULLABLE_INTS = ("Int64", "UInt64")
#: the largest integer a float holds exactly
_FLOAT_EXACT = 1 << 53


def _retyped(values: list[Any]) -> Any:
    """A stacked column's values (missing ones None) as the type one part's column would have had:
    ``Int64``/``UInt64`` when every value fits one of them; ``Float64`` for ints and floats together
    (what pandas gives) when every int is a float exactly; else Python objects, exact."""
    import pandas as pd

    dtype = _int_dtype(values)
    if dtype is not None:
        return pd.array(values, dtype=pd.Int64Dtype() if dtype == "Int64" else pd.UInt64Dtype())
    present = [v for v in values if v is not None]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present)
    if numbers and all(isinstance(v, float) or -_FLOAT_EXACT <= v <= _FLOAT_EXACT for v in present):
        return pd.array(values, dtype="Float64")
    return pd.array(values, dtype=object)
