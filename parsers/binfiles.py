"""``bin_files/``: names → image bases; PC → image → symbol → child (artifacts.md §3.12, §4.7; rows 72, 73).

Why: ``DumpKernelBinaries`` (sk_node.cpp) writes each child binary as
``<SanitizePathComponent(funcName)>_0x<UPPERHEX binDevAddr>.o`` and the SK entry as
``sk_entry_0x<HEX>.o``. The name is the only record of where the image sat on the device, so the
base is read from it (split on the *last* ``_0x``: function names may contain ``_0x``). Each
image spans the runtime extent of its ELF (§4.2); a PC is placed in the image whose
``[base, base + extent)`` contains it, then in a function by the symbol table, then tied back to
the child global and split index through the image's SK bind map (§4.5).

ELFs are opened lazily — headers when the table first needs extents, symbols and meta on the
first lookup inside that image — and cached per file (path, size, mtime).
"""

from __future__ import annotations

import errno
import os
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from skdbg import regexcode
from skdbg.parsers.ascend_meta import BINDMAP_ENTRY_CONFLICT, AscendMetaResult, parse_ascend_meta
from skdbg.parsers.bulk import build_source, frozen_builder
from skdbg.parsers.common import Gap, ParseError, Source, Unrecognized
from skdbg.parsers.elf import TIER_NEAREST, TIER_SYMTAB, TIER_UNRESOLVED, ElfImage, open_elf
from skdbg.parsers.frames import Col, records_frame
from skdbg.parsers.fsguard import real_path

if TYPE_CHECKING:
    import pandas as pd

    from skdbg.parsers.elf import SymbolMatch

ENTRY_PREFIX = "sk_entry"
SANITIZED_CHARS = '/\\:*?"<>|'  # sk_common.h SanitizePathComponent
_HEX = regexcode.compile(r"[0-9A-Fa-f]{1,16}")  # a 64-bit address at most


@dataclass(frozen=True, slots=True)
class BinFileName:
    """A parsed ``bin_files`` name. ``func_name`` is the sanitized child funcName (None for the entry)."""

    file_name: str
    kind: str  # "entry" | "child"
    func_name: str | None
    base: int
    hex_text: str
    upper_hex: bool
    src: Source


_build_name = frozen_builder(BinFileName)  # bin_files holds one file per kernel: thousands of names


def sanitize_func_name(name: str) -> str:
    """Upstream ``SanitizePathComponent``: each of ``/ \\ : * ? " < > |`` becomes ``_``."""
    return "".join("_" if c in SANITIZED_CHARS else c for c in name)


def parse_bin_file_name(path: str | os.PathLike[str]) -> BinFileName | None:
    """Parse ``<name>_0x<HEX>.o`` / ``sk_entry_0x<HEX>.o``; ``None`` when the name does not fit (row 72)."""
    p = Path(path)
    return _parse_name(p.name, str(p))


def _parse_name(name: str, file: str) -> BinFileName | None:
    """:func:`parse_bin_file_name` of a file ``name`` whose path is ``file``."""
    if not name.endswith(".o"):
        return None
    stem = name[:-2]
    cut = stem.rfind("_0x")
    if cut <= 0:
        return None
    prefix, hex_text = stem[:cut], stem[cut + 3 :]
    if not _HEX.fullmatch(hex_text):
        return None
    kind = "entry" if prefix == ENTRY_PREFIX else "child"
    return _build_name(
        name,
        kind,
        None if kind == "entry" else prefix,
        int(hex_text, 16),
        hex_text,
        hex_text == hex_text.upper(),
        build_source(file, None, None),
    )


def matches_func_name(file_func: str, func_name: str) -> bool:
    """Whether a file-name prefix belongs to a (raw, unsanitized) child funcName."""
    return sanitize_func_name(func_name) == file_func


# ------------------------------------------------------------------ ELF cache

#: a file's real path, size, mtime, device and inode (:func:`_key`)
FileKey = tuple[str, int, int, int, int]
_ELF_CACHE: dict[FileKey, ElfImage] = {}
_META_CACHE: dict[FileKey, AscendMetaResult] = {}
_CACHE_LIMIT = 256


