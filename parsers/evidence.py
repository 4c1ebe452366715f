"""``Evidence``: everything parsed from one failure scene, as typed records and pandas tables.

Why one object: the triage engine, the CLI and the TUI all ask the same questions of a scene
("which cores faulted", "what does the task queue say for scope 3"), and each artifact must be
read once, lazily, with its failures turned into recorded gaps instead of aborting the rest
(row 62: a malformed JSON file leaves every other artifact loaded).

Plogs are never read whole: :func:`skdbg.parsers.plog.scan_plog` picks the fault and SK lines
with a bytes-level prefilter, and only those are tokenized (GB-sized plogs stay fast).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from collections.abc import Callable, Collection, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from functools import cached_property, partial
from itertools import filterfalse
from operator import attrgetter, is_
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar, cast, overload

from skdbg.parsers.common import Gap, ParseError, Source, Unrecognized, drop_tracebacks
from skdbg.parsers.frames import SRC_COLS, Col, concat_frames, empty_frame, records_frame, rows_frame
from skdbg.parsers.fsguard import real_path, uncounted_reads
from skdbg.parsers.hashbehind import CountingSha256, Sha256Done

# The parsers themselves are imported where an artifact is parsed, not here: opening a scene (the
# inventory, `skdbg tui`'s input check, a cache hit) then never loads the twenty parser modules
# and their compiled patterns — the TUI paints its first log line before they are needed.
if TYPE_CHECKING:
    import pandas as pd

    from skdbg.parsers.background import BackgroundLoad
    from skdbg.parsers.binfiles import ImageTable
    from skdbg.parsers.device_args import DeviceArgsResult
    from skdbg.parsers.discovery import ModelDir, SkMetaLayout
    from skdbg.parsers.fail_reasons import FailReasonsResult
    from skdbg.parsers.filelog_outline import FileLogOutline
    from skdbg.parsers.fused_nodes import FusedNodesResult
    from skdbg.parsers.graph_json import GraphFile
    from skdbg.parsers.node_detail import NodeDetailResult
    from skdbg.parsers.plog import PlogFile, ScannedFile
    from skdbg.parsers.plog_fork import ChildWork, ForkedPlogScan
    from skdbg.parsers.plog_line import PlogLine, PlogRow
    from skdbg.parsers.run_identity import EnvProbeFile, RunFile, SourceSitesFile
    from skdbg.parsers.runtime_faults import ErrorManagerLine, RuntimeRecord
    from skdbg.parsers.scope_split import ScopeSplitResult
    from skdbg.parsers.sk_handler import Incident, NonSkFault, SkHandlerResult
    from skdbg.parsers.sk_log_ahead import SkLogsAhead
    from skdbg.parsers.sk_log_outline import SkLogOutline
    from skdbg.parsers.skmeta_lines import Provenance
    from skdbg.parsers.super_kernel_log import DeferredWait, SuperKernelLogResult
    from skdbg.parsers.task_queue import TaskQueueFile

T = TypeVar("T")

#: receives ``(path, size read, SHA-256 hex, mtime)`` of a plog the scan hashed while reading it; the
#: mtime is the ``fstat`` of the descriptor read when it gave the size read, else None
DigestSink = Callable[[str, int, str, "float | None"], None]

#: one vocabulary for every table: the upstream field names a CANN engineer knows (DESIGN.md)
UPSTREAM_COLUMNS: dict[str, str] = {
    "node_id": "nodeId",
    "stream_id": "streamId",
    "stream_idx_in_graph": "streamIdxInGraph",
    "node_idx_in_stream": "nodeIdxInStream",
    "func_name": "funcName",
    "kernel_type": "kernelType",
    "task_ratio": "taskRatio",
    "num_blocks": "numBlocks",
    "cube_num": "cubeNum",
    "vec_num": "vecNum",
    "is_sche_mode_on": "isScheModeOn",
    "need_mix_kernel_split": "needMixKernelSplit",
    "is_simt_op": "isSimtOp",
    "dyn_ubuf_size": "dynUbufSize",
    "alloc_ubuf_size": "allocUbufSize",
    "resolved_num": "resolvedNum",
    "bin_hdl": "binHdl",
    "func_hdl": "funcHdl",
    "launch_kernel_cfg": "launchKernelCfg",
    "dev_args": "devArgs",
    "scope_id": "scopeId",
    "sk_func_name": "skFuncName",
    "node_count": "nodeCount",
}


@dataclass(frozen=True, slots=True)
class SideFiles:
    """Paths of the scene's side files (scene-layout.md); None when absent."""

    run_json: Path | None = None
    env_probe: Path | None = None
    source_sites: Path | None = None


@dataclass(frozen=True, slots=True)
class TableSpec:
    """One table ``skdbg inspect --table`` can print: its name, what it holds, the artifact roles it is built
    from (a failure of one of them is reported against the table) and its builder."""

    name: str
    description: str
    roles: tuple[str, ...]  # artifact roles it is built from (for error attribution)
    build: Callable[[], pd.DataFrame]


