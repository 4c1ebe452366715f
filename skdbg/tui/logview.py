"""The plog viewer: a Line-API scroll view over :class:`~skdbg.parsers.lineindex.LineIndex` (toolong's design).

Why this shape (ecosystem.md §1.1, §1.7; issue 4 "Log"): a plog can be GBs, so nothing here holds a
file's text. A thread worker indexes line starts from positional reads in batches (never ``mmap``: a
file cut while mapped kills the process) and posts a coalescing
:class:`LogView.Progress` after each; the view grows as batches arrive, so the first screen paints
after the first (small) batch — the indexer pauses there (at most ``FIRST_PAINT_WAIT``) until the
UI has painted, so the two do not fight over the GIL for the first frame. Only the visible lines are ever read: ``render_line`` paints what the
LRU caches hold (text and rendered strips) and asks a reader worker for the visible window plus a
page either side (``os.pread`` per line, toolong's LineReader role); the window repaints when they
arrive. Everything that walks a whole file — fault scan, time merge, filter columns, search — runs in
thread workers too; results come back as messages and are applied on the UI thread. Exception: the
single line the user acts on (Enter, click) is read directly for the LineSelected message.

Rows: the view shows *rows*; a row is a line of one of the files. Without merge/filter the rows are the
files one after another; with ``merge`` (several files) or a filter the rows follow an order array of
global line ids (file k's line i is ``base[k] + i``), computed off the UI thread once the files are
indexed. Until then the concatenated order is shown.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import ClassVar, Concatenate, ParamSpec

import numpy as np
import numpy.typing as npt
from rich.segment import Segment
from rich.style import Style
from textual import work
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from skdbg.parsers.common import ParseError
from skdbg.parsers.lineindex import (
    BATCH,
    HEADER_RE,
    NO_META,
    HeaderColumns,
    IndexProgress,
    IntArray,
    LineIndex,
    LineMeta,
    compile_pattern,
    fault_lines,
    header_columns,
    line_meta,
    merge_order,
    search_file,
    search_order,
)
from skdbg.tui.prompt import PromptScreen

MAX_LINE_BYTES = 16 << 10  # longer lines are cut for display (the file is never loaded)
CONTROL_PICTURES = {c: 0x2400 + c for c in range(32)} | {0x7F: 0x2421}  # U+2400 block
FIRST_PAINT_WAIT = 0.5  # seconds the indexer may pause after its first batch until the first paint

LEVEL_STYLES: dict[str, Style] = {
    "ERROR": Style(color="red", bold=True),
    "WARNING": Style(color="yellow"),
    "WARN": Style(color="yellow"),
    "EVENT": Style(color="cyan"),
    "DEBUG": Style(dim=True),
    "TRACE": Style(dim=True),
}
GUTTER_STYLE = Style(dim=True)
CURSOR_STYLE = Style(reverse=True)
FAULT_MARK_STYLE = Style(color="red", bold=True)
BOOKMARK_STYLE = Style(color="cyan", bold=True)
BOOKMARK_MARK = "▸"
MATCH_STYLE = Style(bgcolor="dark_goldenrod", color="black")
INCIDENT_GAP_US = 500_000  # a fault line of the same pid this close (µs) to the previous one: same incident
FILE_TAG_STYLES = [Style(color=c) for c in ("cyan", "magenta", "green", "blue", "yellow", "bright_red")]


def _cancelled() -> bool:
    return get_current_worker().is_cancelled


P = ParamSpec("P")


def _file_errors_reported(
    fn: Callable[Concatenate[LogView, P], None],
) -> Callable[Concatenate[LogView, P], None]:
    """Worker bodies: a file that vanishes or cannot be read becomes a message, not a crashed app
    (an ``OSError``, or the :class:`ParseError` a parser makes of one, which names file and problem)."""

    def run(self: LogView, /, *args: P.args, **kwargs: P.kwargs) -> None:
        try:
            fn(self, *args, **kwargs)
        except (OSError, ParseError) as exc:
            self.post_message(LogView._Failed(_failure_text(exc)))

    functools.update_wrapper(run, fn)
    return run


def _failure_text(exc: OSError | ParseError) -> str:
    """The message a view shows for a file it could not read (a ParseError names file and problem)."""
    if isinstance(exc, ParseError):
        return str(exc)
    where = exc.filename if exc.filename is not None else "plog file"
    return f"{where}: cannot read ({exc.strerror or exc})"


@dataclass(frozen=True, slots=True)
class LineFilter:
    """What :meth:`LogView.set_filter` keeps; ``None`` = no restriction on that field."""

    levels: frozenset[str] | None = None
    modules: frozenset[str] | None = None
    pids: frozenset[int] | None = None

    @property
    def active(self) -> bool:
        return self.levels is not None or self.modules is not None or self.pids is not None


def parse_filter(text: str) -> LineFilter:
    """``level=ERROR,WARNING module=RUNTIME pid=123,456`` (any order, any subset) → :class:`LineFilter`.

    An empty text clears the filter. A bad term raises ``ValueError`` naming it and the expected form.
    """
    levels: frozenset[str] | None = None
    modules: frozenset[str] | None = None
    pids: frozenset[int] | None = None
    for term in text.split():
        key, sep, value = term.partition("=")
        items = [v for v in value.split(",") if v]
        if not sep or not items:
            raise ValueError(f"{term!r}: expected level=A,B | module=M,N | pid=1,2")
        key = key.lower()
        if key in ("level", "levels"):
            levels = frozenset(v.upper() for v in items)
        elif key in ("module", "modules"):
            modules = frozenset(items)
        elif key in ("pid", "pids"):
            try:
                pids = frozenset(int(v) for v in items)
            except ValueError:
                raise ValueError(f"{term!r}: pids are decimal integers") from None
        else:
            raise ValueError(f"{term!r}: unknown field {key!r}, expected level, module or pid")
    return LineFilter(levels, modules, pids)


class LogView(ScrollView, can_focus=True):
    """Virtual view over one or more plog files; see the module docstring."""

    DEFAULT_CSS = """
    LogView { height: 1fr; background: $surface; }
    LogView:focus { background-tint: $foreground 3%; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "next_fault", "Next fault", id="log.next_fault"),
        Binding("E", "prev_fault", "Prev fault", id="log.prev_fault"),
        Binding(
            "right_square_bracket", "next_fault_line", "Next fault line", show=False, id="log.next_fault_line"
        ),
        Binding(
            "left_square_bracket", "prev_fault_line", "Prev fault line", show=False, id="log.prev_fault_line"
        ),
        Binding("m", "toggle_bookmark", "Mark", show=False, id="log.bookmark"),
        Binding("apostrophe", "next_bookmark", "Next bookmark", show=False, id="log.next_bookmark"),
        Binding("quotation_mark", "prev_bookmark", "Prev bookmark", show=False, id="log.prev_bookmark"),
        Binding("slash", "search", "Search", id="log.search"),
        Binding("n", "next_match", "Next match", id="log.next_match"),
        Binding("N", "prev_match", "Prev match", id="log.prev_match"),
        Binding("g", "top", "Top", show=False, id="log.top"),
        Binding("G", "bottom", "Bottom", show=False, id="log.bottom"),
        Binding("ctrl+g", "goto_prompt", "Go to line", id="log.goto"),
        Binding("f", "filter_prompt", "Filter", id="log.filter"),
        Binding("ctrl+l", "toggle_line_numbers", "Line numbers", show=False, id="log.line_numbers"),
        Binding("escape", "cancel_indexing", "Cancel indexing", show=False, id="log.cancel"),
        Binding("enter", "select_line", "Select line", show=False, id="log.select"),
        Binding("up,k", "cursor_up", "Up", show=False, id="log.cursor_up"),
        Binding("down,j", "cursor_down", "Down", show=False, id="log.cursor_down"),
        Binding("pageup,b", "page_up", "Page up", show=False, id="log.page_up"),
        Binding("pagedown,space", "page_down", "Page down", show=False, id="log.page_down"),
        Binding("home", "top", "Top", show=False, id="log.home"),
        Binding("end", "bottom", "Bottom", show=False, id="log.end"),
        Binding("left,h", "scroll_left", "Left", show=False, id="log.left"),
        Binding("right,l", "scroll_right", "Right", show=False, id="log.right"),
    ]

    index_batch = BATCH  # bytes per indexing batch after the first (small) one

    class Progress(Message):
        """Indexing progress over all files; a newer one replaces a queued older one."""

        def __init__(self, lines: int, bytes_done: int, bytes_total: int, done: bool) -> None:
            super().__init__()
            self.lines = lines
            self.bytes_done = bytes_done
            self.bytes_total = bytes_total
            self.done = done

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, LogView.Progress)

    class LineSelected(Message):
        """The cursor line was chosen (Enter or click): ``line`` is 1-based in ``path``."""

        def __init__(self, path: str, line: int, text: str) -> None:
            super().__init__()
            self.path = path
            self.line = line
            self.text = text

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, LogView.LineSelected)

    class SearchDone(Message):
        """A search finished: ``found`` with the 1-based ``line`` of ``path`` (None when nothing matched)."""

        def __init__(self, pattern: str, found: bool, path: str | None, line: int | None) -> None:
            super().__init__()
            self.pattern = pattern
            self.found = found
            self.path = path
            self.line = line

    # -- private messages from the workers ---------------------------------------------------------

    class _Indexed(Message, bubble=False):
        """A batch of lines was indexed (private: resize the view, apply a pending goto)."""

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, LogView._Indexed)

    class StatusChanged(Message):
        """The status bar text changed (cursor, indexing, faults, filter, search): ``text`` is one line,
        ``legend`` maps the merged view's ``1:``/``2:`` prefixes to file names ("" for one file)."""

        def __init__(self, text: str, legend: str) -> None:
            super().__init__()
            self.text = text
            self.legend = legend

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, LogView.StatusChanged)

    class _Faults(Message, bubble=False):
        """0-based fault lines and incident starts of every file (private)."""

        def __init__(self, per_file: list[IntArray], starts: list[IntArray]) -> None:
            super().__init__()
            self.per_file = per_file
            self.starts = starts

    class _Order(Message, bubble=False):
        """A new row order (merge/filter) and the header columns it came from (private)."""

        def __init__(self, order: IntArray | None, columns: list[HeaderColumns] | None) -> None:
            super().__init__()
            self.order = order
            self.columns = columns
            # inverse of order (-1: filtered out), built here so the worker pays for it, not the UI
            self.row_of: IntArray | None = None
            if order is not None:
                total = sum(len(c.ts) for c in columns or ())
                self.row_of = np.full(total, -1, dtype=np.int64)
                self.row_of[order] = np.arange(len(order), dtype=np.int64)

    class _Failed(Message, bubble=False):
        """A worker could not read a file (private): shown, and kept in ``errors``."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class _Lines(Message, bubble=False):
        """Lines read by the reader worker (private)."""

        def __init__(self, lines: dict[tuple[int, int], str]) -> None:
            super().__init__()
            self.lines = lines

    class _Found(Message, bubble=False):
        """A search result as (file number, 0-based line), None when nothing matched (private).

        A location, not a row: the row order may change (merge, filter) while the search runs.
        """

        def __init__(self, pattern: str, loc: tuple[int, int] | None) -> None:
            super().__init__()
            self.pattern = pattern
            self.loc = loc

    def __init__(
        self,
        paths: Sequence[str | Path],
        *,
        merge: bool = True,
        id: str | None = None,
        name: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(id=id, name=name, classes=classes)
        self.paths = [str(p) for p in paths]
        self.merge = merge
        self.errors: list[str] = []
        self._read_failures: set[str] = set()  # line reads that failed, each reported once
        self.indexes: list[LineIndex] = []
        for p in paths:
            try:
                self.indexes.append(LineIndex(p))
            except ParseError as exc:
                self.errors.append(str(exc))
        self.show_line_numbers = True
        self.cursor_row = 0
        self.indexing_done = not self.indexes  # set by the first _Indexed after the last batch
        self.indexing_cancelled = False
        self._order: IntArray | None = None  # global ids in row order (merge and/or filter)
        self._row_of: IntArray | None = None  # inverse of _order (-1: line filtered out)
        self._columns: list[HeaderColumns] | None = None
        self._filter = LineFilter()
        self._fault_globals: IntArray | None = None  # every fault line (global ids), for ]/[
        self._incident_globals: IntArray | None = None  # first line of each incident, for e/E
        self._last_status: tuple[str, str] | None = None
        self._bookmarks: set[tuple[int, int]] = set()  # (file number, 0-based line)
        self._pattern: re.Pattern[bytes] | None = None
        self._pattern_text = ""
        self._pending_goto: tuple[int, int] | None = None
        self._text_cache: LRUCache[tuple[int, int], str] = LRUCache(10_000)
        self._meta_cache: LRUCache[tuple[int, int], LineMeta] = LRUCache(10_000)
        self._strip_cache: LRUCache[tuple[int, int, bool, bool, int], Strip] = LRUCache(2_000)
        self._files_tagged = len(self.indexes) > 1
        self._read_scheduled = False
        self.first_paint: IndexProgress | None = None  # indexing state when the first text line painted
        self.first_paint_time: float | None = None  # time.perf_counter() of that paint
        self._painted = threading.Event()

    # -- public API (the contract the app codes against) -------------------------------------------

    def goto(self, path: str | Path, line: int) -> None:
        """Move the cursor to 1-based ``line`` of ``path``, scrolled into the middle and highlighted.

        Works while indexing: when the line is not indexed yet it is applied as soon as it is.
        """
        k = self._file_no(path)
        if k is None:
            self.notify(f"{path} is not open in this log view", severity="warning")
            return
        self._pending_goto = (k, max(0, line - 1))
        self._apply_pending_goto()

    def search(self, pattern: str, *, regex: bool = True, backwards: bool = False) -> bool:
        """Start a search from the cursor; False when ``pattern`` is not a valid regex.

        The search streams through the files in a worker; when it finds a line the cursor moves
        there, otherwise the user is told; either way :class:`SearchDone` is posted.
        """
        try:
            pat = compile_pattern(pattern, regex=regex)
        except re.error as exc:
            self.notify(f"bad regular expression {pattern!r}: {exc}", severity="error")
            return False
        self._pattern = pat
        self._pattern_text = pattern
        self._strip_cache.clear()
        self.refresh()
        self._post_status()
        self._search_worker(pattern, pat, self.cursor_row, backwards)
        return True

    def next_fault(self) -> bool:
        """Cursor to the next fault *incident*; False when there is none (or the scan has not finished).

        Fault lines carry a plog fault marker (``FAULT_MARKERS``, the lines ``scan_plog`` hands to the
        fault parsers). An incident is a run of fault lines of one file where each line has the same
        pid as the previous fault line and is at most ``INCIDENT_GAP_US`` later (the runtime's error
        report and the SK exception-handler block it triggers); the stop is its first line.
        """
        return self._step(self._incident_globals, forward=True, what="fault incident")

    def prev_fault(self) -> bool:
        return self._step(self._incident_globals, forward=False, what="fault incident")

    def next_fault_line(self) -> bool:
        """Cursor to the next single fault line (``]``), inside or across incidents."""
        return self._step(self._fault_globals, forward=True, what="fault line")

    def prev_fault_line(self) -> bool:
        return self._step(self._fault_globals, forward=False, what="fault line")

    def toggle_bookmark(self) -> bool:
        """Set or clear the bookmark on the cursor line; True when it is now set.

        Bookmarks belong to (file, line), so they survive filters and re-merges; with
        ``app.remember_bookmarks`` (the command-line entry) they are kept in ``tui.json`` per file and
        restored next time if the file is unchanged (same size and mtime)."""
        loc = self._locate(self.cursor_row)
        if loc is None:
            self.notify("no line under the cursor to bookmark", severity="warning")
            return False
        k, i = loc
        now_set = loc not in self._bookmarks
        if now_set:
            self._bookmarks.add(loc)
        else:
            self._bookmarks.discard(loc)
        self._persist_bookmarks(k)
        self._strip_cache.clear()
        self.refresh()
        self._post_status()
        name = f"{self.indexes[k].path.name}:{i + 1}"
        n = len(self._bookmarks)
        self.notify(f"bookmark {'set at' if now_set else 'cleared at'} {name} ({n} in all)", timeout=3)
        return now_set

    def next_bookmark(self) -> bool:
        """Cursor to the next bookmark below it, wrapping to the first; False when there is none."""
        return self._step_bookmark(forward=True)

    def prev_bookmark(self) -> bool:
        return self._step_bookmark(forward=False)

    def bookmarks(self) -> list[tuple[str, int, str]]:
        """Every bookmark as ``(path, 1-based line, text)``, in row order (hidden rows last)."""
        out = []
        for k, i in sorted(self._bookmarks, key=self._bookmark_order):
            text = self._text(k, i) if i < self.indexes[k].lines else ""
            out.append((str(self.indexes[k].path), i + 1, text))
        return out

    def set_filter(
        self,
        levels: Iterable[str] | None = None,
        modules: Iterable[str] | None = None,
        pids: Iterable[int] | None = None,
    ) -> None:
        """Show only lines with these levels / modules / pids (None = all). Applied by a worker."""
        self._filter = LineFilter(
            None if levels is None else frozenset(v.upper() for v in levels),
            None if modules is None else frozenset(modules),
            None if pids is None else frozenset(int(p) for p in pids),
        )
        if self._filter.active:
            self.notify(f"filtering: {_filter_text(self._filter)}", timeout=3)
        self._order_worker()

    # -- facts for the app and tests ---------------------------------------------------------------

    @property
    def row_count(self) -> int:
        if self._order is not None:
            return len(self._order)
        total = 0
        for ix in self.indexes:
            total += ix.lines
            if not ix.done:
                break
        return total

    def cursor_location(self) -> tuple[str, int] | None:
        """``(path, 1-based line)`` under the cursor; None for an empty view."""
        loc = self._locate(self.cursor_row)
        if loc is None:
            return None
        return self.paths_indexed[loc[0]], loc[1] + 1

    def cursor_text(self) -> str:
        loc = self._locate(self.cursor_row)
        return "" if loc is None else self._text(*loc)

    @property
    def fault_count(self) -> int | None:
        """Number of fault incidents (``e``/``E`` stops, see :meth:`next_fault`) over all files.

        None until the fault scan has finished.
        """
        return None if self._incident_globals is None else len(self._incident_globals)

    @property
    def fault_line_count(self) -> int | None:
        """Number of fault lines (``]``/``[`` stops) over all files; None until the scan has finished."""
        return None if self._fault_globals is None else len(self._fault_globals)

    def status_text(self) -> str:
        """The status bar: file and line of the cursor, rows, % indexed, incident k of n, filter, search.

        Only in-memory facts (index counters, the fault arrays, the cursor): no file access, so it
        is cheap enough to rebuild on every cursor move.
        """
        parts: list[str] = []
        loc = self._locate(self.cursor_row)
        if loc is not None:
            k, i = loc
            ix = self.indexes[k]
            tag = f"{k + 1}:" if self._files_tagged else ""
            parts.append(f"{tag}{ix.path.name}:{i + 1}")
        rows = self.row_count
        parts.append(f"row {min(self.cursor_row + 1, rows):,}/{rows:,}")
        prog = self._progress()
        if self.indexing_cancelled and not prog.done:
            parts.append(f"indexing cancelled at {_percent(prog)}%")
        elif not prog.done:
            parts.append(f"indexed {_percent(prog)}%")
        inc = self._incident_globals
        if inc is None:
            parts.append("faults: scanning" if prog.done else "faults: after indexing")
        elif len(inc) == 0:
            parts.append("no fault incidents")
        else:
            rows_inc = self._rows_of(inc)
            at = int(np.searchsorted(rows_inc, self.cursor_row, side="right"))
            parts.append(f"incident {at}/{len(inc)}" if at else f"incident -/{len(inc)}")
        if self._filter.active:
            parts.append(f"filter: {_filter_text(self._filter)}")
        if self._pattern_text:
            parts.append(f"search: /{self._pattern_text}/")
        if self._bookmarks:
            marks = self._bookmark_rows()
            at = int(np.searchsorted(marks, self.cursor_row, side="right"))
            parts.append(f"bookmark {at or '-'}/{len(self._bookmarks)}")
        return "  │  ".join(parts)

    def legend_text(self) -> str:
        """``1: name  2: name`` for a view of several files (the gutter's prefixes); "" for one file."""
        if not self._files_tagged:
            return ""
        return "  ".join(f"{k + 1}: {ix.path.name}" for k, ix in enumerate(self.indexes))

    def _bookmark_order(self, mark: tuple[int, int]) -> tuple[int, int, int]:
        row = self._row(*mark) if mark[1] < self.indexes[mark[0]].lines else None
        return (0, row, 0) if row is not None else (1, mark[0], mark[1])

    def _bookmark_rows(self) -> list[int]:
        rows = (self._row(k, i) for k, i in self._bookmarks if i < self.indexes[k].lines)
        return sorted(r for r in rows if r is not None)

    def _step_bookmark(self, *, forward: bool) -> bool:
        rows = self._bookmark_rows()
        if not rows:
            hidden = len(self._bookmarks)
            why = f"{hidden} bookmark(s), all hidden by the filter" if hidden else "no bookmarks: m sets one"
            self.notify(why, severity="information")
            return False
        if forward:
            j = int(np.searchsorted(rows, self.cursor_row, side="right"))
            wrapped = j >= len(rows)
            target = rows[0] if wrapped else rows[j]
        else:
            j = int(np.searchsorted(rows, self.cursor_row, side="left")) - 1
            wrapped = j < 0
            target = rows[-1] if wrapped else rows[j]
        if wrapped and len(rows) > 1:
            self.notify(f"wrapped to the {'first' if forward else 'last'} bookmark", timeout=2)
        self._set_cursor(target, center=True)
        return True

    def _restore_bookmarks(self) -> None:
        if not getattr(self.app, "remember_bookmarks", False):
            return
        from skdbg.tui.settings import saved_bookmarks

        for k, ix in enumerate(self.indexes):
            self._bookmarks.update((k, line - 1) for line in saved_bookmarks(ix.path))

    def _persist_bookmarks(self, k: int) -> None:
        if not getattr(self.app, "remember_bookmarks", False):
            return
        from skdbg.tui.settings import save_bookmarks

        save_bookmarks(self.indexes[k].path, sorted(i + 1 for kk, i in self._bookmarks if kk == k))

    def _post_status(self) -> None:
        """Tell the host the status bar changed; an unchanged bar is not re-sent (no needless repaint)."""
        now = (self.status_text(), self.legend_text())
        if now != self._last_status:
            self._last_status = now
            self.post_message(self.StatusChanged(*now))

    @property
    def paths_indexed(self) -> list[str]:
        return [str(ix.path) for ix in self.indexes]

    @property
    def filter(self) -> LineFilter:
        return self._filter

    # -- rows <-> (file, line) --------------------------------------------------------------------

    def _bases(self) -> list[int]:
        bases = [0]
        for ix in self.indexes[:-1]:
            bases.append(bases[-1] + ix.lines)
        return bases

    def _locate(self, row: int) -> tuple[int, int] | None:
        if not 0 <= row < self.row_count:
            return None
        g = int(self._order[row]) if self._order is not None else row
        bases = self._bases()
        k = int(np.searchsorted(np.array(bases), g, side="right")) - 1
        return k, g - bases[k]

    def _row(self, k: int, i: int) -> int | None:
        """Row showing line ``i`` of file ``k``; None when not (yet) shown."""
        ix = self.indexes[k]
        if i >= ix.lines:
            return None
        g = self._bases()[k] + i
        if self._row_of is not None:
            r = int(self._row_of[g]) if g < len(self._row_of) else -1
            return r if r >= 0 else None
        return g if g < self.row_count else None

    def _file_no(self, path: str | Path) -> int | None:
        want = Path(path)
        for k, ix in enumerate(self.indexes):
            if ix.path == want:
                return k
        try:
            resolved = want.resolve()
        except OSError:
            return None
        for k, ix in enumerate(self.indexes):
            if ix.path.resolve() == resolved:
                return k
        return None

    # -- lifecycle and workers ---------------------------------------------------------------------

    def on_mount(self) -> None:
        for err in self.errors:
            self.notify(err, severity="error", timeout=10)
        self._restore_bookmarks()
        self._update_virtual_size()
        self._post_status()
        if self.indexes:
            self._index_worker()

    @work(thread=True, exclusive=True, group="logview-index", description="indexing plog lines")
    @_file_errors_reported
    def _index_worker(self) -> None:
        total = sum(ix.size for ix in self.indexes)
        done_before = 0
        lines_before = 0
        first_paint_deadline = time.perf_counter() + FIRST_PAINT_WAIT
        for ix in self.indexes:
            for prog in ix.build(_cancelled, batch=self.index_batch):
                self.post_message(self._Indexed())
                self.post_message(
                    self.Progress(lines_before + prog.lines, done_before + prog.bytes_done, total, False)
                )
                # First screen first: after the first (small) batch, give the UI thread the CPU until
                # it has painted real lines (bounded), instead of competing with it for the GIL.
                while not self._painted.is_set() and time.perf_counter() < first_paint_deadline:
                    if _cancelled():
                        return
                    self._painted.wait(0.01)
            if not ix.done:  # cancelled
                return
            done_before += ix.size
            lines_before += ix.lines
        self.post_message(self._Indexed())

    @work(thread=True, exclusive=True, group="logview-faults", description="finding fault lines")
    @_file_errors_reported
    def _fault_worker(self) -> None:
        faults: list[IntArray] = []
        starts: list[IntArray] = []
        for ix in self.indexes:
            found = fault_lines(ix, _cancelled)
            if found is None:
                return
            faults.append(found)
            starts.append(incident_starts(ix, found))
        self.post_message(self._Faults(faults, starts))

    def _compute_order(self) -> None:
        """Merge and/or filter order (called inside a worker)."""
        flt = self._filter
        columns = self._columns
        need_columns = flt.active or (self.merge and len(self.indexes) > 1)
        if need_columns and columns is None:
            got: list[HeaderColumns] = []
            for ix in self.indexes:
                c = header_columns(ix, _cancelled)
                if c is None:
                    return
                got.append(c)
            columns = got
        if columns is None:
            self.post_message(self._Order(None, None))
            return
        if self.merge and len(columns) > 1:
            order = merge_order(columns)
        else:
            order = np.arange(sum(len(c.ts) for c in columns), dtype=np.int64)
        if flt.active:
            keep = np.concatenate([_keep_mask(c, flt) for c in columns])
            order = order[keep[order]]
        elif not (self.merge and len(columns) > 1):
            self.post_message(self._Order(None, columns))
            return
        self.post_message(self._Order(order, columns))

    @work(thread=True, exclusive=True, group="logview-order", description="merging/filtering plog lines")
    @_file_errors_reported
    def _order_worker(self) -> None:
        for ix in self.indexes:
            if not ix.done:
                ix.build_all(_cancelled)
                if not ix.done:
                    return
        self.post_message(self._Indexed())
        self._compute_order()

    @work(thread=True, exclusive=True, group="logview-search", description="searching plog lines")
    @_file_errors_reported
    def _search_worker(self, text: str, pat: re.Pattern[bytes], start_row: int, backwards: bool) -> None:
        if self._order is None:
            loc = self._locate(start_row)
            k0, i0 = loc if loc is not None else (0, -1)
            ks = range(k0, -1, -1) if backwards else range(k0, len(self.indexes))
            for k in ks:
                ix = self.indexes[k]
                if not backwards and not ix.done:
                    ix.build_all(_cancelled)
                    self.post_message(self._Indexed())
                start = i0 if k == k0 else (ix.lines if backwards else -1)
                hit = search_file(ix, pat, start, backwards=backwards, cancel=_cancelled)
                if _cancelled():
                    return
                if hit is not None:
                    self.post_message(self._Found(text, (k, hit)))
                    return
            self.post_message(self._Found(text, None))
            return
        order = self._order
        bases = np.array(self._bases())
        hit_row = search_order(self.indexes, order, pat, start_row, backwards=backwards, cancel=_cancelled)
        if not _cancelled():
            found: tuple[int, int] | None = None
            if hit_row is not None:
                g = int(order[hit_row])
                k = int(np.searchsorted(bases, g, side="right")) - 1
                found = (k, g - int(bases[k]))
            self.post_message(self._Found(text, found))

    # -- worker results on the UI thread -----------------------------------------------------------

    def on_log_view__indexed(self, _: LogView._Indexed) -> None:
        was_done = self.indexing_done
        self.indexing_done = all(ix.done for ix in self.indexes)
        if self.indexing_done and not was_done:
            # Whichever worker completed the index (indexer, or a search/filter after a cancel),
            # the whole-file work starts once: the fault scan and, for several files, the merge.
            progress = self._progress()
            self.post_message(self.Progress(progress.lines, progress.bytes_done, progress.bytes_total, True))
            self.refresh_bindings()
            self._fault_worker()
            if self.merge and len(self.indexes) > 1 and self._order is None:
                self._order_worker()
        self._update_virtual_size()
        self._apply_pending_goto()
        self.refresh()
        self._post_status()

    def on_log_view__failed(self, msg: LogView._Failed) -> None:
        self.errors.append(msg.text)
        self.notify(msg.text, severity="error", timeout=10)

    def on_log_view__faults(self, msg: LogView._Faults) -> None:
        bases = self._bases()
        empty = [np.empty(0, dtype=np.int64)]
        self._fault_globals = np.concatenate(
            [f + b for f, b in zip(msg.per_file, bases, strict=True)] or empty
        )
        self._incident_globals = np.concatenate(
            [f + b for f, b in zip(msg.starts, bases, strict=True)] or empty
        )
        self._strip_cache.clear()  # the margin marks appear
        self.refresh()
        self._post_status()

    def on_log_view__order(self, msg: LogView._Order) -> None:
        here = self._locate(self.cursor_row)
        self._columns = msg.columns
        self._order = msg.order
        self._row_of = msg.row_of
        if self._filter.active and msg.order is not None:
            total = sum(ix.lines for ix in self.indexes)
            self.notify(
                f"{len(msg.order):,} of {total:,} lines match {_filter_text(self._filter)}", timeout=4
            )
        self._strip_cache.clear()
        self._update_virtual_size()
        row = self._row(*here) if here is not None else None
        self._set_cursor(row if row is not None else 0, center=True)

    def on_log_view__found(self, msg: LogView._Found) -> None:
        row = self._row(*msg.loc) if msg.loc is not None else None
        if msg.loc is None or row is None:
            self.notify(f"no match for {msg.pattern!r}", severity="warning")
            self.post_message(self.SearchDone(msg.pattern, False, None, None))
            return
        self._set_cursor(row, center=True)
        k, i = msg.loc
        self.post_message(self.SearchDone(msg.pattern, True, self.paths_indexed[k], i + 1))

    # -- rendering ---------------------------------------------------------------------------------

    def _update_virtual_size(self) -> None:
        widest = max((ix.max_line_bytes for ix in self.indexes), default=0)
        width = min(widest, MAX_LINE_BYTES) + self._gutter_width()
        self.virtual_size = Size(width, self.row_count)

    def _gutter_width(self) -> int:
        if not self.show_line_numbers:
            return 0
        digits = len(str(max((ix.lines for ix in self.indexes), default=1)))
        tag = len(str(len(self.indexes))) + 1 if self._files_tagged else 0
        return tag + max(digits, 4) + 1

    def _read_text(self, k: int, i: int) -> str | None:
        """Read one line from disk (worker threads; single lines on a user action); None when it
        cannot be read (reported once per distinct failure).

        Control bytes are shown as their Unicode control pictures (ESC as ``␛``): written raw they
        would be interpreted by the terminal.
        """
        try:
            raw = self.indexes[k].raw_line(i, MAX_LINE_BYTES)
        except (OSError, ParseError) as exc:  # gone or replaced since indexed: said once, read again later
            text = _failure_text(exc)
            if text not in self._read_failures:
                self._read_failures.add(text)
                self.post_message(LogView._Failed(text))
            return None
        return raw.decode("utf-8", errors="replace").expandtabs(4).translate(CONTROL_PICTURES)

    def _text(self, k: int, i: int) -> str:
        """Text of a line: from the cache, else read now (only for single lines the user acted on)."""
        text = self._text_cache.get((k, i))
        if text is None:
            read = self._read_text(k, i)
            if read is None:  # not kept: a failure that passes (too many open files) is read again
                return ""
            text = read
            self._text_cache.set((k, i), text)
        return text

    def _meta(self, k: int, i: int, text: str) -> LineMeta:
        key = (k, i)
        meta = self._meta_cache.get(key)
        if meta is None:
            meta = line_meta(text, self.paths_indexed[k], i + 1) if text.startswith("[") else NO_META
            self._meta_cache.set(key, meta)
        return meta

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        width = self.size.width
        loc = self._locate(row)
        if loc is None:
            return Strip.blank(width, self.rich_style)
        cursor = row == self.cursor_row
        key = (row, self._gutter_width(), cursor, self.show_line_numbers, id(self._pattern))
        strip = self._strip_cache.get(key)
        if strip is None:
            text = self._text_cache.get(loc)
            if text is None:  # not read yet: ask the reader worker, paint the gutter only
                self._want_lines()
                return self._render_row(loc[0], loc[1], "", cursor).crop_extend(
                    scroll_x, scroll_x + width, self.rich_style
                )
            strip = self._render_row(loc[0], loc[1], text, cursor)
            self._strip_cache.set(key, strip)
            if self.first_paint is None:
                self.first_paint = self._progress()
                self.first_paint_time = time.perf_counter()
                self._painted.set()
        return strip.crop_extend(scroll_x, scroll_x + width, self.rich_style)

    def _progress(self) -> IndexProgress:
        return IndexProgress(
            sum(ix.lines for ix in self.indexes),
            sum(ix.bytes_done for ix in self.indexes),
            sum(ix.size for ix in self.indexes),
            all(ix.done for ix in self.indexes),
        )

    def _want_lines(self) -> None:
        if not self._read_scheduled:
            self._read_scheduled = True
            self.call_later(self._start_read)

    def _start_read(self) -> None:
        """Read the visible rows plus one page either side in a worker (toolong's LineReader role)."""
        self._read_scheduled = False
        height = max(1, self.scrollable_content_region.height)
        top = self.scroll_offset.y
        wanted: list[tuple[int, int]] = []
        for row in range(max(0, top - height), min(self.row_count, top + 2 * height)):
            loc = self._locate(row)
            if loc is not None and self._text_cache.get(loc) is None:
                wanted.append(loc)
        if wanted:
            self._read_worker(wanted)

    @work(thread=True, exclusive=True, group="logview-read", description="reading visible plog lines")
    @_file_errors_reported
    def _read_worker(self, wanted: list[tuple[int, int]]) -> None:
        got: dict[tuple[int, int], str] = {}
        for k, i in wanted:
            if _cancelled():
                break
            text = self._read_text(k, i)
            if text is not None:
                got[(k, i)] = text
        self.post_message(self._Lines(got))

    def on_log_view__lines(self, msg: LogView._Lines) -> None:
        for key, text in msg.lines.items():
            self._text_cache.set(key, text)
        self.refresh()

    def _render_row(self, k: int, i: int, text: str, cursor: bool) -> Strip:
        meta = self._meta(k, i, text) if text else NO_META
        base = self.rich_style + (LEVEL_STYLES.get(meta.level or "", Style()))
        segments: list[Segment] = []
        if self.show_line_numbers:
            gw = self._gutter_width()
            gutter = str(i + 1)
            if self._files_tagged:
                tag = f"{k + 1}:"
                segments.append(Segment(tag, self.rich_style + FILE_TAG_STYLES[k % len(FILE_TAG_STYLES)]))
                gw -= len(tag)
            segments.append(Segment(gutter.rjust(gw - 1), self.rich_style + GUTTER_STYLE))
            if (k, i) in self._bookmarks:
                segments.append(Segment(BOOKMARK_MARK, self.rich_style + BOOKMARK_STYLE))
            else:
                mark = self._fault_mark(k, i)
                segments.append(Segment(mark or " ", self.rich_style + FAULT_MARK_STYLE))
        segments.extend(self._highlight(text, base))
        strip = Strip(segments)
        if cursor:
            strip = strip.extend_cell_length(max(strip.cell_length, 1), base).apply_style(CURSOR_STYLE)
        return strip

    def _fault_mark(self, k: int, i: int) -> str:
        """Margin mark: ``◆`` at the first line of a fault incident, ``•`` at its other fault lines."""
        g, starts = self._fault_globals, self._incident_globals
        if g is None or starts is None:
            return ""
        gid = self._bases()[k] + i
        j = int(np.searchsorted(starts, gid))
        if j < len(starts) and int(starts[j]) == gid:
            return "◆"
        j = int(np.searchsorted(g, gid))
        return "•" if j < len(g) and int(g[j]) == gid else ""

    def _highlight(self, text: str, base: Style) -> list[Segment]:
        pat = self._pattern
        if pat is None:
            return [Segment(text, base)]
        raw = text.encode("utf-8", errors="replace")
        out: list[Segment] = []
        pos = 0
        for m in pat.finditer(raw):
            if m.end() == m.start():
                continue
            a = len(raw[: m.start()].decode("utf-8", errors="replace"))
            b = len(raw[: m.end()].decode("utf-8", errors="replace"))
            if a > pos:
                out.append(Segment(text[pos:a], base))
            out.append(Segment(text[a:b], base + MATCH_STYLE))
            pos = b
        if pos < len(text):
            out.append(Segment(text[pos:], base))
        return out

    # -- cursor and navigation ---------------------------------------------------------------------

    def _set_cursor(self, row: int, *, center: bool = False) -> None:
        rows = self.row_count
        row = max(0, min(row, rows - 1)) if rows else 0
        self.cursor_row = row
        self._strip_cache.clear()
        # The worker may have indexed lines whose _Indexed message is still queued: size the view
        # first, or the scroll would be clamped to the old height.
        self._update_virtual_size()
        self._scroll_to_cursor(center)
        if not self.size.height:  # not laid out yet: scroll again once it is
            self.call_after_refresh(self._scroll_to_cursor, center)
        self.refresh()
        self._post_status()

    def _scroll_to_cursor(self, center: bool) -> None:
        row = self.cursor_row
        height = max(1, self.scrollable_content_region.height)
        top = self.scroll_offset.y
        if center:
            self.scroll_to(y=max(0, row - height // 2), animate=False, immediate=True, force=True)
        elif row < top:
            self.scroll_to(y=row, animate=False, immediate=True, force=True)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True, force=True)

    def _apply_pending_goto(self) -> None:
        if self._pending_goto is None:
            return
        k, i = self._pending_goto
        ix = self.indexes[k]
        if i >= ix.lines and not ix.done:
            return  # applied after a later batch
        self._pending_goto = None
        i = min(i, max(0, ix.lines - 1))
        row = self._row(k, i)
        if row is None:
            self.notify(f"{ix.path}:{i + 1} is hidden by the filter", severity="warning")
            return
        self._set_cursor(row, center=True)

    def _rows_of(self, g: IntArray) -> IntArray:
        """Rows (sorted) showing the global line ids ``g``; lines hidden by a filter are left out."""
        if self._row_of is None:
            return g
        rows = self._row_of[g]
        return np.sort(rows[rows >= 0])

    def _step(self, g: IntArray | None, *, forward: bool, what: str) -> bool:
        if g is None:
            prog = self._progress()
            if not prog.done:
                self.notify(
                    f"fault lines are found once indexing is done: {_percent(prog)}% indexed",
                    severity="information",
                )
            else:
                self.notify("fault lines are still being scanned (indexing done)", severity="information")
            return False
        rows = self._rows_of(g)
        if forward:
            j = int(np.searchsorted(rows, self.cursor_row, side="right"))
            if j >= len(rows):
                self.notify(f"no further {what}", severity="information")
                return False
        else:
            j = int(np.searchsorted(rows, self.cursor_row, side="left")) - 1
            if j < 0:
                self.notify(f"no earlier {what}", severity="information")
                return False
        self._set_cursor(int(rows[j]), center=True)
        return True

    def action_next_fault(self) -> None:
        self.next_fault()

    def action_prev_fault(self) -> None:
        self.prev_fault()

    def action_next_fault_line(self) -> None:
        self.next_fault_line()

    def action_prev_fault_line(self) -> None:
        self.prev_fault_line()

    def action_toggle_bookmark(self) -> None:
        self.toggle_bookmark()

    def action_next_bookmark(self) -> None:
        self.next_bookmark()

    def action_prev_bookmark(self) -> None:
        self.prev_bookmark()

    def action_next_match(self) -> None:
        if self._pattern_text:
            self._repeat_search(backwards=False)
        else:
            self.action_search()

    def action_prev_match(self) -> None:
        if self._pattern_text:
            self._repeat_search(backwards=True)
        else:
            self.action_search()

    def _repeat_search(self, *, backwards: bool) -> None:
        if self._pattern is not None:
            self._search_worker(self._pattern_text, self._pattern, self.cursor_row, backwards)

    def action_search(self) -> None:
        def done(text: str | None) -> None:
            if text:
                self.search(text)

        self.app.push_screen(
            PromptScreen(
                "Search (regex)", self._pattern_text, prompt_id="search-prompt", placeholder="pattern"
            ),
            done,
        )

    def action_goto_prompt(self) -> None:
        def done(text: str | None) -> None:
            if not text:
                return
            path, _, line = text.strip().rpartition(":")
            if not line.isdigit():
                self.notify(f"{text!r}: expected LINE or FILE:LINE", severity="error")
                return
            if path:
                self.goto(path, int(line))
            else:
                loc = self._locate(self.cursor_row)
                self.goto(self.paths_indexed[loc[0] if loc else 0], int(line))

        if self.indexes:
            self.app.push_screen(
                PromptScreen("Go to line", "", prompt_id="goto-prompt", placeholder="LINE or FILE:LINE"), done
            )

    def action_filter_prompt(self) -> None:
        def done(text: str | None) -> None:
            if text is None:
                return
            try:
                flt = parse_filter(text)
            except ValueError as exc:
                self.notify(str(exc), severity="error")
                return
            self.set_filter(flt.levels, flt.modules, flt.pids)

        self.app.push_screen(
            PromptScreen(
                "Filter (empty = all)",
                _filter_text(self._filter),
                prompt_id="filter-prompt",
                placeholder="level=ERROR,WARNING module=RUNTIME pid=123",
            ),
            done,
        )

    def action_toggle_line_numbers(self) -> None:
        self.show_line_numbers = not self.show_line_numbers
        self._strip_cache.clear()
        self._update_virtual_size()
        self.refresh()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape cancels only while indexing; otherwise it is left to the screen/app (e.g. go back)."""
        if action == "cancel_indexing":
            return not self.indexing_done and not self.indexing_cancelled
        return True

    def action_cancel_indexing(self) -> None:
        if self.indexing_done:
            return
        self.workers.cancel_group(self, "logview-index")
        self.indexing_cancelled = True
        self.refresh_bindings()
        self.notify("indexing cancelled; the lines indexed so far stay visible", severity="warning")

    def action_select_line(self) -> None:
        loc = self._locate(self.cursor_row)
        if loc is not None:
            self.post_message(self.LineSelected(self.paths_indexed[loc[0]], loc[1] + 1, self._text(*loc)))

    def action_cursor_up(self) -> None:
        self._set_cursor(self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        self._set_cursor(self.cursor_row + 1)

    def action_page_up(self) -> None:
        self._set_cursor(self.cursor_row - max(1, self.scrollable_content_region.height - 1))

    def action_page_down(self) -> None:
        self._set_cursor(self.cursor_row + max(1, self.scrollable_content_region.height - 1))

    def action_top(self) -> None:
        self._set_cursor(0)

    def action_bottom(self) -> None:
        self._set_cursor(self.row_count - 1)

    def on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        self._set_cursor(self.scroll_offset.y + offset.y)
        self.action_select_line()


def _percent(prog: IndexProgress) -> int:
    """Whole percent of the bytes indexed (100 only when done; 0 of 0 bytes is done)."""
    if prog.done or not prog.bytes_total:
        return 100
    return min(99, prog.bytes_done * 100 // prog.bytes_total)


def incident_starts(ix: LineIndex, faults: IntArray) -> IntArray:
    """First line of each fault incident among ``faults`` (0-based fault lines of ``ix``, sorted).

    A fault line continues the incident of the previous fault line when both headers parse, name
    the same pid, and it is at most ``INCIDENT_GAP_US`` later; anything else (another pid, a gap, a
    line without a plog header) starts a new incident. Reads only the fault lines' headers (worker).
    """
    starts: list[int] = []
    prev: tuple[int, int] | None = None
    for i in faults.tolist():
        m = HEADER_RE.match(ix.raw_line(i, 256))
        cur = (int(m.group(3)), _stamp_us(m.group(4))) if m else None
        if cur is None or prev is None or cur[0] != prev[0] or not 0 <= cur[1] - prev[1] <= INCIDENT_GAP_US:
            starts.append(i)
        prev = cur
    return np.array(starts, dtype=np.int64)


def _stamp_us(stamp: bytes) -> int:
    """``YYYY-MM-DD-HH:MM:SS.mmm.uuu`` → microseconds on one linear scale (day changes included)."""
    day = date(int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10])).toordinal()
    secs = ((day * 24 + int(stamp[11:13])) * 60 + int(stamp[14:16])) * 60 + int(stamp[17:19])
    return secs * 1_000_000 + int(stamp[20:23]) * 1000 + int(stamp[24:27])


def _keep_mask(c: HeaderColumns, flt: LineFilter) -> npt.NDArray[np.bool_]:
    keep = np.ones(len(c.ts), dtype=np.bool_)
    if flt.levels is not None:
        codes = [i for i, name in enumerate(c.levels) if name in flt.levels]
        keep &= np.isin(c.level, codes)
    if flt.modules is not None:
        codes = [i for i, name in enumerate(c.modules) if name in flt.modules]
        keep &= np.isin(c.module, codes)
    if flt.pids is not None:
        keep &= np.isin(c.pid, list(flt.pids))
    return keep


def _filter_text(flt: LineFilter) -> str:
    parts = []
    if flt.levels is not None:
        parts.append("level=" + ",".join(sorted(flt.levels)))
    if flt.modules is not None:
        parts.append("module=" + ",".join(sorted(flt.modules)))
    if flt.pids is not None:
        parts.append("pid=" + ",".join(str(p) for p in sorted(flt.pids)))
    return " ".join(parts)