_K = TypeVar("_K")
_V = TypeVar("_V")


def _bounded_get(memo: dict[_K, _V], key: _K, make: Callable[[], _V]) -> _V:
    """``memo[key]``, or ``make()`` kept there (the oldest entry dropped first when :data:`_CACHE_LIMIT`
    are held): the module caches and an image table's memos, one rule. A ``make`` that raises keeps
    and drops nothing."""
    hit = memo.get(key)
    if hit is None:
        hit = make()
        if len(memo) >= _CACHE_LIMIT:
            memo.pop(next(iter(memo)))
        memo[key] = hit
    return hit


#: the folders :func:`_key` resolved, by absolute name (:func:`~skdbg.parsers.fsguard.real_path`'s cache)
_FOLDERS: dict[str, Path] = {}


def _key(path: Path) -> FileKey:
    """(real path, size, mtime, device, inode) of an image file. The real path comes from its folder's,
    resolved once (a kernel's ELFs share one folder): resolving every path took an ``lstat`` per
    component (8 system calls an image) for each of thousands of images a scene's task entries are
    placed in. The device and inode tell another file apart at the same size and mtime, whatever became
    of a folder resolved before (a link re-pointed in a long-lived process) or of the file."""
    st = path.stat()
    where = os.fspath(path)
    if not os.path.isabs(where):  # folders are kept by absolute name: the current folder may change
        where = os.path.join(os.getcwd(), where)
    if len(_FOLDERS) >= _CACHE_LIMIT:
        _FOLDERS.clear()
    return (str(real_path(where, _FOLDERS)), st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino)


def cached_elf(path: str | os.PathLike[str]) -> ElfImage:
    """:func:`open_elf` with a per-file cache keyed by :func:`_key` (real path, size, mtime, inode)."""
    p = Path(path)
    try:
        key = _key(p)
    except OSError:
        return open_elf(p)  # raises the precise ParseError
    return _bounded_get(_ELF_CACHE, key, lambda: open_elf(p))


def cached_meta(image: ElfImage) -> AscendMetaResult:
    """:func:`parse_ascend_meta` of a cached image, cached alongside it."""
    p = Path(image.name)
    try:
        key = _key(p)
    except OSError:
        return parse_ascend_meta(image)
    return _bounded_get(_META_CACHE, key, lambda: parse_ascend_meta(image))


# ------------------------------------------------------------------ records


@dataclass(frozen=True, slots=True)
class ImageInfo:
    """One dumped image: base from the file name, extent from the ELF (§4.7 step 1)."""

    path: str
    kind: str
    func_name: str | None
    base: int
    text_offset: int | None
    size: int | None
    src: Source

    @property
    def end(self) -> int | None:
        return None if self.size is None else self.base + self.size

    def contains(self, pc: int) -> bool:
        return self.size is not None and self.base <= pc < self.base + self.size


@dataclass(frozen=True, slots=True)
class PcLocation:
    """A PC placed in the dumped images: image, function, child, with a tier and the reason.

    ``child_global``/``split_index`` come from the bind map when the function is an SK variant;
    ``in_entry`` means the PC is in the SK entry binary (SK glue: sync, wait, preload — §4.7 step 4).
    """

    pc: int
    image: ImageInfo | None
    offset: int | None
    symbol: str | None
    demangled: str | None
    sym_start: int | None
    sym_size: int | None
    offset_in_symbol: int | None
    tier: str
    confidence: str
    reason: str
    in_entry: bool
    child_global: str | None
    split_index: int | None
    other_images: tuple[str, ...]
    src: Source


#: one row per image: its file (the ELF's path), no line, and where it sits on the device
IMAGE_COLS = (
    Col("file", lambda i: i.path),
    Col("line", lambda i: None),
    Col("kind"),
    Col("func_name"),
    Col("base"),
    Col("text_offset"),
    Col("size"),
    Col("end"),
)


