"""Write a whole output folder at once: every file or none.

Why one helper: reports, session exports, candidates, adapted packages, templates and collected
scenes all promise the same convention for ``-o DIR``:

- an absent or empty ``DIR`` is filled;
- an existing non-empty ``DIR`` is refused (:class:`OutputNotEmptyError`; the CLI maps it to exit 2
  with :data:`OUTPUT_EXISTS_HINT`), unless ``force`` is given, and then it is replaced atomically;
- a failed run leaves nothing behind: the files are assembled in a temporary sibling of the target
  and renamed into place in one step; the cleanup on failure lives here once.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

#: the one-line advice every command prints after the refusal of an existing output folder
OUTPUT_EXISTS_HINT = "use --force to replace it"


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")
#: the longest file-name part derived from artifact content (scope names, kernel names)
MAX_NAME_PART = 64


def safe_name(text: str, *, fallback: str = "unnamed") -> str:
    """A file-name part made from artifact content: letters, digits and ``._+-`` only, no leading dot.

    Scope and kernel names come from other people's logs; one named ``../../tmp/x`` must not choose
    where a file lands. Callers keep the original name inside the file and make the file name unique
    (an index) themselves, since two names may sanitise to the same text.
    """
    cleaned = _UNSAFE.sub("_", text).lstrip(".")[:MAX_NAME_PART]
    return cleaned or fallback


def _inside(root: Path, rel: str) -> Path:
    """``root / rel``, refusing a relative path that is absolute or climbs out of ``root``."""
    parts = Path(rel).parts
    if not rel or Path(rel).is_absolute() or ".." in parts:
        raise ValueError(f"refusing to write {rel!r}: not a path inside the output folder")
    dest = root / rel
    if not dest.resolve().is_relative_to(root.resolve()):
        raise ValueError(f"refusing to write {rel!r}: it resolves outside the output folder")
    return dest


class OutputNotEmptyError(Exception):
    """The target exists and is not an empty directory: an output folder is never overwritten silently."""


def ensure_fresh_dir(out: Path, *, force: bool = False) -> None:
    """Raise :class:`OutputNotEmptyError` unless ``out`` is absent or an empty directory.

    With ``force`` an existing directory is acceptable (it will be replaced); a non-directory in the
    way is still refused, because replacing a file the user named by mistake loses data.
    """
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir() or out.is_symlink():
        raise OutputNotEmptyError(f"output folder {out} exists and is not a directory")
    if not force and any(out.iterdir()):
        raise OutputNotEmptyError(f"output folder {out} exists and is not empty ({OUTPUT_EXISTS_HINT})")


@contextmanager
def staged_dir(out_dir: str | os.PathLike[str], *, force: bool = False) -> Iterator[Path]:
    """Yield a temporary sibling of ``out_dir`` to fill; on success it becomes ``out_dir``.

    On any exception the temporary folder is removed and ``out_dir`` is untouched. With ``force`` an
    existing ``out_dir`` is swapped out only after the new folder is complete.
    """
    out = Path(out_dir)
    ensure_fresh_dir(out, force=force)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        yield tmp
        ensure_fresh_dir(out, force=force)  # nobody filled it while we worked
        old: Path | None = None
        if out.exists():
            if any(out.iterdir()):
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
                os.replace(out, old / "previous")
            else:
                out.rmdir()  # empty: the rename needs the name free
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_tree(
    out_dir: str | os.PathLike[str], files: Mapping[str, str | bytes], *, force: bool = False
) -> list[Path]:
    """Write ``files`` (relative path → text or bytes) as the new folder ``out_dir``, atomically.

    ``out_dir`` must be absent or an empty directory (or any directory with ``force``). Text is
    written as UTF-8. Returns the written paths (under ``out_dir``) in the order given.
    """
    out = Path(out_dir)
    with staged_dir(out, force=force) as tmp:
        for rel, data in files.items():
            dest = _inside(tmp, rel)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(data, bytes):
                dest.write_bytes(data)
            else:
                # a non-UTF-8 file name quoted in a report arrives as surrogates: escape, never fail
                dest.write_text(data, encoding="utf-8", errors="backslashreplace")
    return [out / rel for rel in files]


__all__ = [
    "OUTPUT_EXISTS_HINT",
    "OutputNotEmptyError",
    "ensure_fresh_dir",
    "safe_name",
    "staged_dir",
    "write_tree",
]
