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
from collections.abc import Iterable, Iterator, Mapping
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


def _inside(
    root: Path, rel: str, real_root: Path | None = None, real_dirs: dict[Path, Path] | None = None
) -> Path:
    """``root / rel``, refusing a relative path that is absolute or climbs out of ``root``.

    ``real_root`` (``root`` resolved) and ``real_dirs`` (resolved folders, filled here) let a caller
    writing many files resolve the root and each folder once instead of every path in full; a name
    that already exists is still resolved itself (it could be a link).
    """
    parts = Path(rel).parts
    if not rel or Path(rel).is_absolute() or ".." in parts:
        raise ValueError(f"refusing to write {rel!r}: not a path inside the output folder")
    dest = root / rel
    if real_dirs is None or os.path.lexists(dest):
        real = dest.resolve()
    else:
        parent = dest.parent
        real_parent = real_dirs.get(parent)
        if real_parent is None:
            real_parent = real_dirs[parent] = parent.resolve()
        real = real_parent / dest.name
    if not real.is_relative_to(real_root or root.resolve()):
        raise ValueError(f"refusing to write {rel!r}: it resolves outside the output folder")
    return dest


class OutputNotEmptyError(Exception):
    """The target exists and is not an empty directory: an output folder is never overwritten silently."""


def _holds(folder: Path, path: Path) -> bool:
    """``path`` is ``folder`` or lies below it (both resolved: symlinks and ``..`` cannot hide it)."""
    f, p = folder.resolve(), path.resolve()
    return p == f or f in p.parents


def ensure_fresh_dir(
    out: Path,
    *,
    force: bool = False,
    what: str = "output folder",
    inputs: Iterable[str | os.PathLike[str]] = (),
    sealed: Iterable[str | os.PathLike[str]] = (),
) -> None:
    """Raise :class:`OutputNotEmptyError` unless ``out`` is absent or an empty directory.

    ``sealed`` folders (a failure scene) are never written into: an ``out`` inside one is refused.

    With ``force`` an existing directory is acceptable (it will be replaced); a non-directory in the
    way is still refused, because replacing a file the user named by mistake loses data, and so is a
    folder that holds one of the command's ``inputs`` or the current directory (``-o .. --force``
    would otherwise delete the very scene or sources being read). ``what`` names the folder in the
    message (``adapted output``, ``report folder``…).
    """
    for folder in sealed:
        if _holds(Path(folder), out):
            raise OutputNotEmptyError(f"refusing to write the {what} {out} inside {folder}: it is sealed")
    if not out.exists() and not out.is_symlink():
        return
    if not out.is_dir() or out.is_symlink():
        raise OutputNotEmptyError(f"{what} {out} exists and is not a directory")
    if not any(out.iterdir()):
        return
    if not force:
        raise OutputNotEmptyError(f"{what} already exists: {out} is not empty ({OUTPUT_EXISTS_HINT})")
    for inp in [*inputs, Path.cwd()]:
        if _holds(out, Path(inp)):
            raise OutputNotEmptyError(
                f"{what} {out} is or holds {inp} (an input of this command or the current directory): "
                "--force will not replace it"
            )


@contextmanager
def staged_dir(
    out_dir: str | os.PathLike[str],
    *,
    force: bool = False,
    what: str = "output folder",
    inputs: Iterable[str | os.PathLike[str]] = (),
    sealed: Iterable[str | os.PathLike[str]] = (),
) -> Iterator[Path]:
    """Yield a temporary sibling of ``out_dir`` to fill; on success it becomes ``out_dir``.

    On any exception the temporary folder is removed and ``out_dir`` is untouched — and a parent
    folder this call had to create is removed again, so a failed run leaves nothing behind. With
    ``force`` an existing ``out_dir`` is swapped out only after the new folder is complete.
    """
    out = Path(out_dir)
    inputs, sealed = list(inputs), list(sealed)
    ensure_fresh_dir(out, force=force, what=what, inputs=inputs, sealed=sealed)
    created = _make_parents(out.parent)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name[:200]}.tmp-", dir=out.parent))
    except BaseException:
        _remove_created(created)
        raise
    try:
        yield tmp
        ensure_fresh_dir(
            out, force=force, what=what, inputs=inputs, sealed=sealed
        )  # nobody filled it while we worked
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
        _remove_created(created)
        raise


def _make_parents(parent: Path) -> list[Path]:
    """Create ``parent`` and its missing ancestors; return the created ones, deepest first."""
    missing: list[Path] = []
    p = parent
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    parent.mkdir(parents=True, exist_ok=True)
    return missing


def _remove_created(created: list[Path]) -> None:
    for p in created:  # deepest first; stop at the first one something else filled meanwhile
        try:
            p.rmdir()
        except OSError:
            return


def write_tree(
    out_dir: str | os.PathLike[str],
    files: Mapping[str, str | bytes],
    *,
    force: bool = False,
    what: str = "output folder",
    inputs: Iterable[str | os.PathLike[str]] = (),
    sealed: Iterable[str | os.PathLike[str]] = (),
) -> list[Path]:
    """Write ``files`` (relative path → text or bytes) as the new folder ``out_dir``, atomically.

    ``out_dir`` must be absent or an empty directory (or any directory with ``force``; see
    :func:`ensure_fresh_dir` for ``what``, ``inputs`` and ``sealed``). Text is written as UTF-8. Returns the written paths (under ``out_dir``) in the order given.
    """
    out = Path(out_dir)
    with staged_dir(out, force=force, what=what, inputs=inputs, sealed=sealed) as tmp:
        real_tmp, real_dirs = tmp.resolve(), dict[Path, Path]()
        made: set[Path] = set()
        for rel, data in files.items():
            dest = _inside(tmp, rel, real_tmp, real_dirs)
            if dest.parent not in made:
                dest.parent.mkdir(parents=True, exist_ok=True)
                made.add(dest.parent)
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