@dataclass(slots=True)
class ImageTable:
    """All images of one ``bin_files`` directory, sorted by base."""

    directory: str
    names: list[BinFileName] = field(default_factory=list)
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)
    _images: list[ImageInfo] | None = None
    _bases: list[int] = field(default_factory=list)
    _infos: dict[str, ImageInfo] = field(default_factory=dict)
    _by_base: list[BinFileName] | None = None
    _by_base_bases: list[int] = field(default_factory=list)
    #: the parsed ELF and Ascend metadata of the images looked up last (up to :data:`_CACHE_LIMIT` each,
    #: the oldest dropped first, as the module caches bound them: an ELF holds its file's bytes), as an
    #: image's extent is kept (``_infos``): the module caches key the file anew at every call (a
    #: ``stat`` and its real path, :func:`_key`), and a lookup per task entry made thousands of them
    _elves: dict[str, ElfImage] = field(default_factory=dict)
    _metas: dict[str, AscendMetaResult] = field(default_factory=dict)

    @property
    def images(self) -> list[ImageInfo]:
        """Image extents, read from the ELF headers on first use (lazy); overlaps are checked here."""
        if self._images is None:
            out = [self._info(n) for n in self.names]
            out.sort(key=lambda i: (i.base, i.path))
            self._images = out
            self._bases = [i.base for i in out]
            self._check_overlaps(out)
        return self._images

    def _info(self, n: BinFileName) -> ImageInfo:
        """One image's extent (cached): only the ELFs a lookup needs are opened (bin_files can hold thousands)."""
        path = n.src.file
        hit = self._infos.get(path)
        if hit is not None:
            return hit
        try:
            elf = self._elf(path)
        except ParseError as exc:
            self.gaps.append(Gap("bad_elf", str(exc), n.src))
            info = ImageInfo(path, n.kind, n.func_name, n.base, None, None, n.src)
        else:
            ext = elf.extent
            if ext is None:
                self.gaps.append(Gap("no_extent", "no SHF_ALLOC section: the image cannot be placed", n.src))
            info = ImageInfo(
                path,
                n.kind,
                n.func_name,
                n.base,
                None if ext is None else ext.text_offset,
                None if ext is None else ext.size,
                n.src,
            )
        self._infos[path] = info
        return info

    def _elf(self, path: str) -> ElfImage:
        """:func:`cached_elf` of an image's file, kept by the table (a failure is raised each time)."""
        return _bounded_get(self._elves, path, lambda: cached_elf(path))

    def _meta(self, path: str, elf: ElfImage) -> AscendMetaResult:
        """:func:`cached_meta` of an image's ELF, kept by the table."""
        return _bounded_get(self._metas, path, lambda: cached_meta(elf))

    def _check_overlaps(self, images: list[ImageInfo]) -> None:
        placed = [i for i in images if i.size is not None]
        for a, b in zip(placed, placed[1:], strict=False):
            assert a.end is not None
            if b.base < a.end:
                self.gaps.append(
                    Gap(
                        "overlapping_images",
                        f"{Path(a.path).name} [0x{a.base:x}, 0x{a.end:x}) overlaps "
                        f"{Path(b.path).name} at 0x{b.base:x}",
                        b.src,
                    )
                )

    @property
    def entry(self) -> ImageInfo | None:
        return next((i for i in self.images if i.kind == "entry"), None)

    def containing(self, pc: int) -> list[ImageInfo]:
        """All images whose extent contains ``pc``; the one with the highest base first.

        Once every image is placed (``images`` was read) this is exact, overlaps included. Before that,
        only the image with the highest base at or below ``pc`` is opened (plus lower ones while they
        keep containing ``pc``): runtime code segments do not overlap, so a lower image can contain
        ``pc`` only if it overlaps that one — which the full ``images`` pass reports as a gap.
        """
        if self._images is not None:
            k = bisect_right(self._bases, pc)
            return [i for i in reversed(self._images[:k]) if i.contains(pc)]
        by_base = self._by_base
        if by_base is None:
            by_base = self._by_base = sorted(self.names, key=lambda n: (n.base, n.src.file))
            self._by_base_bases = [n.base for n in by_base]
        k = bisect_right(self._by_base_bases, pc)
        hits: list[ImageInfo] = []
        for i in range(k - 1, -1, -1):
            info = self._info(by_base[i])
            if not info.contains(pc):
                break
            hits.append(info)
        return hits

    def _match_at(self, pc: int) -> tuple[list[ImageInfo], ElfImage, SymbolMatch] | None:
        """Where :meth:`locate` and :meth:`function_size_at` start: the images holding ``pc`` (the
        highest-based first), that one's ELF and the range rule's match at ``pc``'s offset in it. None
        when no image holds ``pc``; every image is placed then, as the reason for such a pc needs (it
        names the neighbours), so both leave the table alike: the images opened, their gaps, and the
        exact lookup of overlapping images from then on."""
        hits = self.containing(pc)
        if not hits:
            _ = self.images
            return None
        elf = self._elf(hits[0].path)
        return hits, elf, elf.lookup(pc - hits[0].base)

    def locate(self, pc: int, *, demangle_names: bool = True) -> PcLocation:
        """PC → image → function → child (row 73): §4.7 steps 2–4."""
        src = Source(self.directory)
        found = self._match_at(pc)
        if found is None:
            return PcLocation(
                pc, None, None, None, None, None, None, None, TIER_UNRESOLVED, "none",
                self._outside_reason(pc), False, None, None, (), src,
            )  # fmt: skip
        hits, elf, match = found
        img = hits[0]
        others = tuple(Path(i.path).name for i in hits[1:])
        off = pc - img.base
        where = f"{Path(img.path).name} (base 0x{img.base:x}) at image offset 0x{off:x}"
        reason = f"{where}: {match.reason}"
        if others:
            reason += f"; also inside overlapping image(s) {', '.join(others)} — ambiguous"
        confidence = match.confidence if not others else "low"
        in_entry = img.kind == "entry"
        child: str | None = None
        split: int | None = None
        sym = match.symbol
        if sym is not None and match.tier in (TIER_SYMTAB, TIER_NEAREST):
            if in_entry:
                reason += "; in the SK entry binary (SK glue) — name the child from COND/counter state"
            else:
                meta = self._meta(img.path, elf)
                ref = meta.variant_of(sym.value)
                if ref is not None:
                    child, split = ref.global_name, ref.splits[0]
                    reason += f"; SK variant split {split} of child global {child} (bind map)"
                    if len(ref.splits) > 1:
                        reason += f", also bound as splits {list(ref.splits[1:])}"
                    if ref.conflict:
                        reason += f"; bind map entry is poisoned ({BINDMAP_ENTRY_CONFLICT})"
                        confidence = "low"
                elif sym.value in meta.bind_map:
                    child = sym.name
                    reason += "; this is the child's original global kernel, not an SK variant"
                elif meta.bind_map:
                    child = img.func_name
                    reason += (
                        f"; {sym.name} is not in the bind map (helper function?) — child taken from the "
                        f"file name {img.func_name}"
                    )
                else:
                    child = img.func_name
                    reason += f"; no bind map — child taken from the file name {img.func_name}"
        name = sym.name if sym is not None else None
        demangled = name
        if name is not None and demangle_names:
            # imported here: an analysis locates without demangling, and the demangler's module loads
            # ``subprocess`` (with ``selectors`` and ``select``), which nothing else of it needs
            from skdbg.parsers.demangle import demangle

            demangled = demangle(name)
        return PcLocation(
            pc,
            img,
            off,
            name,
            demangled,
            None if sym is None else sym.value,
            None if sym is None else sym.size,
            match.offset_in_symbol,
            match.tier,
            confidence,
            reason,
            in_entry,
            child,
            split,
            others,
            img.src,
        )

    def function_size_at(self, pc: int) -> int | None:
        """The size of the function that starts exactly at ``pc``: the ``sym_size`` :meth:`locate` gives
        when its ``offset_in_symbol`` is 0 (0, an empty range, for an unsized symbol); None where
        :meth:`locate` gives no such thing: ``pc`` outside every image, in the SK entry binary, or not
        at a symbol's first byte. Raises what :meth:`locate` raises (a broken image), and leaves the
        table as :meth:`locate` would (:meth:`_match_at`, where both start).

        Why not :meth:`locate`: attribution asks this of every task entry of an SK whose code ranges
        come from the ELFs alone (no DfxInfo table, no ``sk_device_args.log``), thousands of them, and
        needs only the size. :meth:`locate` also reads each image's Ascend metadata (the bind map, for
        the child's name) and writes a reason: on the bench's task-queue scene the analysis took
        0.73 s with it, 0.63 s without (medians)."""
        found = self._match_at(pc)
        if found is None:
            return None
        hits, _elf, match = found
        if hits[0].kind == "entry":
            return None
        sym = match.symbol
        if sym is None or match.offset_in_symbol != 0:
            return None
        return sym.size

    def _outside_reason(self, pc: int) -> str:
        placed = [i for i in self.images if i.size is not None]
        if not placed:
            return "no dumped image could be placed (no bin_files or no readable ELF)"
        below = [i for i in placed if i.base <= pc]
        above = [i for i in placed if i.base > pc]
        parts = [f"0x{pc:x} is outside every dumped image"]
        if below:
            b = max(below, key=lambda i: i.base)
            parts.append(f"after {Path(b.path).name} [0x{b.base:x}, 0x{b.end or 0:x})")
        if above:
            a = min(above, key=lambda i: i.base)
            parts.append(f"before {Path(a.path).name} at 0x{a.base:x}")
        parts.append("(another binary, a corrupt PC, or an image that was not dumped)")
        return " ".join(parts)

    def to_frame(self) -> pd.DataFrame:
        """One row per image."""

        return records_frame((({}, i) for i in self.images), IMAGE_COLS)


