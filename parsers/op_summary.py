"""Profiler per-kernel CSV (``baseline.csv``/``candidate.csv`` of the auto-tune fixture, artifacts.md §3.14).

Why: the SK row (``Type=SuperKernel``, ``Name`` = the SK function name) is the only host-side
timing of a whole SK, and the SK-off baseline rows time each child separately; together with
``sk_prof`` they show whether a fused scope is slower than its children.

Header of the fixture (torch_npu ``kernel_details.csv`` style): ``Step Id, Device_id, Model ID,
Task ID, Stream ID, Name, Type, OP State, Accelerator Core, Start Time(us), Duration(us), Wait
Time(us), Block Num, Mix Block Num, aic_scalar_time(us), aic_scalar_ratio, aiv_scalar_time(us),
aiv_scalar_ratio``. msprof's own ``op_summary_*.csv`` spells some columns differently (``Op Name``,
``OP Type``, ``Task Type``, ``Task Start Time(us)``, ``Task Duration(us)``) and pads times with a
tab; both spellings map to the same snake_case column. Other columns are kept, snake_cased.
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path

import pandas as pd

from skdbg.parsers.common import ParseError

#: Canonical column → header spellings accepted (first found wins).
COLUMN_ALIASES: dict[str, tuple[str, ...]] = {
    "step_id": ("Step Id",),
    "device_id": ("Device_id", "Device Id"),
    "model_id": ("Model ID",),
    "task_id": ("Task ID",),
    "stream_id": ("Stream ID",),
    "name": ("Name", "Op Name"),
    "type": ("Type", "OP Type"),
    "op_state": ("OP State",),
    "accelerator_core": ("Accelerator Core", "Task Type"),
    "start_us": ("Start Time(us)", "Task Start Time(us)"),
    "duration_us": ("Duration(us)", "Task Duration(us)"),
    "wait_us": ("Wait Time(us)", "Task Wait Time(us)"),
    "block_num": ("Block Num", "Block Dim"),
    "mix_block_num": ("Mix Block Num", "Mix Block Dim"),
}
REQUIRED = ("name", "type", "start_us", "duration_us")
_NUMERIC = (
    "step_id",
    "device_id",
    "model_id",
    "task_id",
    "stream_id",
    "start_us",
    "duration_us",
    "wait_us",
    "block_num",
    "mix_block_num",
)
_NA = {"", "N/A", "NA", "nan", "NaN"}


def _snake(header: str) -> str:
    t = re.sub(r"\(us\)", "_us", header.strip())
    t = re.sub(r"[^0-9A-Za-z]+", "_", t).strip("_").lower()
    return t or "column"


def op_summary_frame(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read the CSV into a frame: ``file``, ``line`` (1-based CSV line of the row), the canonical
    columns of :data:`COLUMN_ALIASES` present, other columns snake_cased, and ``is_super_kernel``.
    Raises :class:`ParseError` for a missing required column (:data:`REQUIRED`) or a non-numeric
    value in a numeric column (naming line and column)."""
    p = Path(path)
    file = str(p)
    if not p.is_file():
        raise ParseError(file, "a profiler op-summary CSV (file does not exist or is not a file)")
    try:
        with p.open("r", encoding="utf-8-sig", errors="replace", newline="") as fh:
            header = next(csv.reader(fh), None)
    except (OSError, csv.Error) as exc:
        raise ParseError(file, f"a readable profiler op-summary CSV ({exc})", line=1) from exc
    if not header or not any(h.strip() for h in header):
        raise ParseError(file, "a profiler op-summary CSV header line", line=1, got="")
    stripped = [h.strip() for h in header]
    rename: dict[int, str] = {}
    used: set[str] = set()
    for canon, spellings in COLUMN_ALIASES.items():
        for sp in spellings:
            if sp in stripped:
                rename[stripped.index(sp)] = canon
                used.add(canon)
                break
    missing = [c for c in REQUIRED if c not in used]
    if missing:
        wanted = ", ".join("/".join(COLUMN_ALIASES[c]) for c in missing)
        raise ParseError(file, f"op-summary CSV columns {wanted}", line=1, got=",".join(stripped))
    names: list[str] = []
    for i, h in enumerate(stripped):
        n = rename.get(i) or _snake(h)
        while n in names or (i not in rename and n in used):
            n += "_"
        names.append(n)
    try:
        df: pd.DataFrame = pd.read_csv(
            p,
            header=0,
            names=names,
            dtype=str,
            keep_default_na=False,
            encoding="utf-8-sig",
            encoding_errors="replace",
            skipinitialspace=False,
            on_bad_lines="error",
            engine="python",
        )
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, csv.Error) as exc:
        raise ParseError(file, f"a well-formed CSV ({exc})") from exc
    df = df.apply(lambda s: s.str.strip())
    for col in _NUMERIC:
        if col not in df.columns:
            continue
        raw = df[col]
        num = pd.to_numeric(raw.where(~raw.isin(_NA)), errors="coerce")
        bad = num.isna() & ~raw.isin(_NA)
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            header_name = stripped[names.index(col)]
            raise ParseError(file, f"a number in column {header_name!r}", line=i + 2, got=str(raw.iloc[i]))
        df[col] = num
    df.insert(0, "line", range(2, len(df) + 2))
    df.insert(0, "file", file)
    df["is_super_kernel"] = df["type"] == "SuperKernel"
    return df
