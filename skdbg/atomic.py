"""Write a whole output folder at once: every file or none.

Why one helper: reports, session exports, candidates, adapted packages and templates all promise that
a failed run never leaves a half-written output directory. They assemble the files in a temporary
sibling of the target and rename it into place in one step; the cleanup on failure lives here once.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path


class OutputNotEmptyError(Exception):
    """The target exists and is not an empty directory: an output folder is never overwritten."""


def ensure_fresh_dir(out: Path) -> None:
    """Raise :class:`OutputNotEmptyError` unless ``out`` is absent or an empty directory."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise OutputNotEmptyError(f"{out} exists and is not an empty directory")


def write_tree(out_dir: str | os.PathLike[str], files: Mapping[str, str | bytes]) -> list[Path]:
    """Write ``files`` (relative path → text or bytes) as the new folder ``out_dir``, atomically.

    ``out_dir`` must be absent or an empty directory. Text is written as UTF-8. Returns the written
    paths (under ``out_dir``) in the order given.
    """
    out = Path(out_dir)
    ensure_fresh_dir(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        for rel, data in files.items():
            dest = tmp / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, bytes):
                dest.write_bytes(data)
            else:
                dest.write_text(data, encoding="utf-8")
        if out.exists():
            out.rmdir()  # empty (checked above): the rename needs the name free
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out / rel for rel in files]


__all__ = ["OutputNotEmptyError", "ensure_fresh_dir", "write_tree"]
