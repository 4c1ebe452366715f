"""The run-at-a-time parse of super_kernel.log's handler lines against the message-at-a-time parse.

``parse_sk_log(log)`` reads the log's handler runs a run at a time (sk_parser._Parser._feed_run); the same messages as a list go through ``_Parser.feed`` one by one, the
state machine that is the oracle. Both must give the same result, field for field, and the same
ParseTrace (which the plog copy is derived from). The lines are hand-written in the formats of the
handler's catalogue (artifacts.md §1.4, file-logger prefix §3.2); hypothesis breaks the table runs up:
shuffled rows, rows of another table, unknown or foreign lines, another writer pid, pid 0, malformed
or out-of-range numbers, dropped headers, another stamp, a second anchor, callback B.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sk_core_block import CORE_30_MATCHED

from skdbg.parsers import sk_parser
from skdbg.parsers.common import Source
from skdbg.parsers.sk_handler import SkHandlerResult, SkMessage, parse_sk_log, parse_sk_messages
from skdbg.parsers.sklog_runs import HandlerRun, SkLog, read_super_kernel_log

PID = 48213
OTHER_PID = 7
TS = "2026-06-10 14:03:21.518"


def line(
    func: str,
    message: str,
    *,
    pid: int = PID,
    ts: str = TS,
    no: int = 1,
    src: str = "sk_dfx_exception_handler.cpp",
) -> str:
    """One file-logger line (§3.2 prefix), by default of the handler's source file."""
    return f"{ts} [{pid}:140425347876672] [INFO] [{src}:{no}] [{func}] {message}"


# one incident of callback A, D5, written out (§1.4.1–§1.4.5)
HEAD = [
    ("IsSuperKernelException", "Exception is from superkernel function 'sk_entry_mix11_op_trace', "
     "op_trace=true, proceeding with handling"),
    ("HandleException", "Aclgraph superkernel aicore exception occurred, callback function."),
    ("ExtractSkDeviceEntryArgsPtr", "---skDeviceEntryArgsDev: 0x12c100400000"),
    ("ExtractSkDeviceEntryArgsPtr", "---skDeviceEntryArgsPtrLen: 7512"),
    ("CopySkDeviceEntryArgsToHost", "---Total SkDeviceEntryArgs size: 7512 bytes"),
    ("PrintSkHeaderInfo", "=== SkHeaderInfo ==="),
    ("PrintSkHeaderInfo", "aicQueOffset: 48"),
    ("PrintSkHeaderInfo", "nodeCnt: 3"),
    ("PrintSkHeaderInfo", "modelIdIndexAndSkScopeId: 0x30000 (modelIdIdx=0, skScopeId=3, modelId=48_1)"),
]  # fmt: skip
AIC_QUEUE = [
    ("PrintTaskQueue", "=== AIC TaskQue (offset=48) ==="),
    ("PrintTaskQueue", "taskCnt: 3"),
    ("PrintTaskQueue", "  [0] index=0, type=FUNC, numBlocks=24, args=0x12c110002000"),
    ("PrintTaskQueue", "  [1] index=0, type=SYNC, numBlocks=0, args=0x5"),
    ("PrintTaskQueue", "  [2] index=2, type=EVENT_NOTIFY, numBlocks=0, args=0x12c100800340"),
]
AIV_QUEUE = [
    ("PrintTaskQueue", "=== AIV TaskQue (offset=944) ==="),
    ("PrintTaskQueue", "taskCnt: 2"),
    ("PrintTaskQueue", "  [0] index=1, type=FUNC, numBlocks=48, args=0x12c100412000"),
    ("PrintTaskQueue", "  [1] index=2, type=EVENT_WAIT, numBlocks=0, args=0x12c100800340"),
]
COUNTERS = [
    ("PrintCounterInfo", "=== SkCounterInfo (offset=2176) ==="),
    ("PrintCounterInfo", "  [core 0] index=0, opState=0"),
    ("PrintCounterInfo", "  [core 1] index=1, opState=2"),
    ("PrintCounterInfo", "  [core 30] index=1, opState=2"),
]
DFX = [
    ("PrintDfxInfo", "=== SkDfxInfo (offset=6976, nodeCnt=3) ==="),
    ("PrintDfxInfo", "  [node 0] binHdl=0xaaaaf3c00a50, funcHdlOri=0xaaaaf3c00b00, aicSize=0x1a0, "
     "aivSize=0x0, numBlocks=24, cubeNum=24, vecNum=0"),
    ("PrintDfxInfo", "    Origin function name: matmul_custom"),
    ("PrintDfxInfo", "    entryAic[0]=0x124080a03800"),
    ("PrintDfxInfo", "    entryAic[2]=0x124080a03a00"),
    ("PrintDfxInfo", "  [node 1] binHdl=0xaaaaf3d00a10, funcHdlOri=0xaaaaf3d00b10, aicSize=0x0, "
     "aivSize=0x1a2c, numBlocks=48, cubeNum=0, vecNum=48"),
    ("PrintDfxInfo", "    Origin function name: add_custom"),
    ("PrintDfxInfo", "    entryAiv[0]=0x124080c01200"),
    ("PrintDfxInfo", "    entryAiv[1]=0x124080c04300"),
    ("PrintDfxInfo", "  [node 2] binHdl=0x0, funcHdlOri=0x0, aicSize=0x0, aivSize=0x0, numBlocks=0, "
     "cubeNum=0, vecNum=0"),
    ("PrintDfxInfo", "    Node[2] is not a FUNC type"),
]  # fmt: skip
TAIL = [
    *CORE_30_MATCHED,
    ("PrintCoreSymbols", "[Core 30] Type=AIV, opState=2, opId=1"),
    ("PrintCoreSymbols", "[Core 30] Currently running opId=1"),
    ("GetCondRegValue", "GetCondRegValue: arch=DAV_2201, condRegLowIdx=20, condRegHighIdx=21"),
    ("ParseAndPrintCondInfo", "[Core 30] AIV COND register value: 0x30102 (opState=2, opIndex=1)"),
    ("PrintModelIdIndexMap", "=== modelId Index Map (total=1) ==="),
    ("PrintModelIdIndexMap", "  [0] modelId=48_1"),
    ("PrintAllCoreSymbols", "=== Sub-kernel running info on all 2 cores ==="),
    ("PrintAllCoreSymbols", "[Core 0] Type=AIC, opState=0, opId=0"),
    ("PrintAllCoreSymbols", "[Core 0] No SK entry executed yet."),
]
BLOCK = HEAD + AIC_QUEUE + AIV_QUEUE + COUNTERS + DFX + TAIL

