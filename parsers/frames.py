"""Build pandas frames from record rows without losing integers.

Why: ``pd.DataFrame(rows)`` turns an integer column holding a single ``None`` into float64 —
PCs and addresses lose their low bits past 2**53 and ids print as ``70.0``. Rows are loaded as
objects and integral columns become nullable ``Int64`` (values past int64 stay Python ints).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

_INT64_MAX = (1 << 63) - 1


def _integral(values: pd.Series) -> bool:
    seen = False
    for v in values:
        if v is None or v is pd.NA:
            continue
        if isinstance(v, bool) or not isinstance(v, int):
            return False
        if not -_INT64_MAX - 1 <= v <= _INT64_MAX:
            return False
        seen = True
    return seen


def tidy_ints(frame: pd.DataFrame) -> pd.DataFrame:
    """Turn object columns that hold only ints (and None) into nullable Int64."""
    for col in frame.columns:
        if frame[col].dtype == object and _integral(frame[col]):
            frame[col] = frame[col].astype("Int64")
    return frame


def rows_frame(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A frame of record rows with integer columns kept exact."""
    if not rows:
        empty: pd.DataFrame = pd.DataFrame(columns=list(columns) if columns is not None else None)
        return empty
    frame: pd.DataFrame = pd.DataFrame(
        list(rows), columns=list(columns) if columns is not None else None, dtype=object
    )
    return tidy_ints(frame)
