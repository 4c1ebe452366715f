"""The four SK forms of a kernel source file and source discovery (spec §1.3.1, §1.5).

Signals are scanned on the text with comments blanked, so a comment mentioning ``SK_BIND(`` never
changes a file's form (upstream scans raw text; a deliberate, documented difference).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skdbg.codegen.reader import SourceReading, comment_free_text, read_source

FORMS = ("none", "current-sk-bind", "partial", "unknown")
NOTE_NO_GLOBAL = "no __global__ entry detected"
NOTE_PARTIAL = "source contains SK markers outside the supported current binding form"

_GLOBAL_RE = re.compile(r"__global__\b")
_SK_RE = re.compile(r"\b__sk__\b")
_SK_BIND_RE = re.compile(r"\bSK_BIND\s*\(")
_UNSUPPORTED_RE = re.compile(
    r"\b__spk__\b|\bFunLevelMixCoreType\s+\w+\s+__attribute__|\bFunLevelKType\s+\w+\s+__attribute__|\.ascend\.meta"
)
_UNSUPPORTED_WORDS = ("__spk__", "FunLevel", ".ascend.meta")  # one is in every _UNSUPPORTED_RE match
_KERNEL_SIGNAL_RE = re.compile(r"__global__\b|__sk__|SK_BIND\(|\.ascend\.meta")
SOURCE_SUFFIXES = (".asc", ".cpp")


@dataclass(frozen=True)
class FileForm:
    file: str
    form: str
    has_global: bool
    has_sk_keyword: bool
    has_sk_bind: bool
    has_unsupported_sk_signal: bool
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "form": self.form,
            "has_global": self.has_global,
            "has_sk_keyword": self.has_sk_keyword,
            "has_sk_bind": self.has_sk_bind,
            "has_unsupported_sk_signal": self.has_unsupported_sk_signal,
            "notes": list(self.notes),
        }


def classify(reading: SourceReading) -> FileForm:
    """Decide the form in the spec's order: unknown, current-sk-bind, partial, none."""
    return _classify_code(reading.file, reading.code_text())


def classify_text(text: str, file: str) -> FileForm:
    """:func:`classify` of ``read_source(text, file)``, without reading the kernels (signals only).

    For a text whose entries are not needed (``adapt`` re-checking the form of what it wrote).
    """
    return _classify_code(file, comment_free_text(text))


def _has(code: str, words: tuple[str, ...], pattern: re.Pattern[str]) -> bool:
    """``pattern`` occurs in ``code``; every match of it starts with one of the literal ``words``.

    Why the literals first: ``str.find`` runs at memchr speed, while a pattern that begins with
    ``\\b`` or an alternation is tried at every offset. The search then starts at the first word
    (``\\b`` still sees the character before it: ``search(pos)`` does not cut the string).
    """
    found = [i for i in (code.find(w) for w in words) if i >= 0]
    return bool(found) and pattern.search(code, min(found)) is not None


def _classify_code(file: str, code: str) -> FileForm:
    has_global = _has(code, ("__global__",), _GLOBAL_RE)
    has_sk = _has(code, ("__sk__",), _SK_RE)
    has_bind = _has(code, ("SK_BIND",), _SK_BIND_RE)
    unsupported = _has(code, _UNSUPPORTED_WORDS, _UNSUPPORTED_RE)
    notes: tuple[str, ...] = ()
    if not has_global:
        form, notes = "unknown", (NOTE_NO_GLOBAL,)
    elif has_sk and has_bind and not unsupported:
        form = "current-sk-bind"
    elif has_sk or has_bind or unsupported:
        form, notes = "partial", (NOTE_PARTIAL,)
    else:
        form = "none"
    return FileForm(file, form, has_global, has_sk, has_bind, unsupported, notes)


class AssetError(ValueError):
    """The asset path cannot be used (missing, or no candidate source): a usage error."""


@dataclass
class Candidate:
    rel: str
    path: Path
    reading: SourceReading
    form: FileForm


@dataclass
class Discovery:
    asset: Path
    candidates: list[Candidate] = field(default_factory=list)
    ignored: list[dict[str, str]] = field(default_factory=list)


class UnreadableSourceError(ValueError):
    """A candidate source exists but cannot be read as UTF-8 text (bad input, exit 3)."""


class NoKernelDefinitionError(UnreadableSourceError):
    """``__global__`` is there but no kernel is defined (only a declaration, or a preprocessor line).

    Bad input (exit 3), never an "adapted" file with zero entries and an added include: the run
    writes nothing.
    """


def no_definition_error(reading: SourceReading) -> NoKernelDefinitionError:
    """The error for a reading without entries or gaps, located at its first non-defining ``__global__``."""
    where = reading.non_definitions[0] if reading.non_definitions else None
    if where is None:
        return NoKernelDefinitionError(f"{reading.file}: no kernel definition found; nothing to adapt")
    others = len(reading.non_definitions) - 1
    more = f" (and {others} more place{'s' if others > 1 else ''})" if others else ""
    return NoKernelDefinitionError(
        f"{where.file}:{where.line}: no kernel definition found: {where.message}{more}; nothing to adapt"
    )