#: lines hypothesis puts among the others (func, message): each breaks a run of table lines somehow
EXTRA = [
    ("PrintDfxInfo", "    something the catalogue does not know"),  # unknown handler text
    ("GraphBuilder", "fused 3 scopes"),  # another SK component's line (foreign)
    ("PrintDfxInfo", "  [core 5] index=5, opState=3"),  # a counter row inside another table
    ("PrintTaskQueue", "  [3] index=9, type=FUNC, numBlocks=8, args=0x10"),  # a task row elsewhere
    ("PrintDfxInfo", "    entryAic[7]=0x1"),  # entry index out of range
    ("PrintDfxInfo", "    entryAiv[01]=0xABC"),
    ("PrintDfxInfo", "  [node x] binHdl=0x1, funcHdlOri=0x2, aicSize=0x3, aivSize=0x4"),  # malformed
    ("PrintDfxInfo", "  [node 5] binHdl=0x1, funcHdlOri=0x2, aicSize=0x3, aivSize=0x4"),  # legacy row
    ("PrintDfxInfo", "    Failed to get origin function name for node[9], ret=507000"),  # other node
    ("PrintDfxInfo", "    Node[0] is not a FUNC type"),
    ("PrintDfxInfo", "    Origin function name: "),
    ("PrintDfxInfo", "    Function name: legacy_name"),
    ("PrintCounterInfo", "  [core 2] index=0, launch=1, exit=0"),  # legacy counter row
    ("PrintCounterInfo", "  [core 3] index=" + "9" * 30 + ", opState=1"),  # a long number
    ("PrintTaskQueue", "  [4] index=1, type=FUNC, numBlocks=48, args=0xzz"),  # not a row
    ("PrintTaskQueue", "\t[5] index=3, type=SYNC, numBlocks=0, args=0x0  "),  # tabs and trailing blanks
    ("PrintTaskQueue", "taskCnt: 7"),
    ("PrintTaskQueue", "=== AIV TaskQue (offset=944) ==="),
    ("PrintDfxInfo", "=== SkDfxInfo (offset=6976, nodeCnt=3) ==="),  # a second table: a new fault
    ("PrintCounterInfo", "=== SkCounterInfo (offset=2176) ==="),
    ("IsSuperKernelException", HEAD[0][1]),  # a second anchor (callback B or a new fault)
    ("ProcessExceptionDump", "Start SuperKernelExceptionHandler::ProcessExceptionDump"),
    ("HandleException", "Aclgraph superkernel aicore exception occurred, callback function."),
    ("ExtractSkDeviceEntryArgsPtr", "---skDeviceEntryArgsDev: 0x12c100400000"),
    ("ParseAndPrintSubKernelSymbols", "=== Sub-kernel running info on exception cores ==="),
    ("PrintMatchedNodeBasicInfo", "[Core 31] CoreType: AIC"),
    ("PrintDfxInfo", "   "),  # a blank body
]