_IGNORED_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _file_names(d: Path) -> list[str]:
    """Names of the regular files (symlinks followed) in ``d``, in the order of ``sorted(d.iterdir())``.

    One ``scandir`` instead of a Path and a ``stat`` per entry (bin_files holds one file per kernel):
    the entry type comes with the listing, a stat is made only for links. Paths of one directory compare
    by their normalized last part."""
    out: list[str] = []
    with os.scandir(d) as it:
        for entry in it:
            try:
                if entry.is_file():
                    out.append(entry.name)
            except OSError as exc:  # as Path.is_file: gone or looping entries are not files
                if exc.errno not in _IGNORED_ERRNOS:
                    raise
    out.sort(key=os.path.normcase)
    return out


def load_image_table(path: str | os.PathLike[str]) -> ImageTable:
    """Index a ``bin_files`` directory, or a model directory containing one (§3.12).

    A missing ``bin_files`` is a Gap (``ASCEND_OP_COMPILE_SAVE_KERNEL_META=1`` was not set, §0.1);
    a path that is a file raises ParseError. Names that do not fit the pattern are kept as
    Unrecognized.
    """
    p = Path(path)
    if p.is_file():
        raise ParseError(str(p), "a model directory or its bin_files/ directory", got="a file")
    d = p if p.name == "bin_files" else p / "bin_files"
    table = ImageTable(str(d))
    if not d.is_dir():
        table.gaps.append(
            Gap(
                "missing_bin_files",
                f"{d} does not exist: kernel binaries were not dumped",
                Source(str(d)),
                collect="export ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 before the run",
            )
        )
        return table
    base = f"{d}{os.sep}"  # str(d / name): d is normalized and never the root
    for name in _file_names(d):
        parsed = _parse_name(name, base + name)
        if parsed is None:
            table.unrecognized.append(Unrecognized(Source(base + name), name, "bin_files:name"))
            continue
        if not parsed.upper_hex:
            table.gaps.append(
                Gap(
                    "lowercase_hex",
                    f"{name}: lower-case address (the runtime writes upper-case)",
                    parsed.src,
                )
            )
        table.names.append(parsed)
    entries = [n for n in table.names if n.kind == "entry"]
    if not entries:
        table.gaps.append(
            Gap("no_entry_binary", "no sk_entry_0x….o: PCs in SK glue cannot be placed", Source(str(d)))
        )
    return table