def read_file_text(path: Path) -> str:
    """The file's text exactly as stored: UTF-8, line endings untouched (a CRLF file stays CRLF)."""
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnreadableSourceError(f"{path}: not UTF-8 text (byte offset {exc.start})") from exc
    except OSError as exc:
        raise UnreadableSourceError(f"{path}: cannot read: {exc.strerror}") from exc


def check_asset(asset: Path) -> None:
    """:class:`AssetError` when the asset path does not exist (the check :func:`discover` starts with)."""
    if not asset.exists():
        raise AssetError(f"asset not found: {asset}")


@dataclass
class Listing:
    """The candidate sources of an asset, before any is read: the asset itself when it is a file, or
    every .asc/.cpp file under it, in order (test support files are set aside here, unread)."""

    given: Path  # as the user named it (the messages say it so)
    asset: Path  # resolved
    single: bool  # the asset is one file: it is a candidate whatever it holds
    sources: list[tuple[str, Path]] = field(default_factory=list)  # (relative name, path)
    ignored: list[dict[str, str]] = field(default_factory=list)


@dataclass
class SortedSource:
    """What reading one listed source decided: a candidate, or why it is ignored.

    ``undefined`` is the error a file with ``__global__`` but no kernel definition would raise, kept for
    the end: it is raised only when the asset has no candidate at all."""

    rel: str
    path: Path
    candidate: Candidate | None = None
    ignored: str | None = None  # the reason; None for a candidate
    undefined: NoKernelDefinitionError | None = None


def list_sources(asset: Path) -> Listing:
    """The sources :func:`discover` reads, in its order (:class:`AssetError` for a missing asset)."""
    check_asset(asset)
    listing = Listing(asset, asset.resolve(), asset.is_file())
    if listing.single:
        listing.sources.append((asset.name, asset))
        return listing
    for path in sorted(p for p in asset.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES):
        rel = path.relative_to(asset).as_posix()
        if any(part in {"test", "tests"} for part in Path(rel).parts):
            listing.ignored.append({"file": rel, "reason": "test_support_file"})
        else:
            listing.sources.append((rel, path))
    return listing


def sort_source(rel: str, path: Path, *, single: bool) -> SortedSource:
    """Read one listed source and decide whether it is a candidate (:class:`UnreadableSourceError` for a
    file that cannot be read as UTF-8 text). A lone file (``single``) always is."""
    text = read_file_text(path)
    if not single and _KERNEL_SIGNAL_RE.search(text) is None:
        return SortedSource(rel, path, ignored="no_kernel_signal")
    reading = read_source(text, rel)
    if single or reading.entries or reading.gaps or "__sk__" in text or "SK_BIND(" in text:
        return SortedSource(rel, path, candidate=Candidate(rel, path, reading, classify(reading)))
    # a declaration / directive, not just a word in a comment, makes the "no definition" error
    undefined = no_definition_error(reading) if reading.non_definitions else None
    return SortedSource(rel, path, ignored="no_kernel_definition", undefined=undefined)


class Sorting:
    """Collects the :class:`SortedSource` results of a listing, in order, into the asset's candidates."""

    def __init__(self, listing: Listing) -> None:
        self.found = Discovery(listing.asset, ignored=list(listing.ignored))
        self.listing = listing
        self.paths: list[Path] = []  # of the candidates, in order
        self._undefined: NoKernelDefinitionError | None = None

    def add(self, result: SortedSource) -> None:
        if result.ignored is None:  # a candidate (whose reading its caller may have dropped by now)
            self.paths.append(result.path)
            return
        self.found.ignored.append({"file": result.rel, "reason": result.ignored})
        if self._undefined is None:
            self._undefined = result.undefined

    def close(self) -> None:
        """The errors about the asset as a whole (no candidate at all); the ignored files in order."""
        if self.listing.single:
            return
        if not self.paths and self._undefined is not None:
            raise self._undefined
        if not self.paths:
            raise AssetError(f"no kernel .asc or .cpp source files found under {self.listing.given}")
        self.found.ignored.sort(key=lambda d: d["file"])


def discover(asset: Path) -> Discovery:
    """Candidate kernel sources of an asset: the file itself, or every .asc/.cpp under a directory."""
    listing = list_sources(asset)
    sorting = Sorting(listing)
    for rel, path in listing.sources:
        result = sort_source(rel, path, single=listing.single)
        sorting.add(result)
        if result.candidate is not None:
            sorting.found.candidates.append(result.candidate)
    sorting.close()
    return sorting.found


def detect(asset: Path) -> dict[str, Any]:
    """The ``operator-sk-form-analysis.json`` document for an asset (plus reader gaps, file:line)."""
    found = discover(asset)
    forms = [c.form for c in found.candidates]
    kinds = {f.form for f in forms}
    return {
        "status": "analyzed",
        "asset_path": str(found.asset),
        "overall_form": kinds.pop() if len(kinds) == 1 else "mixed",
        "per_file": [f.to_json() for f in forms],
        "ignored_support_files": found.ignored,
        "gaps": [str(g) for c in found.candidates for g in c.reading.gaps],
    }