@dataclass(slots=True)
class PlogEvidence:
    """Fault-relevant content of the plogs of one process (pid).

    Its marker lines are :attr:`lines`. They are filed as records (:attr:`records`), but for the SK
    handler lines a forked scan sent as rows, which are kept as rows (:attr:`sk_rows`,
    :mod:`skdbg.parsers.plog_rows`): the analysis reads those as columns, and :attr:`lines` makes them
    records when it is first read."""

    pid: int
    kind: str  # "plog" | "device"
    files: list[str]
    records: list[PlogLine] = field(default_factory=list)  # in time order (``ts_key``), stably
    faults: list[RuntimeRecord] = field(default_factory=list)
    error_manager: list[ErrorManagerLine] = field(default_factory=list)
    unrecognized: list[Unrecognized] = field(default_factory=list)
    foreign: list[PlogLine] = field(default_factory=list)  # marker lines whose header names another pid (F1)
    sk_rows: list[PlogRow] = field(default_factory=list)  # in file and line order
    #: :attr:`lines` as last merged, with the lengths of :attr:`records` and :attr:`sk_rows` it was made of
    _merged: tuple[int, int, list[PlogLine]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def lines(self) -> list[PlogLine]:
        """Every marker line of the process's own, in time order (``ts_key``; stably, from the files in
        their order and each file's lines by number): :attr:`records` itself when no line was kept as
        a row, else the records and the rows made records, merged when first read (again should either
        grow). Read it only: the filing writes :attr:`records` and :attr:`sk_rows`."""
        if not self.sk_rows:
            return self.records
        merged = self._merged
        if merged is None or merged[:2] != (len(self.records), len(self.sk_rows)):
            from skdbg.parsers.plog_rows import merged_lines

            merged = self._merged = (len(self.records), len(self.sk_rows), merged_lines(self))
        return merged[2]


class _Part(Generic[T]):
    """One file of a model directory as an attribute of :class:`ModelEvidence`: parsed when first read
    (``ModelEvidence._part``); None when the file is absent or unreadable."""

    __slots__ = ("name",)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> _Part[T]: ...

    @overload
    def __get__(self, obj: ModelEvidence, owner: type) -> T | None: ...

    def __get__(self, obj: ModelEvidence | None, owner: type) -> _Part[T] | T | None:
        return self if obj is None else cast("T | None", obj._part(self.name))


class ModelEvidence:
    """The parsed files of one ``sk_meta/<pid>/model_<m>`` directory (None = file absent/unreadable),
    each parsed when first asked for.

    Why lazy: a scene copied from a job holds every rank's ``sk_meta/<pid>/``, and an analysis needs all
    of one rank's files but only the exception blocks of the others (super_kernel.log), to find where
    the fault is. Parsed whole, each more rank cost ~0.25 s on the bench model. :meth:`load_all` parses
    the rest (tables, the report, a rank's full picture)."""

    __slots__ = ("model", "_parts", "_unreadable", "_load", "_lock", "derived")

    def __init__(
        self,
        model: ModelDir,
        load: Callable[[ModelDir, str, Collection[str]], tuple[dict[str, Any], list[Gap]]],
    ) -> None:
        self.model = model
        self._parts: dict[str, Any] = {}  # part -> its parse (None: absent or unreadable), once loaded
        #: part -> the unreadable-file gaps its parse left (``Evidence.gaps`` lists them in part order)
        self._unreadable: dict[str, list[Gap]] = {}
        self._load = load
        #: one parse per part when two threads ask at once (the TUI's analysis worker and its tables)
        self._lock = threading.Lock()
        #: what the layers above derive from these parts, made once and kept while the directory lives
        #: (triage's SKs: :func:`skdbg.triage.skview.instances_of`)
        self.derived: dict[str, Any] = {}

    def _part(self, name: str) -> Any:
        parts = self._parts
        if name not in parts:
            with self._lock:
                if name not in parts:
                    found, gaps = self._load(self.model, name, parts.keys())
                    file_part = _FILE_PART.get(name, name)
                    self._unreadable.setdefault(file_part, []).extend(gaps)
                    parts.update(found)  # last: a reader that finds the part finds it whole
        return parts[name]

    def load_all(self, *, facts: bool = True) -> None:
        """Parse every part; with ``facts`` False, what an analysis of this directory's rank reads:
        all but super_kernel.log's facts unless the file may hold deferred waits (its file is still
        read, for the exception blocks and the outline, so an unreadable file is known), and of
        sk_node_detail.log only which processes wrote it (its outline: no node parsed). The outline
        is asked for first of super_kernel.log's parts: then the facts triage will ask for come from
        the same read. super_kernel.log is read after the other files, so that the plog scan's child,
        once its scan is done, can read it meanwhile (:mod:`skdbg.parsers.sk_log_ahead`); the parts'
        listings keep their order whatever the order of the reads."""
        # an analysis reads sk_node_detail.log's outline, unless its nodes are parsed already (which
        # give the same provenance); a full load parses the nodes, and needs no outline
        skipped = "node_detail_outline" if facts or "node_detail" in self._parts else "node_detail"
        for name in MODEL_PARTS:
            if name not in SK_LOG_PARTS and name != skipped:
                self._part(name)
        # super_kernel.log last: the plog scan's child may read it meanwhile (parsers/sk_log_ahead.py)
        if not facts:
            self._part("sk_log_outline")
        for name in SK_LOG_PARTS:
            if facts or name != "super_kernel_log":
                self._part(name)

    def loaded_any(self, names: Collection[str]) -> bool:
        """Some part of ``names`` is parsed already (or being handed over whole)."""
        return any(n in self._parts for n in names)

    def loaded(self) -> list[Any]:
        """The parts parsed so far (not None), in :data:`MODEL_PARTS` order, but the exception blocks
        (listed with the scene's merged handler, :attr:`Evidence.handler`) and the two outlines (no
        gaps of their own); parses nothing."""
        parts = self._parts
        return [parts[n] for n in MODEL_PARTS if n not in _NOT_LISTED and parts.get(n) is not None]

    def deferred_waits(self) -> tuple[DeferredWait, ...]:
        """super_kernel.log's deferred WAIT placements (the one fact of that file triage reads).

        The facts are parsed only when the outline says a line may be one: otherwise the full
        parse would find none (:func:`~skdbg.parsers.sk_log_outline.outline_super_kernel_log`)."""
        outline = self.sk_log_outline
        if outline is None or not outline.may_defer_waits:
            return ()
        facts = self.super_kernel_log
        return () if facts is None else tuple(facts.deferred_waits)

    def provenance(self, role: str) -> Provenance | None:
        """The file-logger provenance of the ``role`` log (``first_prefix``, ``pid_first_line``;
        gate F4/F7), None when it is no log or is unreadable. super_kernel.log's comes from its
        outline: its facts are not parsed for it; sk_node_detail.log's from its own outline, unless
        its nodes are parsed already."""
        from skdbg.parsers.skmeta_lines import MetaResultBase

        if role == "super_kernel_log":
            return self.sk_log_outline
        if role == "node_detail" and "node_detail" not in self._parts:
            return self.node_detail_outline  # the nodes are not parsed for it
        parsed = getattr(self, role, None) if role in MODEL_PARTS else None
        return parsed if isinstance(parsed, MetaResultBase) else None

    def unreadable(self) -> list[Gap]:
        """The unreadable-file gaps of the parts parsed so far, in :data:`MODEL_PARTS` order."""
        return [g for n in MODEL_PARTS for g in self._unreadable.get(n, ())]

    # the parts, in their listing order (gaps, unrecognized lines), whatever order they are parsed in
    # (:meth:`load_all` reads super_kernel.log's last)
    fused_nodes: _Part[FusedNodesResult] = _Part()
    node_detail: _Part[NodeDetailResult] = _Part()
    #: what an analysis needs of ``node_detail``: which processes wrote the file (gates F4/F7), from a
    #: read of it alone (:mod:`skdbg.parsers.filelog_outline`); ``node_detail`` is parsed when asked
    node_detail_outline: _Part[FileLogOutline] = _Part()
    scope_split: _Part[ScopeSplitResult] = _Part()
    fail_reasons: _Part[FailReasonsResult] = _Part()
    device_args: _Part[DeviceArgsResult] = _Part()
    super_kernel_log: _Part[SuperKernelLogResult] = _Part()
    handler: _Part[SkHandlerResult] = _Part()  # the exception blocks routed into super_kernel.log
    #: what triage needs of super_kernel.log's facts (provenance, may it hold deferred waits), from the
    #: read that gives ``handler``; the facts themselves (``super_kernel_log``) are parsed when asked
    sk_log_outline: _Part[SkLogOutline] = _Part()
    task_queue: _Part[TaskQueueFile] = _Part()
    graph_origin: _Part[GraphFile] = _Part()
    graph_updated: _Part[GraphFile] = _Part()
    images: _Part[ImageTable] = _Part()


#: the parts of a model directory in their listing order (:class:`ModelEvidence`'s declaration order)
MODEL_PARTS = tuple(name for name, value in vars(ModelEvidence).items() if isinstance(value, _Part))
#: the parts read from super_kernel.log (one read gives those not parsed yet; their unreadable-file gap
#: is filed under ``super_kernel_log``)
SK_LOG_PARTS = ("super_kernel_log", "handler", "sk_log_outline")
#: parts :meth:`ModelEvidence.loaded` leaves out: no file's parse of their own
_NOT_LISTED = frozenset({"handler", "sk_log_outline", "node_detail_outline"})
#: parts that are a cheaper reading of another part's file: their unreadable-file gap is filed under
#: that file's part (one place in the listing, whichever was read)
_FILE_PART = {**dict.fromkeys(SK_LOG_PARTS, "super_kernel_log"), "node_detail_outline": "node_detail"}


#: the super_kernel.log bytes a plog scan's child may be offered to read for this process (but the
#: first file, whatever its size: :meth:`Evidence.sk_logs_ahead`): eight ranks of the bench model
SK_LOGS_AHEAD_BYTES = 128 << 20
#: and the files at most: each is claimed alone, and the claims hold at most 511 chunks (a pipe's
#: atomic write), which the hashing shares
SK_LOGS_AHEAD_FILES = 64

#: where in ``Evidence._gaps`` the model directories' unreadable-file gaps go (a full parse of sk_meta
#: put them there, so every listing of gaps keeps that order however lazily the files are parsed)
_MODEL_GAPS = Gap("model-directories", "")


#: part -> (module, function) of its parser, imported when the part is first read
_PART_PARSERS = {
    "fused_nodes": ("skdbg.parsers.fused_nodes", "parse_fused_nodes"),
    "node_detail": ("skdbg.parsers.node_detail", "parse_node_detail"),
    "scope_split": ("skdbg.parsers.scope_split", "parse_scope_split"),
    "fail_reasons": ("skdbg.parsers.fail_reasons", "parse_fail_reasons"),
    "device_args": ("skdbg.parsers.device_args", "parse_device_args"),
    "task_queue": ("skdbg.parsers.task_queue", "parse_task_queue"),
    "graph_origin": ("skdbg.parsers.graph_json", "parse_graph_json"),  # rare files: 20 ms of imports
    "graph_updated": ("skdbg.parsers.graph_json", "parse_graph_json"),
}


def _part_parser(name: str) -> Callable[[Path], Any]:
    """The parser of a model directory's file ``name`` (imported here: each is needed only once asked)."""
    module, function = _PART_PARSERS[name]
    parse: Callable[[Path], Any] = getattr(importlib.import_module(module), function)
    return parse


class Evidence:
    """Lazy, cached parse of one scene; every failure becomes a :class:`Gap` in :attr:`gaps`."""

    def __init__(
        self,
        root: Path,
        plogs: Sequence[PlogFile],
        layout: SkMetaLayout,
        side: SideFiles = SideFiles(),
        *,
        pid: int | None = None,
        extra_tables: Sequence[TableSpec] = (),
        gaps: Sequence[Gap] = (),
    ) -> None:
        self.root = root
        self.pid = pid
        self.layout = layout
        self.side = side
        self.plog_files = [p for p in plogs if pid is None or p.pid == pid]
        self.models = [m for m in layout.models if pid is None or m.pid is None or m.pid == pid]
        self._gaps: list[Gap] = list(gaps)
        self.errors: dict[str, list[ParseError]] = {}
        self._extra = {t.name: t for t in extra_tables}
        self._relpaths: dict[str, str] = {}
        self._model_evidence: list[ModelEvidence] | None = None
        self._models_lock = threading.Lock()
        self._real_dirs: dict[str, Path] = {}  # resolved folders of the files relpath was asked for
        self._plog_scan: _PlogScan | None = None
        self._on_digest: DigestSink | None = None
        #: the super_kernel.log files the plog scan's child may read for this process (None: read here)
        self._sk_ahead: SkLogsAhead | None = None
        #: source_sites.json parsed ahead (:meth:`read_source_sites_ahead`) until :attr:`source_sites`
        #: takes it
        self._sites_ahead: SourceSitesFile | None = None

    # ------------------------------------------------------------------ loading helpers

    def _guard(
        self,
        role: str,
        load: Callable[[], T],
        sink: tuple[list[Gap], dict[str, list[ParseError]]] | None = None,
    ) -> T | None:
        """Run one artifact load; a ParseError becomes a gap (and is kept for the CLI's exit 3).

        ``sink`` receives them instead of this object's lists (the background plog scan's own)."""
        gaps, errors = sink if sink is not None else (self._gaps, self.errors)
        try:
            return load()
        except ParseError as exc:
            drop_tracebacks(exc)
            errors.setdefault(role, []).append(exc)
            gaps.append(Gap("unreadable", str(exc), exc.source))
            return None

    def relpath(self, file: str) -> str:
        """``file`` relative to the scene root (as given when outside it); cached — every citation asks."""
        hit = self._relpaths.get(file)
        if hit is None:
            try:
                hit = real_path(file, self._real_dirs).relative_to(self.root).as_posix()
            except (ValueError, OSError):
                hit = file
            self._relpaths[file] = hit
        return hit

    # ------------------------------------------------------------------ plog

    def start_plog_scan(
        self, on_digest: DigestSink | None = None, also: ChildWork | None = None
    ) -> list[str]:
        """Scan the plogs from now on, beside the caller; :attr:`plogs` collects the result.

        Why: the scan of a GB plog takes as long as the caller's sk_meta parsing, or longer; run
        beside it, not before it. Where a child process may be forked
        (:func:`~skdbg.parsers.plog_fork.start_forked_plog_scan`: Linux, two CPUs, no other thread,
        a MiB of plog or more), the child scans and a worker thread files what it sends; elsewhere
        the worker thread scans. Its gaps and errors go to lists of its own and are put back where a
        serial scan would have put them, so every output stays the same either way.

        With ``on_digest``, each plog's SHA-256 is computed from the bytes the scan reads and handed
        over as ``(path, size, sha256)`` (gate G5 then reads no plog a second time). Returns the paths
        whose digest will be handed over (none when the plogs are already loaded or being scanned).
        ``also``: work a forked child shares with this process (:attr:`plog_scan_forked` says whether it
        takes it; else it is the caller's)."""
        if self._plog_scan is not None or "plogs" in self.__dict__ or not self.plog_files:
            return []
        from skdbg.parsers.plog_fork import start_forked_plog_scan

        self._on_digest = on_digest
        # started before the thread that files its results: a process may fork only while no other
        # thread runs (None: the scan runs in that thread, as before)
        forked = start_forked_plog_scan(self._plog_paths()[1], hashed=on_digest is not None, also=also)
        try:
            self._plog_scan = _PlogScan(self, forked)
        except BaseException:  # no thread to file what the child sends (Ctrl-C, no thread to be had)
            if forked is not None:
                forked.abandon()
            raise
        return [f.path for f in self.plog_files] if on_digest is not None else []

    def sk_logs_ahead(self) -> SkLogsAhead | None:
        """The super_kernel.log files the plog scan's child may read for this process, once its scan is
        done (:mod:`skdbg.parsers.sk_log_ahead`): every model directory's that is not read yet, in the
        order an analysis reads them (one rank's files whole, or each rank's exception blocks), up to
        :data:`SK_LOGS_AHEAD_FILES` files and :data:`SK_LOGS_AHEAD_BYTES` in all (the first whatever its
        size); None when there are none.

        Why a bound: the child reads them faster than this process parses them (~0.06 s a file against
        ~0.12 s a rank on the bench model), and what it sends waits here until this process comes to the
        file: its runs take about the file's size in memory (a few times that for a file of short lines
        read one by one). Without a bound, a job's hundreds of ranks would pile up here."""
        made = self._model_evidence  # (not made here: that would mark the model gaps' place now)
        paths: list[str] = []
        total = 0
        for i, m in enumerate(self.models):
            path = m.files.get("super_kernel_log")
            if path is None or (made is not None and made[i].loaded_any(SK_LOG_PARTS)):
                continue
            with contextlib.suppress(OSError):  # its reader meets the error
                total += os.stat(path).st_size
            if paths and (total > SK_LOGS_AHEAD_BYTES or len(paths) >= SK_LOGS_AHEAD_FILES):
                break
            paths.append(str(path))
        if not paths:
            return None
        from skdbg.parsers.sk_log_ahead import SkLogsAhead

        return SkLogsAhead(paths)

    def expect_sk_logs(self, ahead: SkLogsAhead) -> None:
        """The plog scan's child was forked with ``ahead`` in its share of the work: the files are taken
        from it (read by the child, or claimed and read here)."""
        self._sk_ahead = ahead

    @property
    def plog_scan_started(self) -> bool:
        """The plogs are scanned already, or being scanned (:meth:`start_plog_scan` would do nothing)."""
        return self._plog_scan is not None or "plogs" in self.__dict__

    def ask_ahead_sk_meta(self) -> None:
        """Ask the disk now for the sk_meta files the main thread parses next (a scene of one rank:
        :func:`~skdbg.triage.engine.read_sk_meta` parses them all), when they are not in the page
        cache (:class:`~skdbg.parsers.readahead.FilesAhead`: one probe when they are, at most twice
        its window of bytes asked for).

        Why: on a scene read cold (just copied over), parsing each file waited for the disk at every
        few hundred KB the kernel's own read-ahead fetches, while the plog scan's child streamed the
        plog; asked for at once, the files arrive while the triage stages are imported and the first
        file is parsed."""
        models = self.models
        if not models or len({m.pid for m in models}) > 1:
            return
        from skdbg.parsers.readahead import FilesAhead

        # in the order they are parsed: super_kernel.log last (load_all)
        paths = [p for m in models for p in m.files.values()]
        paths.sort(key=lambda p: p.name == "super_kernel.log")  # (stable: the rest keep their order)
        FilesAhead(paths).reached(0)  # (none: nothing asked)

    def help_plog_scan(self) -> bool:
        """Do a chunk of the forked scan's other work here (:meth:`ForkedPlogScan.help`), for a caller
        that would only wait for it otherwise; False when none is left or no scan was forked."""
        scan = self._plog_scan
        forked = None if scan is None else scan.forked
        return forked is not None and forked.help()

    @property
    def plog_scan_forked(self) -> bool:
        """The plog scan runs in a forked child (which also does the ``also`` work it was given)."""
        return self._plog_scan is not None and self._plog_scan.forked is not None

    @cached_property
    def plogs(self) -> list[PlogEvidence]:
        """Per process (rank) and log kind, rotated files merged in time order (row 10), pids apart (row 9)."""
        if self._plog_scan is not None:
            return self._plog_scan.collect()
        return self._load_plogs((self._gaps, self.errors))

    def _plog_paths(self) -> tuple[dict[tuple[str, int], list[PlogFile]], list[str]]:
        """The plog files per (kind, pid) and all their paths in the order the scan takes them."""
        from skdbg.parsers.plog import group_by_pid

        groups = group_by_pid(self.plog_files)
        return groups, [f.path for files in groups.values() for f in files]

    def _load_plogs(
        self, sink: tuple[list[Gap], dict[str, list[ParseError]]], forked: ForkedPlogScan | None = None
    ) -> list[PlogEvidence]:
        """Scan every plog and file its lines per process; ``forked``: the scan of the same paths, in
        the same order, started in a child process (its files are filed here exactly as a scan here
        yields them)."""
        out: list[PlogEvidence] = []
        groups, paths = self._plog_paths()
        # every file of every process in one pass: small files are searched many to a block; closed
        # here, not when collected (a stored ParseError's traceback keeps this frame, and the scan)
        if forked is None:
            from skdbg.parsers.plog_fork import scan_files

            scanning = scan_files(paths, CountingSha256 if self._on_digest is not None else None)
        else:
            # SK handler lines may stay rows (plog_rows), the files being each listed once (as a scene's
            # are: the rows' place in lines is told by a file's index)
            scanning = forked.files(keep_sk_rows=len(set(paths)) == len(paths))
        with closing(scanning) as scanned:
            for (kind, pid), files in groups.items():
                pe = PlogEvidence(pid=pid, kind=kind, files=[f.path for f in files])
                for f in files:
                    done = next(scanned)
                    self._guard("plog", partial(self._file_scan, f, pe, done, sink[0]), sink)
                _sort_by_time(pe.records)
                out.append(pe)
        return out

    def _file_scan(self, f: PlogFile, pe: PlogEvidence, done: ScannedFile, gaps: list[Gap]) -> None:
        """File one plog's scan (:func:`~skdbg.parsers.plog.scan_plog_parts`' batches, its gaps and its
        digest) into ``pe``; its :class:`ParseError` is raised here, after what was read before it."""
        from skdbg.parsers.plog_line import plog_lines_of_rows
        from skdbg.parsers.plog_rows import SkRows, file_sk_rows

        # records only: no scan here asks for rows, and a forked scan's files come with its rows made
        # records (ForkedPlogScan.files), but for batches of SK-logger lines, which may stay rows
        run: list[list[PlogLine]] = []  # consecutive batches of records only, filed together
        for items, records_only in done.parts:
            if isinstance(items, SkRows):
                if not file_sk_rows(items, pe):  # another pid's line, or a stamp out of range: records
                    run.append(plog_lines_of_rows(items))
                continue
            if records_only:
                run.append(cast("list[PlogLine]", items))
                continue
            _file_record_batches(run, pe)
            run = []
            _file_items(cast("list[PlogLine | Unrecognized]", items), pe)
        _file_record_batches(run, pe)
        gaps.extend(done.gaps)  # a line over MAX_LINE is a recorded gap
        if done.error is not None:
            raise done.error
        on_digest, hasher, st = self._on_digest, done.hasher, done.stat
        if isinstance(hasher, (CountingSha256, Sha256Done)) and on_digest is not None:
            # the mtime of the bytes hashed: known when the file's fstat gave the size read (as
            # skdbg.scene._small_digest judges a read whole); else the scene stats the file as before
            mtime = st.st_mtime if st is not None and st.st_size == hasher.size else None
            on_digest(f.path, hasher.size, hasher.hexdigest(), mtime)

    # ------------------------------------------------------------------ sk_meta

    @property
    def model_evidence(self) -> list[ModelEvidence]:
        """One :class:`ModelEvidence` per model directory, its files parsed when first asked for; made
        once, under a lock (``functools.cached_property`` has none from Python 3.12: two threads would
        each make a list, and the model gaps' place would be marked twice)."""
        made = self._model_evidence
        if made is None:
            with self._models_lock:
                made = self._model_evidence
                if made is None:
                    self._gaps.append(_MODEL_GAPS)
                    made = self._model_evidence = [ModelEvidence(m, self._load_part) for m in self.models]
        return made

    def _load_part(self, m: ModelDir, name: str, have: Collection[str]) -> tuple[dict[str, Any], list[Gap]]:
        """Parse part ``name`` of model directory ``m``, whose parts ``have`` are parsed already:
        ``({part: parse or None}, unreadable gaps)`` (super_kernel.log may give all three of its parts,
        :data:`SK_LOG_PARTS`, from one read)."""
        f = m.files
        gaps: list[Gap] = []
        sink = (gaps, self.errors)
        if name in SK_LOG_PARTS:
            return self._load_sk_log(m, name, have, sink), gaps
        if name == "node_detail_outline":
            if "node_detail" not in f or "node_detail" in have:
                # (nodes parsed already give the provenance: the file is not read again for it, and
                # :meth:`ModelEvidence.provenance` asks them)
                return {name: None}, gaps
            from skdbg.parsers.discovery import MODEL_FILES
            from skdbg.parsers.filelog_outline import outline_file_log

            path, what = f["node_detail"], MODEL_FILES["node_detail"]  # named as its parser names it
            outline = self._guard("node_detail", lambda: outline_file_log(path, what=what), sink)
            if outline is None:
                # an unreadable file is known as such for the full parse too: not read (and reported) again
                return {name: None, "node_detail": None}, gaps
            return {name: outline}, gaps
        if name == "images":
            if not m.bin_files:
                return {name: None}, gaps
            from skdbg.parsers.binfiles import load_image_table

            return {name: self._guard("bin_files", lambda: load_image_table(m.path), sink)}, gaps
        if name not in f:
            return {name: None}, gaps
        parse = _part_parser(name)
        return {name: self._guard(name, lambda: parse(f[name]), sink)}, gaps

    def _load_sk_log(
        self,
        m: ModelDir,
        name: str,
        have: Collection[str],
        sink: tuple[list[Gap], dict[str, list[ParseError]]],
    ) -> dict[str, Any]:
        """The parts of ``m``'s super_kernel.log not in ``have``, from one read.

        The exception blocks (``handler``) and the outline come from every read. The facts are parsed
        when asked for, or, to spare a second read, when the outline says triage will ask for them (a
        line may be a deferred wait) and the read is for the rank under analysis: the outline was
        asked for (:meth:`ModelEvidence.load_all` without facts) or the file holds an incident (the
        faulting rank's). Otherwise they are left until asked for, and the file is read again. No
        part is ever parsed twice. (A file rewritten between the two reads gives facts of its new
        text: scenes are copies, read as they lie.)"""
        if "super_kernel_log" not in m.files:
            return dict.fromkeys(SK_LOG_PARTS)
        from skdbg.parsers.sk_handler import parse_sk_log
        from skdbg.parsers.sk_log_outline import outline_super_kernel_log
        from skdbg.parsers.sklog_runs import read_super_kernel_log

        path = m.files["super_kernel_log"]
        ahead = self._sk_ahead
        got = None if ahead is None else ahead.take(str(path), self.help_plog_scan)
        if isinstance(got, ParseError):  # the child's read failed: filed as this process's read would be
            lines = self._guard("super_kernel_log", partial(_raise, got), sink)
        elif got is not None:
            lines = got
        else:
            lines = self._guard("super_kernel_log", lambda: read_super_kernel_log(path), sink)
        if lines is None:
            return {part: None for part in SK_LOG_PARTS if part not in have}
        found: dict[str, Any] = {}
        if "handler" not in have:
            found["handler"] = parse_sk_log(lines)  # the handler's lines, a run at a time
        if "sk_log_outline" not in have:
            found["sk_log_outline"] = outline_super_kernel_log(lines)
        handler, outline = found.get("handler"), found.get("sk_log_outline")
        asked_next = (
            outline is not None
            and outline.may_defer_waits
            and (name == "sk_log_outline" or (handler is not None and bool(handler.incidents)))
        )
        if "super_kernel_log" not in have and (name == "super_kernel_log" or asked_next):
            from skdbg.parsers.super_kernel_log import parse_super_kernel_log  # (its records load here)

            found["super_kernel_log"] = parse_super_kernel_log(lines, file=str(path))
        return found

    # ------------------------------------------------------------------ SK exception handler

    @cached_property
    def handler(self) -> SkHandlerResult:
        """SK incidents from every plog and every super_kernel.log, copies merged (row 47)."""
        from skdbg.parsers.plog_rows import sk_columns
        from skdbg.parsers.sk_copies import derive_plog_copy
        from skdbg.parsers.sk_handler import SkHandlerResult, SkMessage, dedupe_incidents, parse_sk_messages

        parts: list[SkHandlerResult] = []
        filelog = [me.handler for me in self.model_evidence if me.handler is not None]
        for pe in self.plogs:
            # the plog block is usually a copy of one super_kernel.log block already parsed (row 47)
            sk = sk_columns(pe) if filelog else None
            part = next(
                (d for f in filelog if sk is not None and (d := derive_plog_copy(sk, f)) is not None), None
            )
            if part is None:
                msgs = (m for m in (SkMessage.from_plog(line) for line in pe.lines) if m is not None)
                part = parse_sk_messages(msgs)
            parts.append(part)
        parts.extend(filelog)
        merged = SkHandlerResult()
        all_incidents: list[Incident] = []
        non_aot: list[NonSkFault] = []
        for part in parts:
            all_incidents.extend(part.incidents)
            non_aot.extend(part.non_aot)
            merged.unrecognized.extend(part.unrecognized)
            merged.gaps.extend(part.gaps)
            merged.foreign_lines += part.foreign_lines
        merged.incidents = dedupe_incidents(all_incidents)
        merged.non_aot = non_aot
        return merged

    @property
    def incidents(self) -> list[Incident]:
        return self.handler.incidents

    # ------------------------------------------------------------------ profiling, side files

    @cached_property
    def prof(self) -> pd.DataFrame:
        from skdbg.parsers.sk_prof import ProfReader, prof_frame

        frames = []
        for path in self.layout.prof_files:
            reader = ProfReader(path)
            events = self._guard("sk_prof", lambda reader=reader: list(reader))  # type: ignore[misc]
            self._gaps.extend(reader.gaps)
            if events:
                frames.append(prof_frame(events))
        return _concat(frames) if frames else prof_frame([])

    @cached_property
    def run(self) -> RunFile | None:
        from skdbg.parsers.run_identity import parse_run_json

        p = self.side.run_json
        return None if p is None else self._guard("run_json", lambda: parse_run_json(p))

    @cached_property
    def env_probe(self) -> EnvProbeFile | None:
        from skdbg.parsers.run_identity import parse_env_probe

        p = self.side.env_probe
        return None if p is None else self._guard("env_probe", lambda: parse_env_probe(p))

    @cached_property
    def source_sites(self) -> SourceSitesFile | None:
        from skdbg.parsers.run_identity import parse_source_sites

        p = self.side.source_sites
        if p is None:
            return None
        ahead, self._sites_ahead = self._sites_ahead, None
        if ahead is not None:  # parsed ahead: its gaps count from now on, as if parsed now
            return ahead
        return self._guard("source_sites", lambda: parse_source_sites(p))

    def read_source_sites_ahead(self) -> None:
        """Parse ``source_sites.json`` now, for :attr:`source_sites` to take when first asked (a
        proposal asks, once the plogs are in): while the plog scan's child still scans, this process
        would only wait. Nothing is reported here: the file's gaps count once the property takes the
        result, as they did when it was parsed then; a parse that raises is dropped, and the property
        parses the file again and meets the error in its place. A failed read is not counted either
        (:func:`~skdbg.parsers.fsguard.uncounted_reads`): a file no stage asks for is never reported,
        and the result cache keeps the analysis as it would have.

        Why: its 2,500 entries took ~2.5 ms of the stretch after the plogs on the bench scene."""
        p = self.side.source_sites
        if p is None or "source_sites" in self.__dict__ or self._sites_ahead is not None:
            return
        from skdbg.parsers.run_identity import parse_source_sites

        with contextlib.suppress(Exception), uncounted_reads():
            self._sites_ahead = parse_source_sites(p)

    # ------------------------------------------------------------------ gaps / unrecognized

    def load_all(self) -> None:
        """Parse everything now (the CLI's table index and the gate need the full picture)."""
        self.start_plog_scan()
        for me in self.model_evidence:
            me.load_all()
        _ = (self.plogs, self.handler, self.prof, self.run, self.env_probe)
        _ = self.source_sites

    def load_models(self, pid: int | None, *, facts: bool = True) -> None:
        """Parse every file of ``pid``'s model directories and of those under no pid (``pid`` None: of
        all of them, no rank being known), as a full parse would have, gaps included. With ``facts``
        False, what an analysis reads (:meth:`ModelEvidence.load_all`): super_kernel.log's facts may
        be left out, and sk_node_detail.log's nodes are, and the gaps and unrecognised lines of their
        parse with them (none of the read's gaps, which the analysis reports)."""
        for me in self.model_evidence:
            if pid is None or me.model.pid is None or me.model.pid == pid:
                me.load_all(facts=facts)

    @property
    def gaps(self) -> list[Gap]:
        out: list[Gap] = []
        for gap in self._gaps:
            if gap is _MODEL_GAPS:
                for me in self._loaded_models():
                    out.extend(me.unreadable())
            else:
                out.append(gap)
        for me in self._loaded_models():
            for part in me.loaded():
                out.extend(getattr(part, "gaps", []))
        if "handler" in self.__dict__:
            out.extend(self.handler.gaps)
        for side in (
            self.__dict__.get("run"),
            self.__dict__.get("env_probe"),
            self.__dict__.get("source_sites"),
        ):
            if side is not None:
                out.extend(side.gaps)
        return out

    @property
    def unrecognized(self) -> list[Unrecognized]:
        out: list[Unrecognized] = []
        for pe in self.__dict__.get("plogs", []):
            out.extend(pe.unrecognized)
        for me in self._loaded_models():
            for part in me.loaded():
                out.extend(getattr(part, "unrecognized", []))
        if "handler" in self.__dict__:
            out.extend(self.handler.unrecognized)
        return out

    def _loaded_models(self) -> list[ModelEvidence]:
        loaded: list[ModelEvidence] = self._model_evidence or []
        return loaded

    # ------------------------------------------------------------------ tables

    @cached_property
    def _tables(self) -> dict[str, TableSpec]:
        from skdbg.parsers.runtime_faults import runtime_frame
        from skdbg.parsers.sk_handler import (
            cores_frame,
            counters_frame,
            dfx_frame,
            incidents_frame,
            traces_frame,
        )
        from skdbg.parsers.sk_prof import child_summary

        specs = [
            TableSpec(
                "plog-faults",
                "runtime fault lines: kernel fault, core reports, dump, GE tracking, error codes (§1.5)",
                ("plog",),
                self._plog_faults,
            ),
            TableSpec(
                "error-manager",
                "EZ9999-style error-manager text found in plogs",
                ("plog",),
                lambda: self._per_pid(lambda pe: runtime_frame(pe.error_manager)),
            ),
            TableSpec(
                "incidents",
                "SK exception-handler incidents: entry, dialect, op_trace, completeness (§1.4)",
                ("plog", "super_kernel_log"),
                lambda: incidents_frame(self.incidents),
            ),
            TableSpec(
                "cores",
                "exception cores: PCs, matched node/entry, symbol, counter trace, COND decode",
                ("plog", "super_kernel_log"),
                lambda: cores_frame(self.incidents),
            ),
            TableSpec(
                "core-traces",
                "counter trace per core (§1.4.4): state, op running / finished / next, symbols",
                ("plog", "super_kernel_log"),
                lambda: traces_frame(self.incidents),
            ),
            TableSpec(
                "dfx",
                "the SkDfxInfo table printed by the handler: node, sizes, entries, origin name",
                ("plog", "super_kernel_log"),
                lambda: dfx_frame(self.incidents),
            ),
            TableSpec(
                "counters",
                "per-core SkCounterInfo (opState/opId) printed by the handler",
                ("plog", "super_kernel_log"),
                lambda: counters_frame(self.incidents),
            ),
            TableSpec(
                "non-aot",
                "faults of SK entries without AOT handler data (sk_constant_entry_*, te_superkernel_*)",
                ("plog",),
                self._non_aot,
            ),
            TableSpec(
                "sk-functions",
                "one row per 'SK Function' block of sk_fused_nodes.log",
                ("fused_nodes",),
                lambda: self._per_model(lambda me: me.fused_nodes, lambda r: r.blocks_frame()),
            ),
            TableSpec(
                "fused-nodes",
                "children of every SK (sk_fused_nodes.log)",
                ("fused_nodes",),
                lambda: self._per_model(lambda me: me.fused_nodes, lambda r: r.nodes_frame()),
            ),
            TableSpec(
                "node-detail",
                "scope tagging per graph node (sk_node_detail.log)",
                ("node_detail",),
                lambda: self._per_model(lambda me: me.node_detail, lambda r: r.to_frame()),
            ),
            TableSpec(
                "scope-split",
                "scope split passes and break reasons (sk_scope_split.log)",
                ("scope_split",),
                lambda: self._per_model(lambda me: me.scope_split, lambda r: r.to_frame()),
            ),
            TableSpec(
                "fail-reasons",
                "unfusible kernels and reasons (sk_fusion_fail_reasons.log)",
                ("fail_reasons",),
                lambda: self._per_model(lambda me: me.fail_reasons, lambda r: r.to_frame()),
            ),
            TableSpec(
                "original-scopes",
                "scopes before fusion (sk_fusion_fail_reasons.log)",
                ("fail_reasons",),
                lambda: self._per_model(lambda me: me.fail_reasons, lambda r: r.original_frame()),
            ),
            TableSpec(
                "fused-scopes",
                "scopes after fusion and their status (sk_fusion_fail_reasons.log)",
                ("fail_reasons",),
                lambda: self._per_model(lambda me: me.fail_reasons, lambda r: r.fused_frame()),
            ),
            TableSpec(
                "device-args",
                "task queues as uploaded: task index -> nodeId (sk_device_args.log)",
                ("device_args",),
                lambda: self._per_model(lambda me: me.device_args, lambda r: r.to_frame()),
            ),
            TableSpec(
                "device-dfx",
                "DfxInfo as uploaded (sk_device_args.log)",
                ("device_args",),
                lambda: self._per_model(lambda me: me.device_args, lambda r: r.dfx_frame()),
            ),
            TableSpec(
                "task-queue",
                "structured task queues per scope (sk_task_queue.json)",
                ("task_queue",),
                lambda: self._per_model(lambda me: me.task_queue, lambda r: r.to_frame()),
            ),
            TableSpec(
                "build-facts",
                "offline facts of super_kernel.log: binaries, split symbols, reorders",
                ("super_kernel_log",),
                lambda: self._per_model(lambda me: me.super_kernel_log, lambda r: r.to_frame()),
            ),
            TableSpec(
                "graph-nodes",
                "graph nodes of sk_graph_origin.json / sk_graph_updated.json",
                ("graph_origin", "graph_updated"),
                self._graph_nodes,
            ),
            TableSpec(
                "images",
                "kernel ELFs of bin_files/: device base, extent, child or entry",
                ("bin_files",),
                lambda: self._per_model(lambda me: me.images, lambda r: r.to_frame()),
            ),
            TableSpec(
                "prof", "per-child timing events (sk_prof_device_<d>.json)", ("sk_prof",), lambda: self.prof
            ),
            TableSpec(
                "prof-children",
                "per-child timing summary (sk_prof_device_<d>.json)",
                ("sk_prof",),
                lambda: child_summary(self.prof),
            ),
            TableSpec(
                "run",
                "run identity (run.json)",
                ("run_json",),
                lambda: self.run.to_frame() if self.run is not None else empty_frame(),
            ),
            TableSpec(
                "env-probe",
                "wrapper capability probe (env/check_environment.json)",
                ("env_probe",),
                lambda: self.env_probe.to_frame() if self.env_probe is not None else empty_frame(),
            ),
            TableSpec(
                "source-sites",
                "nodeId -> marker-file line (source_sites.json)",
                ("source_sites",),
                lambda: self.source_sites.to_frame() if self.source_sites is not None else empty_frame(),
            ),
            TableSpec(
                "gaps", "evidence that is missing or unusable, and how to collect it", (), self._gaps_frame
            ),
            TableSpec(
                "unrecognized", "lines kept but not understood by any parser", (), self._unrecognized_frame
            ),
        ]
        tables = {t.name: t for t in specs}
        tables.update(self._extra)
        return tables

    def table_names(self) -> list[str]:
        return list(self._tables)

    def frame(self, name: str) -> pd.DataFrame:
        """The table ``name`` with upstream column names and ``file`` relative to the scene root."""
        spec = self._tables[name]
        if name in ("gaps", "unrecognized"):
            self.load_all()  # these two summarise every artifact
        frame = spec.build()
        out: pd.DataFrame = frame.rename(
            columns={k: v for k, v in UPSTREAM_COLUMNS.items() if v not in frame.columns}
        )
        if "file" in out.columns and not out.empty:
            out["file"] = [self.relpath(f) if isinstance(f, str) else f for f in out["file"]]
        return out

    def table_errors(self, name: str) -> list[ParseError]:
        return [e for role in self._tables[name].roles for e in self.errors.get(role, [])]

    def table_index(self) -> pd.DataFrame:
        """Every table with its row count (the listing of ``skdbg inspect SCENE``)."""
        rows = []
        for name, spec in self._tables.items():
            if name in ("gaps", "unrecognized"):
                continue
            rows.append({"table": name, "rows": len(self.frame(name)), "description": spec.description})
        rows.append(
            {"table": "gaps", "rows": len(self.gaps), "description": self._tables["gaps"].description}
        )
        rows.append(
            {
                "table": "unrecognized",
                "rows": len(self.unrecognized),
                "description": self._tables["unrecognized"].description,
            }
        )
        return rows_frame(rows, ["table", "rows", "description"])

    # ------------------------------------------------------------------ table builders

    def _per_pid(self, build: Callable[[PlogEvidence], pd.DataFrame]) -> pd.DataFrame:

        frames = []
        for pe in self.plogs:
            frames.append(_tag(build(pe), pid=pe.pid))
        return _concat(frames) if frames else empty_frame(["pid"])

    def _plog_faults(self) -> pd.DataFrame:
        from skdbg.parsers.runtime_faults import runtime_frame

        return self._per_pid(lambda pe: runtime_frame(pe.faults))

    def _non_aot(self) -> pd.DataFrame:
        return rows_frame([_record_row(f) for f in self.handler.non_aot])

    def _per_model(
        self, pick: Callable[[ModelEvidence], Any], build: Callable[[Any], pd.DataFrame]
    ) -> pd.DataFrame:

        frames = []
        for me in self.model_evidence:
            part = pick(me)
            if part is None:
                continue
            frames.append(_tag(build(part), pid=me.model.pid_label, model=me.model.label))
        return _concat(frames) if frames else empty_frame(["pid", "model"])

    def _graph_nodes(self) -> pd.DataFrame:

        frames = []
        for me in self.model_evidence:
            for which, g in (("origin", me.graph_origin), ("updated", me.graph_updated)):
                if g is None:
                    continue
                frames.append(_tag(g.to_frame(), pid=me.model.pid_label, model=me.model.label, graph=which))
        return concat_frames(frames) if frames else empty_frame(["pid", "model", "graph"])

    def _gaps_frame(self) -> pd.DataFrame:
        return records_frame((({}, g) for g in self.gaps), GAP_COLS)

    def _unrecognized_frame(self) -> pd.DataFrame:
        return records_frame((({}, u) for u in self.unrecognized), UNRECOGNIZED_COLS)


#: the gaps table: what is missing or unusable, where (when known) and how to collect it
GAP_COLS = (
    Col("kind"),
    Col("detail"),
    Col("file", lambda g: g.src.file if g.src is not None else None),
    Col("line", lambda g: g.src.line if g.src is not None else None),
    Col("collect"),
)
#: the unrecognized table: lines kept but not understood
UNRECOGNIZED_COLS = (*SRC_COLS, Col("context"), Col("text"))


def _concat(frames: list[pd.DataFrame]) -> pd.DataFrame:

    out: pd.DataFrame = concat_frames(frames)
    return out


def _tag(frame: pd.DataFrame, **columns: Any) -> pd.DataFrame:
    """Put the owning pid/model (etc.) in front; a same-named column of the records is kept as ``<name>_rec``."""
    for pos, (name, value) in enumerate(columns.items()):
        if name in frame.columns:
            frame = frame.rename(columns={name: f"{name}_rec"})
        frame.insert(pos, name, value)
    return frame


def _sort_by_time(lines: list[PlogLine]) -> None:
    """Sort plog records by :attr:`PlogLine.ts_key`, stably.

    Why the shortcut: the key is a Python property (a tuple per record, tens of thousands of calls);
    when no record lacks its time, ``(1, ts)`` orders as ``ts`` does and ties stay tied, so the C-level
    ``attrgetter("ts")`` gives the same order."""
    stamps = list(map(_TS, lines))
    if any(map(_IS_NONE, stamps)):
        lines.sort(key=lambda r: r.ts_key)
    else:
        lines.sort(key=_TS)


def _file_items(items: Sequence[PlogLine | Unrecognized], pe: PlogEvidence) -> None:
    """File a batch of :func:`~skdbg.parsers.plog.scan_plog` items one at a time (the general path):
    records of ``pe``'s pid with their fault, other pids' records apart (F1), and error-manager text
    among the lines that are no record."""
    from skdbg.parsers.plog_line import PlogLine
    from skdbg.parsers.runtime_faults import classify_runtime, parse_error_manager_line

    for item in items:
        if type(item) is PlogLine:
            if item.pid != pe.pid:
                pe.foreign.append(item)
                continue
            pe.records.append(item)
            rec = classify_runtime(item)
            if rec is not None:
                pe.faults.append(rec)
        else:
            assert isinstance(item, Unrecognized)
            em = parse_error_manager_line(item.text, item.src)
            if em is not None:
                pe.error_manager.append(em)
            else:
                pe.unrecognized.append(item)


def _file_records(records: list[PlogLine], pe: PlogEvidence) -> None:
    """:func:`_file_items` for a batch known to hold records only, with C-level passes instead of a
    Python step per record (the scan thread holds the GIL for every such step, beside the main thread).

    Same lists, same order: the pid filter keeps the batch whole when every record is ``pe``'s (the
    common case: one count), else splits it in order; only the records that are not SK handler lines
    and whose text may classify (:func:`~skdbg.parsers.runtime_faults.may_classify`) are classified:
    :func:`~skdbg.parsers.runtime_faults.classify_runtime` returns None for every other one."""
    pids = list(map(_PID, records))
    if pids.count(pe.pid) == len(pids):
        own = records
    else:
        own = [r for r, p in zip(records, pids, strict=True) if p == pe.pid]
        pe.foreign.extend(r for r, p in zip(records, pids, strict=True) if p != pe.pid)
    pe.records.extend(own)
    _classify_plain(own, pe)


def _classify_plain(own: list[PlogLine], pe: PlogEvidence) -> None:
    """The runtime faults among ``own`` (a batch of ``pe``'s records), appended to ``pe.faults``."""
    from skdbg.parsers.runtime_faults import classify_runtime, may_classify

    plain = list(filterfalse(_IS_SK, own))  # SK handler lines are the SK parser's, never a runtime fault
    if plain and may_classify("\n".join(map(_TEXT, plain))):
        for line in plain:
            rec = classify_runtime(line)
            if rec is not None:
                pe.faults.append(rec)


def _file_record_batches(batches: list[list[PlogLine]], pe: PlogEvidence) -> None:
    """:func:`_file_records` of each of ``batches`` (consecutive batches of records only), in order.

    Why together: a batch is at most 64 lines, and the bench plog's SK handler block alone is ~290
    of them; filed one by one they cost ~3.5 ms of calls, once the scan's last batch is in, ahead of
    the rest of the analysis. When every record is ``pe``'s (the common case), the lines go in with
    one pid pass and one ``extend``, and only the batches holding a record that is no SK handler line
    are classified (each on its own, as :func:`_file_records` does: the runtime-fault prefilter keeps
    its per-batch reach). The same lists in the same order either way."""
    if len(batches) <= 1:
        if batches:
            _file_records(batches[0], pe)
        return
    records = [r for batch in batches for r in batch]
    pids = list(map(_PID, records))
    if pids.count(pe.pid) != len(pids):
        for batch in batches:
            _file_records(batch, pe)
        return
    pe.records.extend(records)
    for batch in batches:
        if not all(map(_IS_SK, batch)):  # (one of SK lines only has no fault to classify)
            _classify_plain(batch, pe)


_TS = attrgetter("ts")
_PID = attrgetter("pid")
_IS_SK = attrgetter("is_sk")
_TEXT = attrgetter("text")
_IS_NONE = partial(is_, None)


def _raise(exc: BaseException) -> NoReturn:
    """Raise ``exc`` (a load for :meth:`Evidence._guard` that fails as another process's load did)."""
    raise exc


class _PlogScan:
    """:meth:`Evidence._load_plogs` in a worker thread, with gaps and errors of its own (``forked``: the
    scan runs in a child process, and the thread files what it sends).

    ``collect`` puts them back at the position they had when the scan started (and the ``plog`` error
    role after the roles known then): exactly where a serial scan at that moment would have left them,
    whatever the caller parsed meanwhile."""

    def __init__(self, ev: Evidence, forked: ForkedPlogScan | None = None) -> None:
        from skdbg.parsers.background import BackgroundLoad

        self._ev = ev
        #: the scan's child process (None: this process scans, in the thread)
        self.forked = forked
        self._gaps_at = len(ev._gaps)
        self._roles_before = list(ev.errors)
        self._gaps: list[Gap] = []
        self._errors: dict[str, list[ParseError]] = {}
        self._lock = threading.Lock()
        self._collected: list[PlogEvidence] | None = None
        self._load = BackgroundLoad(
            lambda: ev._load_plogs((self._gaps, self._errors), forked),
            name="skdbg-plog-scan",
            after=None if forked is None else forked.finish,
        )

    def collect(self) -> list[PlogEvidence]:
        """The scan's result, its gaps and errors put back once (a second caller gets the same list)."""
        with self._lock:
            if self._collected is None:
                forked, load = self.forked, self._load
                if forked is not None and not load.ready():  # this process waits: it takes on other work
                    threading.Thread(
                        target=_help_until_ready, args=(forked, load), name="skdbg-plog-help", daemon=True
                    ).start()
                self._collected = self._merge(load.result())
            return self._collected

    def _merge(self, out: list[PlogEvidence]) -> list[PlogEvidence]:
        ev = self._ev
        ev._gaps[self._gaps_at : self._gaps_at] = self._gaps
        merged: dict[str, list[ParseError]] = {k: ev.errors[k] for k in self._roles_before}
        for role, errs in self._errors.items():
            merged.setdefault(role, []).extend(errs)
        for role, errs in ev.errors.items():
            merged.setdefault(role, errs)
        ev.errors.clear()
        ev.errors.update(merged)
        return out


#: this process helps with the child's other work only once the thread filing the child's values has
#: waited this long for the next (:meth:`ForkedPlogScan.quiet_for`)
HELP_AFTER_QUIET = 0.02


def _help_until_ready(forked: ForkedPlogScan, load: BackgroundLoad[Any]) -> None:
    """Chunks of the child's other work (:meth:`ForkedPlogScan.help`), claimed until the scan's files
    are all filed, while the child sends nothing. Why a thread of its own: the main thread goes on the
    moment the files are in, even when a chunk holds a large file still being hashed (the hashing gives
    up the GIL).

    Why only while the child is quiet (:data:`HELP_AFTER_QUIET` without a value): then its scan is
    slow (a cold disk) or searches lines it keeps none of, and a chunk hashed here is a chunk the child
    need not hash after its scan. While it sends lines (the marker lines at a plog's end: a value every
    few milliseconds on the bench scene), the child and the thread filing its values are the analysis's
    last stretch and need both CPUs: hashed here then, the bench scene's 2,000 kernel ELFs delayed the
    filing of the plog's last lines by ~20 ms. What the child has not hashed by the end of its scan it
    hashes while this process runs the stages after localisation, which read no digest before G5
    (:class:`~skdbg.triage.gate.GateDraft`); a reader that still finds one missing claims the rest."""
    with contextlib.suppress(Exception):  # a failing helper leaves the work to the child and the readers
        while not load.ready():
            quiet = forked.quiet_for()
            if quiet < HELP_AFTER_QUIET:
                load.wait(HELP_AFTER_QUIET - quiet)
                continue
            if not forked.help():
                return


def _record_row(rec: Any) -> dict[str, Any]:
    row: dict[str, Any] = {}
    src = getattr(rec, "src", None)
    if isinstance(src, Source):
        row["file"], row["line"] = src.file, src.line
    for name in getattr(rec, "__slots__", ()):
        if name != "src":
            value = getattr(rec, name)
            row[name] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
    return row
