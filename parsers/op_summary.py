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

The fixture's ``layer-map.json`` (task-id ranges per layer) is read here too, because its only
use is labelling these rows (:func:`assign_layers`).
"""

from __future__ import annotations

import csv
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from skdbg.parsers.common import ParseError
from skdbg.parsers.frames import rows_frame
from skdbg.parsers.jsonload import as_list, as_object, get_int, is_int, join, load_json, req_int, type_error

if TYPE_CHECKING:
    import pandas as pd

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
    import pandas as pd

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


# ----------------------------------------------------------------------------------------------
# layer-map.json of the auto-tune fixture: which task-id range of a model belongs to which layer.

LAYER_MAP_COLUMNS = ["file", "line", "json_path", "layer", "model_id", "start_task_id", "end_task_id"]


def layer_map_frame(path: str | os.PathLike[str]) -> pd.DataFrame:
    """``{"task_ranges": [{"layer", "model_id", "start_task_id", "end_task_id"}]}`` → one row per range
    (columns :data:`LAYER_MAP_COLUMNS`). Used with :func:`assign_layers` to label op-summary rows.
    A wrong type raises :class:`ParseError` naming the JSON path."""

    file, doc = load_json(path, what="layer-map JSON")
    root = as_object(doc, file, "")
    rows = []
    ranges = as_list(root.get("task_ranges", []), file, "task_ranges")
    for i, item in enumerate(ranges):
        jp = join("task_ranges", i)
        obj = as_object(item, file, jp)
        model = obj.get("model_id")
        if model is not None and not isinstance(model, str) and not is_int(model):
            raise type_error(file, join(jp, "model_id"), "a string or an integer", model)
        start = req_int(obj, "start_task_id", file, jp)
        end = req_int(obj, "end_task_id", file, jp)
        if end < start:
            raise type_error(file, join(jp, "end_task_id"), f"an integer >= start_task_id {start}", end)
        rows.append(
            [
                file,
                None,
                jp,
                get_int(obj, "layer", file, jp),
                None if model is None else str(model),
                start,
                end,
            ]
        )
    frame: pd.DataFrame = rows_frame(rows, LAYER_MAP_COLUMNS)
    return frame


def assign_layers(ops: pd.DataFrame, layers: pd.DataFrame) -> pd.Series:
    """Layer of each op-summary row: the range whose model id matches ``model_id`` (compared as text)
    and contains ``task_id``; <NA> when no range does."""
    import pandas as pd

    out: pd.Series = pd.Series(pd.NA, index=ops.index, dtype="Int64")
    if "task_id" not in ops.columns:
        return out
    for r in layers.itertuples(index=False):
        hit = (ops["task_id"] >= r.start_task_id) & (ops["task_id"] <= r.end_task_id)
        if r.model_id is not None and "model_id" in ops.columns:
            hit &= ops["model_id"].astype("string").str.replace(r"\.0$", "", regex=True) == r.model_id
        out[hit & out.isna()] = r.layer
    return out
