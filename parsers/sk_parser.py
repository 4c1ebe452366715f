"""Parser of the SK exception-handler blocks in plog and ``super_kernel.log`` (artifacts.md §1.4, §1.8).

Input is a stream of :class:`SkMessage` (adapters for plog records and file-logger lines below); output
is one :class:`~skdbg.parsers.sk_records.Incident` per SK fault with every printed field, the source
line of each field, the dialect (D0–D5, triage.md §3.1.3) detected from signature lines, and what is
missing.

Why a state machine with positional attribution: several handler lines carry no ``[Core N]`` prefix
(``errorNodeIdx_ = …``, ``GetCondRegValue: …``, ``Failed to get origin function name for node[N]``,
symbol lines) and belong to the block they are printed in (§1.8, rows 31/33). Why incidents are split on
the A5 anchor *and* on ``=== SkDfxInfo``/``=== SkHeaderInfo``: one plog can hold several faults (row 44),
and in AOT@index the anchor is plog-only (``SK_DLOGE``) so ``super_kernel.log`` blocks have no anchor
(§1.3). A second A5 of the same entry is callback B (adump exception dump, §1.4.6) and is never a second
fault (row 43) unless callback-A-only lines (DfxInfo, header, A25 banner) follow it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime

from skdbg.parsers.bulk import build_source
from skdbg.parsers.common import Source, Unrecognized, oversized_number
from skdbg.parsers.filelog import FileLogPrefix, split_prefix
from skdbg.parsers.plog_line import PlogLine, parse_plog_line
from skdbg.parsers.sk_builders import _BB, _Fields, _IncidentB
from skdbg.parsers.sk_fields import Groups, QueueValues, _hex, _int
from skdbg.parsers.sk_freeze import freeze_incident
from skdbg.parsers.sk_lines import (
    HANDLER_FUNCS,
    Classified,
    RunLineRegex,
    _classified,
    classify,
    run_line_regex,
)
from skdbg.parsers.sk_records import (
    NON_AOT_DETAIL,
    NonSkFault,
    ParseTrace,
    SkHandlerResult,
)
from skdbg.parsers.sk_rows import _BlockLines
from skdbg.parsers.sklog_runs import RUN_PREFIX_TEXT, HandlerRun, SkLog, run_prefix_text
from skdbg.parsers.skmeta_lines import line_text
from skdbg.parsers.textio import iter_lines

# Kinds that only callback A prints (HandleException → ExtractAndPrintSkInfo/ParseAndPrint…, §1.4.1).
A_ONLY = frozenset(
    {
        "a6_callback",
        "a15_header",
        "queue_header",
        "counter_header",
        "dfx_header",
        "a25_banner",
        "a28_banner",
        "map_header_id",
        "map_header_ri",
    }
)
# Kinds that only callback B prints (§1.4.6).
B_ONLY = frozenset(
    {
        "b_in_sk",
        "b_failed",
        "b_note",
        "b_skip_dup",
        "b_array_empty",
        "b_array_header",
        "b_record",
        "b_field",
        "b_tensor",
        "b_tensor_field",
        "b_fill_ok",
        "b_size_small",
    }
)
# Args-extraction lines printed by both callbacks before any table (A7–A14).
PRE = frozenset(
    {
        "a7_args_dev",
        "a8_args_len",
        "a9_get_args_failed",
        "a10_no_args",
        "a11_op_failed",
        "a11_direct",
        "a12_total",
        "a13_total_exceeds",
        "a14_ge",
        "a14_end",
    }
)


# Table rows, most of a block: fed straight to the open incident (see _Parser.feed).
TABLE_LINES = frozenset(
    {
        "queue_task",
        "counter",
        "counter_legacy",
        "dfx_node",
        "dfx_node_legacy",
        "origin_name",
        "origin_name_failed",
        "node_not_func",
        "entry_addr",
    }
)


# --------------------------------------------------------------------------------------------- input


@dataclass(frozen=True, slots=True)
class SkMessage:
    """One SK logger message, wherever it was written (plog or sk_meta file logger)."""

    src: Source
    ts: datetime | None
    level: str  # plog words (ERROR, WARNING, INFO, DEBUG) or file-logger words (… WARN, TRACE)
    pid: int | None
    func: str | None  # the [SK][<Function>] tag / file-logger [<Function>]
    text: str  # message body, leading indentation kept
    origin: str  # "plog" | "filelog"

    @classmethod
    def from_plog(cls, line: PlogLine) -> SkMessage | None:
        """Only ``[SK][Func]`` records become messages; other plog lines are not SK output."""
        if not line.is_sk:
            return None
        return cls(line.src, line.ts, line.level, line.pid, line.func, line.text, "plog")

    @classmethod
    def from_filelog(cls, prefix: FileLogPrefix | None, message: str, src: Source) -> SkMessage:
        """A ``super_kernel.log`` line: function from the file-logger prefix, no ``[SK]`` tag (§3.2)."""
        if prefix is None:
            return cls(src, None, "", None, None, message, "filelog")
        pid = prefix.pid if prefix.pid != 0 else None  # pid 0 = not cached yet (row 50)
        return cls(src, prefix.ts, prefix.level, pid, prefix.func, message, "filelog")


from_plog = SkMessage.from_plog
from_filelog = SkMessage.from_filelog


def iter_plog_messages(path: str) -> Iterator[SkMessage]:
    """Stream the SK messages of one plog file (non-SK lines are skipped: they are not handler output)."""
    for tl in iter_lines(path):
        pl = parse_plog_line(tl.text, Source(path, tl.no), complete=tl.complete)
        if pl is None:
            continue
        msg = SkMessage.from_plog(pl)
        if msg is not None:
            yield msg


def iter_filelog_messages(path: str) -> Iterator[SkMessage]:
    """Stream a ``super_kernel.log``: CONT pieces rejoined, blank lines (``\\n``-ending formats) skipped."""
    for tl in iter_lines(path):
        text = line_text(tl)
        if not text.strip() or oversized_number(text) is not None:
            continue  # the sk_meta parse of the same file records the over-long number as a gap
        prefix, message = split_prefix(text)
        yield SkMessage.from_filelog(prefix, message, Source(path, tl.no))


def _stream(msg: SkMessage) -> tuple[int | None, str, str]:
    """Independent streams: plog per pid (rotated files continue each other), each file-logger file alone."""
    return (msg.pid, msg.origin, msg.src.file if msg.origin == "filelog" else "")


class _Parser(_BlockLines):
    def __init__(self) -> None:
        self.result = SkHandlerResult()
        self.open: dict[tuple[int | None, str, str], _IncidentB] = {}
        self.done: list[_IncidentB] = []
        self.last_a3: dict[tuple[int | None, str, str], int] = {}  # stream → index of its last A3 record
        self.texts: list[str] = []
        self.funcs: list[str | None] = []
        self.srcs: list[Source] = []
        self.first_stream: tuple[int | None, str, str] | None = None
        self.single_stream = True
        self.inert: set[int] = set()  # indices of A6 lines that only noted themselves (see ParseTrace)
        self.key: tuple[int | None, str, str] = (None, "", "")  # stream of the message being fed

    # ------------------------------------------------------------------ driver
    def feed(self, msg: SkMessage) -> None:
        # every message handled while feeding this one (tentative ones included) is of its stream
        self._enter_stream(_stream(msg))
        self.texts.append(msg.text)
        self.funcs.append(msg.func)
        self.srcs.append(msg.src)
        self._route(msg, classify(msg.text))

    def _enter_stream(self, key: tuple[int | None, str, str]) -> None:
        """The messages fed from now on are of stream ``key``; noted for the single-stream check."""
        self.key = key
        if self.first_stream is None:
            self.first_stream = key
        elif key != self.first_stream:
            self.single_stream = False

    def _route(self, msg: SkMessage, c: Classified | None) -> None:
        """What :meth:`feed` does with a message once it is noted in the trace and classified."""
        if c is None:
            self._unknown(msg)
            return
        cur = self.open.get(self.key)
        if cur is not None:
            if cur.tentative is not None:
                self._feed_tentative(cur, msg, c)
                return
            if c.kind in TABLE_LINES:
                # what _dispatch would do: none of its checks before _dispatch_into names these kinds
                self._dispatch_into(cur, msg, c)
                return
        self._dispatch(msg, c)

    # ------------------------------------------------------------------ bulk: super_kernel.log runs
    def feed_log(
        self, parts: Iterable[HandlerRun | tuple[FileLogPrefix | None, str, Source]], file: str
    ) -> None:
        """Feed the handler lines of one ``super_kernel.log`` (:meth:`SkLog.handler_parts`): single
        lines as messages, each run through :meth:`_feed_run`."""
        for part in parts:
            if isinstance(part, HandlerRun):
                self._feed_run(file, part)
            else:
                self.feed(SkMessage.from_filelog(*part))

    def _feed_run(self, file: str, run: HandlerRun) -> None:
        """:meth:`feed` of each line of ``run`` (the message :meth:`SkMessage.from_filelog` makes of it).

        Why: most handler lines are table rows (task queues, counters, DfxInfo) going into the open
        incident, and for them the message object, the dispatch chain and most of the per-message
        bookkeeping were the bulk of the cost. Such a line (a :data:`TABLE_LINES` kind, its stream's
        incident open, not awaiting a second anchor, not in callback B: the case where feed calls
        :meth:`_dispatch_into` at once and that goes straight to the table function) calls its table
        function here and is counted in place; every other line becomes its message and goes the
        general way (:meth:`_route`). Two things are kept across lines: the stream's incident and
        whether it takes table lines (only the general way changes which incident is open, its
        second-anchor wait or callback B; a table function never does), and the incident last
        counted in full with the prefix it was counted with (``touch_at`` of a second line with the
        same prefix only counts it). tests/test_sk_bulk.py holds this to feed, line by line.

        The lines are split by the run regex of :func:`skdbg.parsers.sk_lines.run_line_regex`, which
        also names the kind of the most frequent table rows (:data:`~skdbg.parsers.sk_lines.RUN_KINDS`):
        those take their kind and groups from the match (:func:`_run_kinds`; the :class:`Classified`
        is made only for one that goes the general way), every other line (and a named one over 4000
        characters) from :func:`classify` (tests/test_sk_run_kinds.py holds the two to each other)."""
        add_text, add_func, add_src = self.texts.append, self.funcs.append, self.srcs.append
        fast_of = _FAST_TABLE.get
        key = self.key
        pfx: FileLogPrefix | None = None
        pid: int | None = None
        func: str | None = None  # the function of ``pfx``
        cur: _IncidentB | None = None
        known = False  # ``cur`` is the open incident of ``key`` (None: none open, or it takes no table)
        counted: _IncidentB | None = None  # the incident counted in full last, with the prefix ``at``
        at: FileLogPrefix | None = None
        run_lines = _run_lines()
        kind_of = _run_kinds().get
        last_head = ""  # the prefix text of the last line (a burst's lines share it: parsed once)
        for no, m in enumerate(run_lines.regex.finditer(run.data.decode("ascii")), run.first_no):
            kind = m.lastgroup
            assert kind is not None  # a branch or RUN_OTHER
            text = m[kind]
            src = build_source(file, no, None)
            head = m[1]
            if head != last_head:
                last_head = head
                got = run_prefix_text(head)
            if got is not pfx:
                pfx = got
                func = pfx.func
                pid = pfx.pid if pfx.pid != 0 else None  # as from_filelog: pid 0 = not cached yet
                new_key = (pid, "filelog", file)
                if new_key != key:  # (the stream of every message fed so far is noted already)
                    key = new_key
                    self._enter_stream(key)
                    known = False
            add_text(text)
            add_func(func)
            add_src(src)
            # classify leaves a body over 4000 characters unknown when a group is an oversized number
            c: Classified | None = None  # made only for a line that goes the general way
            spec = kind_of(kind)
            # a named line: its kind and groups as classify gives them (see RunLineRegex)
            if spec is not None and len(text) <= 4000:
                idx, many, d, fast, sig = spec
                groups: Groups = m.group(*idx) if many else (m[idx[0]],)
            else:
                c = classify(text)
                if c is None:
                    self._route(SkMessage(src, pfx.ts, pfx.level, pid, func, text, "filelog"), None)
                    known = False
                    continue
                kind, groups, d = c.kind, c.groups, c.dialects
                fast = fast_of(kind)
                sig = None if d is None else (d[0], d[1], kind)
            if fast is not None:
                if not known:
                    cur = self.open.get(key)
                    if cur is not None and (cur.tentative is not None or cur.section == "b"):
                        cur = None
                    known = True
                if cur is not None and fast(self, cur, kind, groups, src, text):
                    if cur is counted and pfx is at:
                        cur.line_count += 1
                        cur.touched.append(src)
                    else:
                        cur.touch_at(src, "filelog", pfx.ts, pid)
                        counted, at = cur, pfx
                    if sig is not None:
                        cur.sigs.append(sig)
                    continue
            if c is None:
                c = _classified(Classified, (kind, None, groups, d))
            self._route(SkMessage(src, pfx.ts, pfx.level, pid, func, text, "filelog"), c)
            known = False

    def finish(self) -> SkHandlerResult:
        for key in list(self.open):
            cur = self.open.pop(key)
            if cur.tentative is not None:
                self._resolve_as_b(cur)
            self.done.append(cur)
        self.done.sort(key=lambda b: (b.src.file, b.src.line or 0))
        for b in self.done:
            self.result.incidents.append(freeze_incident(b, self.result))
        self.result.trace = ParseTrace(
            tuple(self.texts),
            tuple(self.funcs),
            tuple(self.srcs),
            self.single_stream,
            frozenset(self.inert),
            tuple(tuple(b.touched) for b in self.done),
        )
        return self.result

    def _unknown(self, msg: SkMessage) -> None:
        cur = self.open.get(self.key)
        handler_tag = msg.func is None or msg.func in HANDLER_FUNCS
        if not msg.text.strip():
            return
        if handler_tag and (cur is not None or msg.func is not None):
            ctx = f"sk_handler:{cur.section}" if cur is not None else "sk_handler"
            self.result.unrecognized.append(Unrecognized(msg.src, msg.text, ctx))
            if cur is not None:
                cur.touch(msg)
        else:
            self.result.foreign_lines += 1

    def _close(self, key: tuple[int | None, str, str]) -> None:
        cur = self.open.pop(key, None)
        if cur is not None:
            self.done.append(cur)

    def _new(self, msg: SkMessage) -> _IncidentB:
        self._close(self.key)
        b = _IncidentB(msg.src, msg.pid)
        self.open[self.key] = b
        return b

    # ------------------------------------------------------------------ second anchor handling
    def _feed_tentative(self, cur: _IncidentB, msg: SkMessage, c: Classified) -> None:
        assert cur.tentative is not None
        sep_len = len(c.groups[0] or "") if c.kind == "separator" else 0
        if c.kind in A_ONLY or sep_len in (50, 52):
            pending = cur.tentative
            cur.tentative = None
            new = self._new(pending[0][0])
            for m, k in pending:
                self._dispatch_into(new, m, k)
            self._dispatch_into(new, msg, c)
            return
        if c.kind in ("a5_anchor", "a5_anchor_d0"):
            self._resolve_as_b(cur)
            self._dispatch(msg, c)
            return
        if (
            c.kind in B_ONLY
            or c.core is not None
            or c.kind in ("error_node_idx", "symtab")
            or sep_len in (60, 62)
        ):
            self._resolve_as_b(cur)
            self._dispatch_into(cur, msg, c)
            return
        cur.tentative.append((msg, c))

    def _resolve_as_b(self, cur: _IncidentB) -> None:
        pending = cur.tentative or []
        cur.tentative = None
        if pending:
            self._enter_b(cur, pending[0][0].src)
        for m, k in pending:
            self._dispatch_into(cur, m, k)

    @staticmethod
    def _enter_b(cur: _IncidentB, src: Source) -> None:
        if cur.b is None:
            cur.b = _BB(src)
        cur.section = "b"

    # ------------------------------------------------------------------ top-level dispatch
    def _dispatch(self, msg: SkMessage, c: Classified) -> None:
        k = c.kind
        cur = self.open.get(self.key)
        if k in (
            "a3_not_sk",
            "a0_null",
            "a1_no_handle",
            "a2_no_name",
            "a4_skip",
            "b_not_sk",
            "b_null_params",
        ):
            if cur is not None and cur.section == "b" and k in ("a1_no_handle", "a2_no_name"):
                self._dispatch_into(cur, msg, c)
                return
            self._non_sk(msg, c)
            return
        if k in ("a5_anchor", "a5_anchor_d0"):
            entry = c.groups[0]
            if cur is not None and cur.section == "b" and cur.b is not None and cur.b.anchor is None:
                self._dispatch_into(cur, msg, c)
                return
            if cur is not None and cur.anchor is not None and cur.b is None and cur.entry == entry:
                cur.tentative = [(msg, c)]
                return
            new = self._new(msg)
            self._dispatch_into(new, msg, c)
            return
        if k == "b_start":
            if cur is None:
                cur = self._new(msg)
            if cur.b is not None and cur.b.anchor is not None:
                cur = self._new(msg)
            self._enter_b(cur, msg.src)
            self._dispatch_into(cur, msg, c)
            return
        if cur is None or self._starts_new(cur, k):
            cur = self._new(msg)
        elif (
            k in ("a7_args_dev", "a8_args_len", "a12_total") and cur.section != "b" and cur.has_late_content()
        ):
            cur.tentative = [(msg, c)]  # anchorless callback B (AOT@index file logger) or a new fault
            return
        elif k == "a6_callback" and c.dialects is None:
            # an open incident outside callback B, not awaiting a second anchor: A6 only adds a note
            # here and no later decision reads notes, so a copy without this DEBUG line (plog at INFO)
            # parses the same otherwise (skdbg.parsers.sk_copies)
            self.inert.add(len(self.srcs) - 1)
        self._dispatch_into(cur, msg, c)

    @staticmethod
    def _starts_new(cur: _IncidentB, k: str) -> bool:
        """A table that this incident already printed starts the next fault (row 44, anchorless filelog)."""
        if k == "a15_header":
            return cur.header is not None or cur.has_late_content()
        if k == "dfx_header":
            return cur.dfx is not None or bool(cur.cores) or cur.all_core is not None
        return k in A_ONLY and cur.section == "b"

    def _non_sk(self, msg: SkMessage, c: Classified) -> None:
        k = c.kind
        if k == "a4_skip" and self.last_a3.get(self.key) is not None:
            i = self.last_a3.pop(self.key)
            prev = self.result.non_aot[i]
            self.result.non_aot[i] = replace(prev, sources=(*prev.sources, msg.src))
            return
        name: str | None = None
        family: str | None = None
        ret: int | None = None
        if k == "a3_not_sk":
            name = c.groups[0] or ""
            if name.startswith("sk_constant_entry"):
                kind, family, detail = "non_aot_sk", "constant_codegen", NON_AOT_DETAIL
            elif name.startswith("te_superkernel"):
                kind, family, detail = "non_aot_sk", "jit_te_superkernel", NON_AOT_DETAIL
            else:
                kind, detail = "not_sk_entry", "faulting kernel is not an SK entry; handler skipped it"
        elif k == "a0_null":
            kind, detail = "null_exception_info", "exception callback got no exception info"
        elif k in ("a1_no_handle", "a2_no_name"):
            kind, detail, ret = "entry_check_failed", msg.text.strip(), _int(c.groups[0])
        elif k == "a4_skip":
            kind, detail = "skip_notice", "handler skipped a non-sk_entry exception"
        else:
            kind, detail = "dump_skip", msg.text.strip()
        rec = NonSkFault(msg.src, kind, name, family, detail, ret, msg.pid, msg.ts, (msg.src,))
        self.result.non_aot.append(rec)
        if k == "a3_not_sk":
            self.last_a3[self.key] = len(self.result.non_aot) - 1

    # ------------------------------------------------------------------ incident-level handling
    def _dispatch_into(self, cur: _IncidentB, msg: SkMessage, c: Classified) -> None:
        cur.touch(msg)
        if c.dialects is not None:
            cur.sigs.append((c.dialects[0], c.dialects[1], c.kind))
        if cur.section == "b":
            self._in_b(cur, msg, c)
            return
        k = c.kind
        g = c.groups
        src = msg.src
        # the table lines first (most of a block); a line a table function leaves goes on down
        table = _TABLE.get(k)
        if table is not None and table(self, cur, k, g, src, msg.text):
            return
        text = msg.text.strip()
        if k in ("a5_anchor", "a5_anchor_d0"):
            cur.anchor = src
            cur.src = src
            cur.entry = g[0]
            if k == "a5_anchor":
                cur.op_trace = g[1] == "true"
            else:
                cur.op_trace = None
            return
        if k in PRE:
            self._pre(cur, msg, c)
            return
        if k == "a6_callback":
            cur.notes.append((text, src))
            return
        if k in ("a1_no_handle", "a2_no_name"):
            cur.notes.append((text, src))
            return
        if k == "a15_header":
            cur.header = _Fields()
            cur.header_src = src
            cur.section = "header"
            return
        if k == "a15_field":
            if cur.header is None:
                cur.header = _Fields()
                cur.header_src = src
            self._put(cur.header, g[0] or "", _int(g[1]), src)
            return
        if k in ("a15_model_id", "a15_model_ri"):
            if cur.header is None:
                cur.header = _Fields()
                cur.header_src = src
            h = cur.header
            self._put(h, "model_scope_value", _hex(g[0]), src)
            self._put(h, "model_idx", _int(g[1]), src)
            self._put(h, "sk_scope_id", _int(g[2]), src)
            if k == "a15_model_id":
                self._put(h, "model_id", g[3] or "", src)
            else:
                self._put(h, "original_model_ri", _hex(g[3]), src)
            return
        if k == "model_id_oor":
            cur.model_errors.append((_int(g[0]), _int(g[1]), src))
            return
        if k == "queue_header":
            ct = g[0] or ""
            f: _Fields[QueueValues] = _Fields()
            f.put("offset", _int(g[1]), src)
            cur.queues[ct] = (src, f, [])
            cur.queue_key = ct
            cur.section = "queue"
            return
        if k == "queue_cnt" and cur.section == "queue" and cur.queue_key is not None:
            self._put(cur.queues[cur.queue_key][1], "task_cnt", _int(g[0]), src)
            return
        if k == "counter_header":
            cur.counters = (src, _int(g[0]), [])
            cur.section = "counters"
            return
        if k == "dfx_header":
            cur.dfx = (src, _int(g[0]), _int(g[1]), [])
            cur.section = "dfx"
            return
        if k == "a23_reg_failed":
            self._abort(cur, "A23", text, _int(g[0]), src)
            return
        if k == "a24_reg":
            self._put(cur.pre, "reg_core_num", _int(g[0]), src)
            return
        if k == "a25_banner":
            cur.section = "exc"
            return
        if k == "separator":
            return
        if k == "a28_banner":
            cur.all_core = (src, _int(g[0]), [])
            cur.section = "allcore"
            return
        if k in ("map_header_id", "map_header_ri"):
            cur.model_map = (src, "modelId" if k == "map_header_id" else "modelRI", _int(g[0]), [])
            cur.section = "map"
            return
        if k in ("map_entry_id", "map_entry_ri") and cur.model_map is not None:
            val = (g[1] or "") if k == "map_entry_id" else f"0x{_hex(g[1]):x}"
            cur.model_map[3].append((_int(g[0]), val))
            return
        if cur.section == "allcore" and cur.all_core is not None and self._all_core_line(cur, msg, c):
            return
        if c.core is not None or k in (
            "error_node_idx",
            "cond_arch",
            "core_exceeds",
            "sym_header",
            "function_name",
            "no_function_name",
            "lookup",
            "symtab",
            "origin_name_failed",
            "legacy_name_failed",
        ):
            if cur.section not in ("exc",):
                cur.section = "exc"
            self._core_line(cur, cur.cores, "A", msg, c)
            return
        self.result.unrecognized.append(Unrecognized(src, msg.text, f"sk_handler:{cur.section}:{k}"))


def parse_sk_messages(messages: Iterable[SkMessage]) -> SkHandlerResult:
    """Parse a stream of SK messages (one or several files, any order within a pid) into incidents."""
    p = _Parser()
    for msg in messages:
        p.feed(msg)
    return p.finish()


@functools.cache
def _run_lines() -> RunLineRegex:
    """The handler runs' line regex (:func:`run_line_regex`), compiled on first use: a process that
    reads no super_kernel.log does not pay for it."""
    return run_line_regex(RUN_PREFIX_TEXT)


#: a table function: takes a table line of its kinds into the open incident (True) or leaves it (False)
_TableFn = Callable[[_Parser, _IncidentB, str, Groups, Source, str], bool]
#: what :meth:`_Parser._feed_run` needs of a line the run regex names a kind: the indices of the kind's
#: catalogue groups, whether there are several, its dialect range (:class:`RunLineRegex`), its table
#: function (None: the kind goes the general way) and the signature a counted row adds to ``sigs``
#: (None without a dialect range)
_RunKind = tuple[tuple[int, ...], bool, tuple[int, int] | None, _TableFn | None, tuple[int, int, str] | None]


@functools.cache
def _run_kinds() -> dict[str, _RunKind]:
    """Per kind of :func:`_run_lines`, what :data:`_RunKind` says: one dict lookup a line, where there
    were two. Why: most lines of a run are table rows taken by their table function, which reads the
    kind and the groups, never the :class:`Classified` ``classify`` would make; that tuple and the
    second lookup of the function cost ~4 ms of the bench scene's ~60 ms handler block. (A signature is
    a tuple: one made per kind is shared by every row of it.)"""
    return {
        kind: (idx, many, d, _FAST_TABLE.get(kind), None if d is None else (d[0], d[1], kind))
        for kind, (idx, many, d) in _run_lines().groups.items()
    }


def parse_sk_log(log: SkLog) -> SkHandlerResult:
    """:func:`parse_sk_messages` of a ``super_kernel.log``'s handler lines (the messages
    ``log.handler_messages(SkMessage.from_filelog)`` gives), its runs read a run at a time
    (:meth:`_Parser._feed_run`): the same result, without a message object per table line."""
    p = _Parser()
    p.feed_log(log.handler_parts(), log.file)
    return p.finish()


#: the table function of each kind :meth:`_Parser._dispatch_into` tries first
_TABLE: dict[str, _TableFn] = {
    "queue_task": _Parser._queue_task,
    "counter": _Parser._counter,
    "counter_legacy": _Parser._counter,
    "dfx_node": _Parser._dfx_node,
    "dfx_node_legacy": _Parser._dfx_node,
    **dict.fromkeys(
        (
            "origin_name",
            "origin_name_failed",
            "node_not_func",
            "function_name",
            "legacy_name_failed",
            "entry_addr",
        ),
        _Parser._dfx_sub,
    ),
}
#: the kinds :meth:`_Parser.feed` hands to _dispatch_into at once (the bulk path's table lines)
_FAST_TABLE = {k: fn for k, fn in _TABLE.items() if k in TABLE_LINES}
assert set(_FAST_TABLE) == TABLE_LINES  # a table kind without a table function would be misread


def parse_plog_file(path: str) -> SkHandlerResult:
    """Convenience: stream one plog file through :func:`parse_sk_messages`."""
    return parse_sk_messages(iter_plog_messages(path))


def parse_super_kernel_log(path: str) -> SkHandlerResult:
    """Convenience: stream one ``sk_meta/<pid>/model_*/super_kernel.log`` through the parser."""
    return parse_sk_messages(iter_filelog_messages(path))