def write_log(path: Path, lines: list[str]) -> SkLog:
    # a first line of another function: the writer pid is learnt from it, the handler lines form runs
    head = [
        line("Process", "Start aclskOptimize", src="sk_opt.cpp"),
        line("Process", "x", pid=OTHER_PID, src="a.cpp"),
    ]
    path.write_text("\n".join(head + lines) + "\n", encoding="utf-8")
    return read_super_kernel_log(path)


def trace_fields(r: SkHandlerResult) -> tuple[Any, ...]:
    t = r.trace
    assert t is not None
    return (t.texts, t.funcs, t.srcs, t.single_stream, t.inert, t.touched)


def both(log: SkLog) -> tuple[SkHandlerResult, SkHandlerResult]:
    """The run-at-a-time parse and the message-at-a-time one of the same log."""
    bulk = parse_sk_log(log)
    one_by_one = parse_sk_messages(list(log.handler_messages(SkMessage.from_filelog)))
    return bulk, one_by_one


def assert_same(log: SkLog) -> SkHandlerResult:
    bulk, ref = both(log)
    assert bulk.incidents == ref.incidents
    assert bulk.non_aot == ref.non_aot
    assert bulk.unrecognized == ref.unrecognized
    assert bulk.gaps == ref.gaps
    assert bulk.foreign_lines == ref.foreign_lines
    assert trace_fields(bulk) == trace_fields(ref)
    return bulk


class _Routed:
    """Counts the lines the bulk path hands to the general way (so a test knows it took the fast one)."""

    def __init__(self) -> None:
        self.count = 0
        self.route = sk_parser._Parser._route

    def __enter__(self) -> _Routed:
        spy = self

        def route(parser: Any, msg: Any, c: Any) -> None:
            spy.count += 1
            spy.route(parser, msg, c)

        sk_parser._Parser._route = route  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        sk_parser._Parser._route = self.route  # type: ignore[method-assign]


# --------------------------------------------------------------------------------------------- examples


def test_block_parses_the_same_and_table_rows_skip_the_general_way(tmp_path: Path) -> None:
    log = write_log(tmp_path / "super_kernel.log", [line(f, m) for f, m in BLOCK])
    assert any(isinstance(i, HandlerRun) for i in log.items)
    with _Routed() as routed:
        res = parse_sk_log(log)
    rows = len(AIC_QUEUE) + len(AIV_QUEUE) + len(COUNTERS) + len(DFX) - 6  # minus headers and counts
    assert routed.count == len(BLOCK) - rows
    (inc,) = res.incidents
    assert inc.aic_queue is not None and [t.args for t in inc.aic_queue.tasks] == [
        0x12C110002000, 0x5, 0x12C100800340,
    ]  # fmt: skip
    assert inc.counters is not None and [(e.core, e.op_state) for e in inc.counters.entries] == [
        (0, 0), (1, 2), (30, 2),
    ]  # fmt: skip
    assert inc.dfx is not None
    n0, n1, n2 = inc.dfx.nodes
    entry2 = 2 + BLOCK.index(("PrintDfxInfo", "    entryAic[2]=0x124080a03a00")) + 1  # 2 head lines
    assert (n0.origin_name, n0.entry_aic, n0.source_of("entryAic[2]")) == (
        "matmul_custom", (0x124080A03800, 0, 0x124080A03A00, 0), Source(log.file, entry2),
    )  # fmt: skip
    assert n1.entry_aiv == (0x124080C01200, 0x124080C04300, 0, 0)
    assert (n2.name_kind, n2.is_func) == ("not_func", False)
    assert (inc.line_count, inc.pid, inc.dialect) == (len(BLOCK), PID, "D5")
    assert assert_same(log) == res


