"""What every triage stage reads: the scene, its parsed evidence, the run identity, the options.

Why a context object: the gate, localisation, attribution, proposal and report stages all need the
same handful of inputs (and the same way to cite a file line as an :class:`EvidenceItem`). Building
it once keeps the stages pure functions of ``(ctx, previous results)`` and lets the TUI run them
one by one in workers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING

from skdbg.parsers.common import ParseError, Source
from skdbg.parsers.evidence import Evidence
from skdbg.parsers.fsguard import failed_reads, real_path
from skdbg.parsers.run_identity import EnvProbe, RunFile, RunIdentity, parse_run_json
from skdbg.scene import (
    Artifact,
    Scene,
    evidence_for,
    first_file,
    model_source_paths,
    open_scene,
    with_model_source,
)
from skdbg.triage.markers import check_model_source
from skdbg.triage.model import EvidenceItem

if TYPE_CHECKING:
    from skdbg.parsers.plog_fork import ChildWork
    from skdbg.parsers.plog_line import PlogLine, PlogRow

#: files above this size are never read whole to quote one line (plogs can be GBs)
_WHOLE_FILE_LIMIT = 32 << 20
_EXCERPT_MAX = 240


@dataclass(frozen=True, slots=True)
class TriageOptions:
    """Tunables of the gate (triage.md §1.2 F2 defaults) and of the proposal."""

    skew: timedelta = timedelta(seconds=5)
    grace: timedelta = timedelta(seconds=120)

    def earliest(self, start: datetime) -> datetime:
        """``start - skew``: the window's first time, held at the calendar's first day (a run.json
        start near year 1 would otherwise fail the arithmetic)."""
        try:
            return start - self.skew
        except OverflowError:
            return datetime.min.replace(tzinfo=start.tzinfo)

    def latest(self, end: datetime) -> datetime:
        """``end + grace``: the window's last time, held at the calendar's last day (a run.json end
        near year 9999 would otherwise fail the arithmetic)."""
        try:
            return end + self.grace
        except OverflowError:
            return datetime.max.replace(tzinfo=end.tzinfo)


@dataclass
class TriageContext:
    """Inputs of one analysis. ``run_override`` is ``--run FILE`` (replaces the scene's run.json)."""

    scene: Scene
    evidence: Evidence
    source_root: Path | None = None
    options: TriageOptions = field(default_factory=TriageOptions)
    run_override: RunFile | None = None
    #: reads failed in this process when the context was made (:func:`failed_reads`): one failing
    #: since, in whichever reader, means the analysis was built without some input's whole bytes
    reads_failed_at_open: int = field(default_factory=failed_reads, repr=False)
    _lines: dict[str, list[str] | None] = field(default_factory=dict, repr=False)

    @property
    def read_failed(self) -> bool:
        """Whether a read of some input failed (an I/O error, not bad content) since the context was
        made: the plog scan, sk_meta parsing, the G5 hashing or a kernel ELF read for a lookup."""
        return failed_reads() != self.reads_failed_at_open

    # ------------------------------------------------------------------ side files

    @cached_property
    def run_file(self) -> RunFile | None:
        return self.run_override if self.run_override is not None else self.evidence.run

    @property
    def run(self) -> RunIdentity | None:
        rf = self.run_file
        return None if rf is None else rf.identity

    @property
    def probe(self) -> EnvProbe | None:
        pf = self.evidence.env_probe
        return None if pf is None else pf.probe

    @property
    def root(self) -> Path:
        return self.scene.root

    def marker_rel(self) -> str | None:
        """run.json's ``candidate.marker_file`` as written (the model source's name in messages), or None."""
        run = self.run
        return run.candidate.marker_file if run is not None and run.candidate is not None else None

    def marker_file(self) -> Path | None:
        """The model source with the scope markers: run.json candidate.marker_file under the source root.

        ``--source-root`` wins; else the scene root (scene-layout.md keeps ``src/model.py`` in the scene).
        """
        return first_file(self.marker_candidates())

    @cached_property
    def input_artifacts(self) -> list[Artifact]:
        """Every file the verdict reads, for G5 and the analysis JSON's ``scene.artifacts``: the scene's
        artifacts, then the model source with the scope markers (:meth:`marker_file`) unless it is one
        of them (:func:`skdbg.scene.with_model_source`).

        Why here and not in the scene's walk: which file is the model source is said by run.json (or
        ``--run``) and may lie outside the scene (``--source-root``)."""
        return with_model_source(self.scene.artifacts, self.marker_file(), self.root)

    def marker_candidates(self) -> list[Path]:
        """The paths :meth:`marker_file` tries, in order (the result cache records each one's state:
        a model source appearing under ``--source-root`` changes the verdict's input)."""
        return model_source_paths(self.marker_rel(), (self.source_root, self.root))

    # ------------------------------------------------------------------ citations

    def relpath(self, file: str | os.PathLike[str]) -> str:
        return self.evidence.relpath(str(file))

    def line_text(self, src: Source) -> str | None:
        """The text of ``src``'s line (None when unknown); plog lines come from the parsed index."""
        if src.line is None:
            return None
        key = str(real_path(src.file)) if src.file else src.file
        by_number = self._plog_index.get(key)
        line = by_number.get(src.line) if by_number is not None else None
        if isinstance(line, tuple):  # an SK line kept as a row: its record, made for the quote
            from skdbg.parsers.plog_rows import line_of_row

            line = line_of_row(line)
        if line is not None:
            # quote the line as it is: only an SK-logger line carries the [SK][<Function>] tag
            return f"[SK][{line.func}] {line.text}" if line.is_sk else line.text
        return self._file_line(key, src.line)

    def cite(
        self,
        level: str,
        source: str,
        src: Source,
        *,
        excerpt: str | None = None,
        agrees: bool | None = None,
        rule: str | None = None,
        core_id: int | None = None,
        task_index: int | None = None,
    ) -> EvidenceItem:
        """An :class:`EvidenceItem` for ``src``; the excerpt defaults to the cited line itself."""
        text = excerpt if excerpt is not None else (self.line_text(src) or "")
        text = text.strip()
        if len(text) > _EXCERPT_MAX:
            text = text[: _EXCERPT_MAX - 1] + "…"
        return EvidenceItem(
            level=level,
            source=source,
            file=self.relpath(src.file),
            line=src.line,
            excerpt=text,
            agrees=agrees,
            json_path=src.json_path,
            rule=rule,
            core_id=core_id,
            task_index=task_index,
        )

    @cached_property
    def _plog_index(self) -> dict[str, dict[int, PlogLine | PlogRow]]:
        """Every scanned plog line by resolved file, then line number; a citation formats the few it
        quotes. Why nested: a (file, line) key per line was 18,000 tuples on the bench scene (and a
        garbage collection they set off), for about twenty lookups. An SK line a forked scan kept as a
        row (:mod:`skdbg.parsers.plog_rows`) is indexed as that row, its record made when it is quoted."""
        from skdbg.parsers.plog_rows import row_index

        out: dict[str, dict[int, PlogLine | PlogRow]] = {}
        per_file: dict[str, dict[int, PlogLine | PlogRow]] = {}  # by the file name as scanned

        def numbers_of(file: str) -> dict[int, PlogLine | PlogRow]:
            by_number = per_file.get(file)
            if by_number is None:
                # two spellings of one file share its resolved entry, as one key did before
                by_number = per_file[file] = out.setdefault(str(real_path(file)), {})
            return by_number

        for pe in self.evidence.plogs:
            for line in pe.records:
                src = line.src
                if src.line is not None:
                    numbers_of(src.file)[src.line] = line
            rows = pe.sk_rows
            for file, (nos, first) in row_index(pe).items():
                numbers_of(file).update(zip(nos, islice(rows, first, first + len(nos)), strict=True))
        return out

    def _file_line(self, path: str, line: int) -> str | None:
        lines = self._lines.get(path, [])
        if path not in self._lines:
            lines = self._load(path)
            self._lines[path] = lines
        if lines is None:
            return _scan_line(path, line)
        return lines[line - 1] if 0 < line <= len(lines) else None

    @staticmethod
    def _load(path: str) -> list[str] | None:
        try:
            if os.path.getsize(path) > _WHOLE_FILE_LIMIT:
                return None
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.read().splitlines()
        except OSError:
            return []


def _scan_line(path: str, line: int) -> str | None:
    try:
        with open(path, "rb") as fh:
            for i, raw in enumerate(fh, 1):
                if i == line:
                    return raw.decode("utf-8", errors="replace").rstrip("\r\n")
    except OSError:
        return None
    return None


def open_context(
    scene_path: str | os.PathLike[str],
    *,
    run_json: str | os.PathLike[str] | None = None,
    source_root: str | os.PathLike[str] | None = None,
    pid: int | None = None,
    options: TriageOptions | None = None,
) -> TriageContext:
    """Open a scene for triage. Raises :class:`ParseError` for a missing scene, an unreadable
    ``--run`` file or a missing ``--source-root`` (CLI exit 3); everything else becomes a gap."""
    scene = open_scene(scene_path)
    evidence = evidence_for(scene, pid=pid)
    override = parse_run_json(run_json) if run_json is not None else None
    root: Path | None = None
    if source_root is not None:
        root = Path(source_root)
        if not root.is_dir():
            raise ParseError(str(root), "a source root directory (--source-root)")
        root = root.resolve()
    return TriageContext(
        scene=scene,
        evidence=evidence,
        source_root=root,
        options=options or TriageOptions(),
        run_override=override,
    )


def start_reading(ctx: TriageContext) -> None:
    """Start an analysis's background reads now: the plogs are scanned (hashing what they read) in a
    forked child process or a worker thread, and the other artifacts hashed for G5 by that child
    after its scan and by this process while it waits for the scan, or else in a worker thread,
    while the caller goes on. A forked child may also read super_kernel.log files for this process
    once its scan is done (:mod:`skdbg.parsers.sk_log_ahead`). The scan starts first: a
    process forks only while no other thread runs.

    Why a function of its own, here and not in the engine: ``skdbg analyze`` calls it right after
    :func:`open_context`, before its input checks and before it imports the triage stages (a quarter
    of a second of imports on the bench scene), so the scan of a GB plog starts at once and overlaps
    them; ``engine.analyze_staged`` calls it again (a no-op then). The outputs are those of a serial
    parse (see ``Evidence.start_plog_scan``)."""
    ev, scene = ctx.evidence, ctx.scene
    if ev.plog_scan_forked:  # the second call (the engine's): the child hashes, nothing to start
        return
    hashed_by_scan: list[str] = []
    if not ev.plog_scan_started:
        plogs = [f.path for f in ev.plog_files]  # the scan hashes them as it reads them
        in_child = scene.digests_in_child(skip=plogs)
        # the child also reads super_kernel.log files, those it gets to before this process does
        logs = ev.sk_logs_ahead()
        share: ChildWork = in_child
        if logs is not None:
            from skdbg.parsers.sk_log_ahead import ChildShare

            share = ChildShare(logs, in_child)
        hashed_by_scan = ev.start_plog_scan(on_digest=scene.adopt_digest, also=share)
        ev.ask_ahead_sk_meta()  # after the scan's start: the plog's reads are asked for first
        if ev.plog_scan_forked:  # its child hashes the other artifacts (with this process): readers wait
            in_child.expect(helper=ev.help_plog_scan)
            if logs is not None:
                ev.expect_sk_logs(logs)
            return
    scene.start_hashing(skip=hashed_by_scan)  # once per scene (a second call does nothing)


def check_run_json(ctx: TriageContext) -> None:
    """A malformed scene run.json is bad input, not a gap: raise its ParseError (CLI exit 3).

    Why not a gap: the gate would otherwise report a run identity that was merely unreadable as
    "missing". With ``--run`` the override was parsed eagerly by :func:`open_context` already.
    """
    if ctx.run_override is None:
        _ = ctx.evidence.run
        errors = ctx.evidence.errors.get("run_json")
        if errors:
            raise errors[0]


def check_inputs(ctx: TriageContext) -> None:
    """Read now what the analysis would refuse later: the run manifest and the model source.

    Raises :class:`ParseError` (CLI exit 3, one line) for a malformed ``run.json`` or a model source
    (``candidate.marker_file``) that is not Python. Why eagerly: ``analyze`` then fails the same way
    whatever path the verdict takes, and ``skdbg tui`` can refuse the scene before the UI starts with
    the very message ``analyze`` prints (both call this; neither copies it).
    """
    check_run_json(ctx)
    run = ctx.run
    marker = ctx.marker_file()
    if marker is not None and run is not None and run.candidate is not None:
        check_model_source(marker, run.candidate.marker_file or marker.name)


__all__ = [
    "TriageContext",
    "TriageOptions",
    "check_inputs",
    "check_run_json",
    "open_context",
    "start_reading",
]