PINNED = Path(__file__).resolve().parent / "data" / "golden" / "sk_handler" / "bulk-cases.txt"


def pinned_cases() -> list[tuple[str, list[tuple[str, str]]]]:
    """The hand-written blocks whose parse is pinned: the block; the block with the EXTRA lines put
    after every second line; the block without its counter and DfxInfo headers."""
    mixed: list[tuple[str, str]] = []
    for i, item in enumerate(BLOCK):
        mixed.append(item)
        if i % 2 == 1:
            mixed.append(EXTRA[(i // 2) % len(EXTRA)])
    no_headers = HEAD + AIC_QUEUE + COUNTERS[1:] + DFX[1:] + TAIL
    return [("block", BLOCK), ("block-with-extras", mixed), ("no-headers", no_headers)]


def test_both_ways_give_what_the_parser_gave_before_the_run_at_a_time_parse(tmp_path: Path) -> None:
    """The two ways share the table functions, so comparing them cannot catch a change in those:
    here both are held to the text the message-at-a-time parser gave before this change (d124faf,
    tests/data/README.md)."""
    expected = PINNED.read_text(encoding="utf-8")
    for parse in ("bulk", "one_by_one"):
        out = []
        for name, items in pinned_cases():
            path = tmp_path / "super_kernel.log"
            log = write_log(path, [line(f, m) for f, m in items])
            bulk, ref = both(log)
            r = bulk if parse == "bulk" else ref
            text = repr((r.incidents, r.non_aot, r.unrecognized, r.gaps, r.foreign_lines, trace_fields(r)))
            out.append(f"=== {name}\n" + text.replace(str(path), "<log>") + "\n")
        assert "".join(out) == expected, parse


def test_rows_without_headers_are_gaps_both_ways(tmp_path: Path) -> None:
    """counter_header_missing / dfx_header_missing: the row itself opens the table (both paths)."""
    lines = HEAD + AIC_QUEUE + COUNTERS[1:] + DFX[1:] + TAIL
    res = assert_same(write_log(tmp_path / "super_kernel.log", [line(f, m) for f, m in lines]))
    assert [g.kind for g in res.gaps] == ["counter_header_missing", "dfx_header_missing", "dfx_node_count"]
    (inc,) = res.incidents
    assert inc.counters is not None and inc.counters.offset == 0 and len(inc.counters.entries) == 3
    assert inc.dfx is not None and (inc.dfx.node_cnt, len(inc.dfx.nodes)) == (0, 3)


def test_rows_before_any_table_and_outside_their_table(tmp_path: Path) -> None:
    """A task row outside a queue, an entry row outside DfxInfo: the general way decides (unrecognized,
    a core-less line without a core); the bulk path must not take them as table rows."""
    lines = [
        *HEAD,
        ("PrintTaskQueue", "  [0] index=0, type=FUNC, numBlocks=24, args=0x1"),
        ("PrintDfxInfo", "    entryAic[0]=0x1"),
        ("PrintDfxInfo", "    Origin function name: x"),
        *AIC_QUEUE,
        *COUNTERS,
        ("PrintTaskQueue", "  [3] index=0, type=FUNC, numBlocks=24, args=0x2"),
        *TAIL,
    ]
    res = assert_same(write_log(tmp_path / "super_kernel.log", [line(f, m) for f, m in lines]))
    assert [u.context for u in res.unrecognized] == [
        "sk_handler:header:queue_task",
        "sk_handler:header:entry_addr",
        "sk_handler:header:origin_name",
        "sk_handler:counters:queue_task",
    ]


def test_rows_inside_callback_b_are_callback_b_lines(tmp_path: Path) -> None:
    """Callback B (§1.4.6) takes whatever follows its start; a table row there is one of its notes."""
    b_start = ("ProcessExceptionDump", "Start SuperKernelExceptionHandler::ProcessExceptionDump")
    lines = [*BLOCK, b_start, *DFX[1:4], *COUNTERS[1:], *AIC_QUEUE[2:]]
    res = assert_same(write_log(tmp_path / "super_kernel.log", [line(f, m) for f, m in lines]))
    (inc,) = res.incidents
    assert inc.callback_b is not None
    assert [n for n, _src in inc.callback_b.notes] == [m.strip() for _f, m in lines[len(BLOCK) :]]
    assert inc.dfx is not None and len(inc.dfx.nodes) == 3


def test_two_writers_interleaved_are_two_streams(tmp_path: Path) -> None:
    """Rows of two pids alternating inside one run: each goes to its own pid's incident."""
    lines = [line(f, m) for f, m in BLOCK[:14]]
    lines += [line(f, m, pid=OTHER_PID) for f, m in BLOCK[:14]]
    for (f, m), (g, n) in zip(DFX, DFX, strict=True):
        lines += [line(f, m), line(g, n, pid=OTHER_PID)]
    res = assert_same(write_log(tmp_path / "super_kernel.log", lines))
    assert sorted(i.pid for i in res.incidents) == [OTHER_PID, PID]
    assert all(i.dfx is not None and len(i.dfx.nodes) == 3 for i in res.incidents)
    assert res.trace is not None and not res.trace.single_stream


def test_pid_zero_and_stamps_out_of_order(tmp_path: Path) -> None:
    """pid 0 (not cached yet, row 50) is no pid; the first/last stamps are the min and max, whatever the
    order the rows come in (a row's stamp is counted even when its prefix repeats)."""
    lines = [line(f, m, pid=0 if i % 5 == 0 else PID) for i, (f, m) in enumerate(BLOCK)]
    lines[20] = lines[20].replace(TS, "2026-06-10 14:03:20.001")
    lines[21] = lines[21].replace(TS, "2026-06-10 14:03:22.999")
    res = assert_same(write_log(tmp_path / "super_kernel.log", lines))
    assert len(res.incidents) >= 1


def test_handler_lines_are_the_messages_fields(tmp_path: Path) -> None:
    log = write_log(tmp_path / "super_kernel.log", [line(f, m) for f, m in BLOCK])
    msgs = list(log.handler_messages(SkMessage.from_filelog))
    assert [(m.func, m.text, m.src) for m in msgs] == [
        (p.func if p else None, t, s) for p, t, s in log.handler_lines()
    ]
    assert [m.text for m in msgs] == [m for _f, m in BLOCK]


def test_the_bench_like_repeat_of_tables(tmp_path: Path) -> None:
    """Two faults back to back (the second DfxInfo table starts the next one, row 44)."""
    lines = [line(f, m) for f, m in BLOCK] + [line(f, m) for f, m in DFX + TAIL]
    res = assert_same(write_log(tmp_path / "super_kernel.log", lines))
    assert len(res.incidents) == 2


# --------------------------------------------------------------------------------------------- hypothesis

Item = tuple[int, int, str, str]  # (pid, stamp index, func, message)
STAMPS = [TS, "2026-06-10 14:03:21.519", "2026-06-10 14:03:20.000"]


@st.composite
def mutated_blocks(draw: st.DrawFn) -> list[Item]:
    items: list[Item] = [(PID, 0, f, m) for f, m in BLOCK]
    if draw(st.booleans()):
        items += [(PID, 0, f, m) for f, m in DFX + TAIL]
    for _ in range(draw(st.integers(0, 8))):
        op = draw(st.sampled_from(["insert", "delete", "shuffle", "pid", "stamp", "zero"]))
        i = draw(st.integers(0, max(0, len(items) - 1)))
        if op == "insert":
            f, m = draw(st.sampled_from(EXTRA))
            items.insert(i, (draw(st.sampled_from([PID, PID, OTHER_PID])), 0, f, m))
        elif op == "delete" and items:
            del items[i]
        elif op == "shuffle":
            j = min(len(items), i + draw(st.integers(2, 12)))
            part = items[i:j]
            items[i:j] = draw(st.permutations(part))
        elif op in ("pid", "zero", "stamp") and items:
            p, s, f, m = items[i]
            if op == "pid":
                items[i] = (OTHER_PID, s, f, m)
            elif op == "zero":
                items[i] = (0, s, f, m)
            else:
                items[i] = (p, draw(st.integers(0, len(STAMPS) - 1)), f, m)
    return items


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutated_blocks())
def test_mutated_table_runs_parse_the_same_both_ways(tmp_path: Path, items: list[Item]) -> None:
    lines = [line(f, m, pid=p, ts=STAMPS[s], no=n) for n, (p, s, f, m) in enumerate(items, 1)]
    assert_same(write_log(tmp_path / "super_kernel.log", lines))
