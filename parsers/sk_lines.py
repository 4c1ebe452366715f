"""Message catalogue of the SK exception handler, all dialects D0–D5 (artifacts.md §1.4, triage.md §3.1.3).

Why separate from the state machine in :mod:`skdbg.parsers.sk_handler`: the catalogue is pure data —
one regex per printed format — and it is shared by the parser (classification) and by the tests that
check every format the scene builder renders is recognised. Matching is on the message text with
surrounding blanks stripped; the ``[SK][<Function>]`` tag is only a hint (triage §3.1.1: key on tag
*and* text; the text decides, the tag decides only whether an unknown line is a handler line).

Each entry also carries the dialect range ``(lo, hi)`` the format proves (``None`` = present in every
dialect). Ranges come from the upstream history of ``sk_dfx_exception_handler.cpp``: D1 (69de634f) and
two D4 revisions and D5 (hicann cff1d8e8) were read in full; D0, D2, D3 are from triage.md §3.1.3.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from skdbg import regexcode

HEX = r"0x([0-9a-fA-F]+)"
PTR = r"(0x[0-9a-fA-F]+|\(nil\))"
INT = r"(-?\d+)"
UINT = r"(\d+)"


class LineKind:
    """One printed format: its kind, its regex and the dialect range it proves.

    Why the regex is compiled on first use: a run reads only the kinds its lines lead to (about
    half of the catalogue for a whole incident), and compiling all 113 cost ~12 ms of every
    process's start. ``fullmatch`` is the compiled pattern's own method once it exists (the first
    call swaps it in), so classification pays nothing per call for the laziness."""

    __slots__ = ("kind", "pattern", "dialects", "fullmatch", "_regex")

    def __init__(self, kind: str, pattern: str, dialects: tuple[int, int] | None) -> None:
        self.kind = kind
        self.pattern = pattern
        self.dialects = dialects
        self._regex: re.Pattern[str] | None = None
        self.fullmatch: Callable[[str], re.Match[str] | None] = self._compile_and_fullmatch

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = regexcode.compile(self.pattern)
            self.fullmatch = self._regex.fullmatch
        return self._regex

    def _compile_and_fullmatch(self, text: str) -> re.Match[str] | None:
        return self.regex.fullmatch(text)

    def __repr__(self) -> str:
        return f"LineKind({self.kind!r}, {self.pattern!r}, {self.dialects!r})"


def _alt(*parts: str) -> str:
    """One capturing alternation; keeps the long B-side and lookup catalogues readable."""
    return "(" + "|".join(parts) + ")"


def _k(kind: str, pattern: str, dialects: tuple[int, int] | None = None) -> LineKind:
    return LineKind(kind, pattern, dialects)


OFFS = "(aicQueOffset|aivQueOffset|counterOffset|dfxOffset)"

# Lines without a ``[Core N]`` prefix, matched in this order (first full match wins).
PLAIN: tuple[LineKind, ...] = (
    # §1.4.1 callback A — entry check (A0–A6)
    _k("a0_null", r"Exception info is null"),
    _k("a1_no_handle", rf"Failed to get func handle from exception info, ret={INT}"),
    _k("a2_no_name", rf"Failed to get function name, ret={INT}"),
    _k("a3_not_sk", r"fault kernel_name '(.*)' does not start with 'sk_entry', skipping"),
    _k("a4_skip", r"Exception is not from sk_entry, skip handling\."),
    _k(
        "a5_anchor",
        r"Exception is from superkernel function '(.*)', op_trace=(true|false), proceeding with handling",
        (1, 5),
    ),
    _k("a5_anchor_d0", r"Exception is from superkernel function '(.*)', proceeding with handling", (0, 0)),
    _k("a6_callback", r"Aclgraph superkernel aicore exception occurred, callback function\."),
    # A7–A14 args extraction and header validation
    _k("a7_args_dev", rf"---skDeviceEntryArgsDev: {PTR}"),
    _k("a8_args_len", rf"---skDeviceEntryArgsPtrLen: {INT}"),
    _k("a9_get_args_failed", rf"aclrtGetArgsFromExceptionInfo failed, ret={INT}", (5, 5)),
    _k("a10_no_args", r"no args, callback return"),
    _k("a11_op_failed", rf"Operation failed: (.+) returned error code {INT}"),
    _k(
        "a11_direct",
        rf"(aclrtMallocHost for temp SkHeaderInfo|aclrtMemcpy for SkHeaderInfo) failed, ret={INT}",
        (5, 5),
    ),
    _k("a12_total", rf"---Total SkDeviceEntryArgs size: {UINT} bytes"),
    _k(
        "a13_total_exceeds",
        rf"totalSize\({UINT}\) exceeds skDeviceEntryArgsPtrLen\({UINT}\), invalid device address range",
        (5, 5),
    ),
    _k(
        "a14_ge",
        rf"{OFFS}\({UINT}\) >= totalSize\({UINT}\), invalid offset",
        (5, 5),
    ),
    _k(
        "a14_end",
        rf"{OFFS}\({UINT}\) \+ (.+) exceeds totalSize\({UINT}\), invalid offset",
        (5, 5),
    ),
    # A15 header
    _k("a15_header", r"=== SkHeaderInfo ==="),
    _k(
        "a15_field",
        rf"(aicQueOffset|aivQueOffset|counterOffset|wsOffset|dfxOffset|nodeCnt|totalSize): {UINT}",
    ),
    _k(
        "a15_model_id",
        rf"modelIdIndexAndSkScopeId: {HEX} \(modelIdIdx={UINT}, skScopeId={UINT}, modelId=(.*)\)",
        (5, 5),
    ),
    _k(
        "a15_model_ri",
        rf"modelRIIdAndSkScopeId: {HEX} \(modelRIIdx={UINT}, skScopeId={UINT}, originalModelRI={HEX}\)",
        (2, 4),
    ),
    _k(
        "model_id_oor",
        rf"\[sk\] GetModelIdByIndex: index={UINT} out of range \(size={UINT}\), "
        r"modelId not registered or header corrupted",
        (5, 5),
    ),
    # A16/A17 task queues
    _k("queue_header", rf"=== (AIC|AIV) TaskQue \(offset={UINT}\) ==="),
    _k("queue_cnt", rf"taskCnt: {UINT}"),
    _k("queue_task", rf"\[{UINT}\] index={UINT}, type=(\w+), numBlocks={UINT}, args={HEX}"),
    # A18 counters
    _k("counter_header", rf"=== SkCounterInfo \(offset={UINT}\) ==="),
    _k("counter", rf"\[core {UINT}\] index={UINT}, opState={UINT}", (3, 5)),
    _k("counter_legacy", rf"\[core {UINT}\] index={UINT}, launch={UINT}, exit={UINT}", (0, 2)),
    # A19–A22 DfxInfo
    _k("dfx_header", rf"=== SkDfxInfo \(offset={UINT}, nodeCnt={UINT}\) ==="),
    _k(
        "dfx_node",
        rf"\[node {UINT}\] binHdl={HEX}, funcHdlOri={HEX}, aicSize={HEX}, aivSize={HEX}, "
        rf"numBlocks={UINT}, cubeNum={UINT}, vecNum={UINT}",
        (2, 5),
    ),
    _k(
        "dfx_node_legacy",
        rf"\[node {UINT}\] binHdl={HEX}, funcHdlOri={HEX}, aicSize={HEX}, aivSize={HEX}",
        (0, 1),
    ),
    _k("origin_name", r"Origin function name: (.*)", (3, 5)),
    _k("origin_name_failed", rf"Failed to get origin function name for node\[{UINT}\], ret={INT}", (3, 5)),
    _k("node_not_func", rf"Node\[{UINT}\] is not a FUNC type", (3, 5)),
    _k("legacy_name_failed", rf"Failed to get function name for node\[{UINT}\], ret={INT}", (0, 2)),
    _k("entry_addr", rf"entry(Aic|Aiv)\[{UINT}\]={HEX}"),
    # A23–A25 register info and banner
    _k("a23_reg_failed", rf"Call rtGetExceptionRegInfo for error register information failed\. ret: {INT}"),
    _k("a24_reg", rf"Get error register information\. coreNum={UINT}"),
    _k("a25_banner", r"=== Sub-kernel running info on exception cores ==="),
    _k("error_node_idx", rf"errorNodeIdx_ = {INT}", (4, 5)),
    _k("cond_arch", rf"GetCondRegValue: arch=(\w+), condRegLowIdx={UINT}, condRegHighIdx={UINT}", (5, 5)),
    _k("core_exceeds", rf"coreId={UINT} exceeds aicoreNums={UINT}"),
    # §1.4.4 symbol lines (PrintSymbolByCoreId) and name lookups (GetOrLoadKernelSymbols)
    _k("sym_header", rf"========== coreId={UINT}, coreType=(\w+), startPC={HEX}, currentPC={HEX} =========="),
    _k("function_name", r"Function name: (.*)"),
    _k("no_function_name", r"No function name available"),
    _k(
        "lookup",
        _alt(
            rf"Using cached function name for opId={UINT}",
            rf"opId={UINT} exceeds nodeCnt={UINT}",
            rf"opId={UINT} is not a FUNC type node",
            rf"Loading function name for opId={UINT}, funcHdl=\S+",
            rf"aclrtGetFunctionName failed for opId={UINT}, funcHdl=\S+, ret={INT}",
            rf"Got function name for opId={UINT}: .*",
        ),
    ),
    # sk_common.cpp GetFuncSymbolInfo / BuildFuncSymbolTable (interleaved in §1.4.2)
    _k(
        "symtab",
        r"(?:GetFuncSymbolInfo: )?"
        + _alt(
            r"Building symbol table for (?:binHdl|binAddr)=\S+",
            r"total \d+ function symbols found",
            r"Found symbol: name=.*, addr=0x[0-9a-fA-F]+, size=0x[0-9a-fA-F]+, bind=\w+",
            r"Function symbol not found for addr=0x[0-9a-fA-F]+",
            r"Invalid ELF: .*",
            r"Failed to find valid symtab or strtab sections",
        ),
    ),
    # A27 model map
    _k("map_header_id", rf"=== modelId Index Map \(total={UINT}\) ===", (5, 5)),
    _k("map_entry_id", rf"\[{UINT}\] modelId=(.*)", (5, 5)),
    _k("map_header_ri", rf"=== modelRI Index Map \(total={UINT}\) ===", (2, 4)),
    _k("map_entry_ri", rf"\[{UINT}\] modelRI={HEX}", (2, 4)),
    # A28 all-core banner
    _k("a28_banner", rf"=== Sub-kernel running info on all {UINT} cores ==="),
    # §1.4.6 callback B
    _k("b_null_params", r"ExceptionDumpCallBack: invalid null params"),
    _k("b_not_sk", r"Not superkernel exception, skip dump"),
    _k("b_start", r"Start SuperKernelExceptionHandler::ProcessExceptionDump", (4, 5)),
    _k("b_size_small", r"ExceptionDumpCallBack: exceptionDumpSize too small", (4, 5)),
    _k("b_in_sk", r"Exception is in SuperKernel", (4, 5)),
    _k(
        "b_failed",
        _alt(
            r"Failed to extract SK entry args or task queue",
            r"Failed to extract SK entry args",
            r"Failed to extract SK task queue",
            r"Failed to get exception register info",
            r"PopulateDumpInfoFields: null pointer",
            r"FillExceptionDumpInfo: no exception info",
        ),
        (4, 5),
    ),
    _k(
        "b_note",
        _alt(
            r"No sub kernel matched, fill with SK entry fields",
            r"Successfully got function name: .*",
            r"Not match sub Kernel, exception occurred within Superkernel",
            rf"Failed to get SK entry func handle, ret={INT}",
            rf"Failed to get SK entry bin handle, ret={INT}",
            rf"Fill sub kernel info, errorNodeIdx={INT}",
            r"Match sub kernel success, exception occurred within sub kernel",
            r"queOffset or taskCnt is null, skip",
            r"task not found, skip",
            r"PopulateSubKernelFields success",
            rf"PopulateSkEntryFields failed, ret={INT}",
            rf"FillExceptionDumpInfo final errorNodeIdx={INT}",
        ),
        (4, 5),
    ),
    _k(
        "b_skip_dup",
        rf"Skip duplicate ExceptionDumpInfo by binHandle={HEX}, coreId={UINT}, coreType={UINT}",
        (4, 5),
    ),
    _k("b_array_empty", r"Adx::ExceptionDumpInfo array is empty, skip print", (4, 5)),
    _k("b_array_header", rf"======= SuperKernel Exception Dump Info Array \(count={UINT}\) ======", (4, 5)),
    _k("b_record", rf"------------------ Adx::ExceptionDumpInfo \[{UINT}\] ------------------", (4, 5)),
    _k(
        "b_field",
        _alt(
            "coreId",
            "coreType",
            "argSize",
            "argAddr",
            "bin handle",
            "kernelName",
            "kernelDisplayName",
            "extraTensorNum",
        )
        + r" +:(?: (.*))?",
        (4, 5),
    ),
    _k("b_tensor", rf">>> extraTensor\[{UINT}\] <<<", (4, 5)),
    _k(
        "b_tensor_field",
        _alt("type", "tensorSize", "format", "dataType", "tensorAddr", "addrType", "placement", "argsOffSet")[
            :-1
        ]
        + "|shape|originShape)"
        + r" +:(?: (.*))?",
        (4, 5),
    ),
    _k("b_fill_ok", rf"Adx::ExceptionDumpInfo fill success, coreNum={UINT}, validDump={UINT}", (4, 5)),
    # separators: only '=' characters; the length tells the block
    # (60 = per-core block, 52 = A25 banner, 50 = A28 banner, 62 = dump array)
    _k("separator", r"(=+)"),
)

# ``[Core N] <rest>`` lines: the rest is matched against this table.
CORE: tuple[LineKind, ...] = (
    _k("c_model_id", rf"ModelIdIdx={UINT}, ModelId=(.*), SkScopeId={UINT}", (5, 5)),
    _k("c_model_ri", rf"ModelRIIdx={UINT}, OriginalModelRI={HEX}, SkScopeId={UINT}", (2, 4)),
    _k("c_no_match", r"No sub kernel matched, aicore error occurred in sk entry\."),
    _k("c_core_type", r"CoreType: (\w+)"),
    _k("c_start_pc", rf"(StartPC|startPC): {HEX}"),
    _k("c_current_pc", rf"CurrentPC: {HEX}"),
    _k("c_found", rf"Found in node\[{UINT}\], entry\[{INT}\]", (1, 5)),
    _k("c_entry_addr", rf"Entry address: {HEX}", (1, 5)),
    _k("c_end_addr", rf"End address: {HEX}", (1, 5)),
    _k("c_func_size", rf"Function size: {HEX} \({UINT} bytes\)", (1, 5)),
    _k("c_blocks", rf"numBlocks={UINT}, cubeNum={UINT}, vecNum={UINT}", (2, 5)),
    _k("c_not_func", rf"Node\[{UINT}\] is not a FUNC type", (3, 5)),
    _k("c_origin_name", r"Origin function name: (.*)", (3, 5)),
    _k("c_legacy_name", r"Function name: (.*)", (1, 2)),
    _k("c_bin_buffer", rf"Failed to get bin buffer for node\[{UINT}\], rtRet={INT}", (3, 5)),
    _k(
        "c_computed",
        rf"Computed funcOffset={HEX} for node\[{UINT}\] entry\[{INT}\] \(binDevAddr={HEX}\)",
        (3, 5),
    ),
    _k(
        "c_offset_zero",
        rf"funcOffset is 0 for node\[{UINT}\] entry\[{INT}\], cannot resolve SK symbol name",
        (3, 5),
    ),
    _k("c_bound", rf"Bound SK symbol name: (.*) \(bind=(\w+), size={HEX}\)", (3, 5)),
    _k(
        "c_symbol_failed",
        rf"Failed to get SK symbol name for node\[{UINT}\] entry\[{INT}\], offset={HEX}",
        (3, 5),
    ),
    _k("c_dev_args", rf"node\[{UINT}\] devArgs: {HEX}", (2, 5)),
    # §1.4.4 counter trace
    _k("t_type", rf"Type=(\w+), opState={UINT}, opId={UINT}", (3, 5)),
    _k("t_type_legacy", rf"Type=(\w+), launch={UINT}, exit={UINT}, opId={UINT}", (0, 2)),
    _k("t_not_executed", r"No SK entry executed yet\."),
    _k("t_started", r"SK started but no sub-kernel executed yet, checking next operators"),
    _k("t_next_first", rf"> Next opId={UINT} \(first sub-kernel\):"),
    _k("t_no_next", rf"> No next operator \(opId={UINT}/{UINT}\)"),
    _k("t_running", rf"Currently running opId={UINT}"),
    _k("t_finished", rf"opId={UINT} finished, checking current and next operators"),
    _k("t_last", rf"> Last finished opId={UINT}:"),
    _k("t_next", rf"> Next opId={UINT}:"),
    _k("t_completed", r"SK entry operator execution completed\."),
    _k("t_unknown", rf"Unknown opState: {UINT}", (3, 5)),
    _k("t_unknown_legacy", rf"Unknown launch status: {UINT}", (0, 2)),
    # §1.4.5 COND
    _k(
        "k_unavailable",
        r"Failed to get COND register value, possible reason: driver package not upgraded",
        (4, 5),
    ),
    _k("k_value", rf"(AIC|AIV) COND register value: {HEX} \(opState={UINT}, opIndex={UINT}\)", (4, 5)),
    _k("k_origin", r"COND: No SK entry executed yet \(opState=ORIGIN\)\.", (4, 5)),
    _k("k_launched", rf"COND: SK entry launched, no sub-kernel executed yet\. Next opIndex={UINT}", (4, 5)),
    _k("k_next_name", r"COND: Next sub-kernel function name: (.*)", (4, 5)),
    _k("k_running", rf"COND: Currently running sub-kernel opIndex={UINT}", (4, 5)),
    _k("k_current_name", r"COND: Current sub-kernel function name: (.*)", (4, 5)),
    _k("k_finished", rf"COND: Sub-kernel opIndex={UINT} finished, about to run next\.", (4, 5)),
    _k("k_last_name", r"COND: Last finished sub-kernel function name: (.*)", (4, 5)),
    _k("k_completed", r"COND: SK entry execution completed\.", (4, 5)),
    _k("k_unknown", rf"COND: Unknown opState={UINT}, opIndex={UINT}", (4, 5)),
)

CORE_PREFIX = regexcode.compile(r"\[Core (\d+)\] (.*)")

# Function tags of every handler-side print site (sk_dfx_exception_handler.cpp, sk_event_recorder.cpp
# map printers, sk_common.cpp symbol lookup). An unknown text under one of these tags is kept as
# Unrecognized; an unknown text under another tag is a foreign SK line (counted, not an incident line).
HANDLER_FUNCS = frozenset(
    {
        "HandleException",
        "IsSuperKernelException",
        "ExtractSkEntryArgs",
        "ExtractSkDeviceEntryArgsPtr",
        "CheckError",
        "CopySkDeviceEntryArgsToHost",
        "ValidateSkHeaderOffsets",
        "ExtractSkHeaderInfo",
        "ExtractTaskQueue",
        "ExtractAndPrintSkInfo",
        "PrintSkHeaderInfo",
        "PrintTaskQueue",
        "PrintCounterInfo",
        "PrintDfxInfo",
        "GetExceptionRegInfo",
        "ParseAndPrintSubKernelSymbols",
        "PrintMatchedNodeBasicInfo",
        "PrintFuncSymbolInfo",
        "PrintNodeDevArgs",
        "IdentifyErrorNodeByPC",
        "PrintNoMatchInfo",
        "FindErrorNodeByPC",
        "PrintCoreSymbols",
        "PrintSymbolByCoreId",
        "GetOrLoadKernelSymbols",
        "GetCondRegValue",
        "ParseAndPrintCondInfo",
        "PrintCondSubKernelInfo",
        "PrintModelIdIndexMap",
        "PrintModelRIIndexMap",
        "GetModelIdByIndex",
        "GetModelRIByIndex",
        "PrintAllCoreSymbols",
        "ExceptionDumpInfoCallBack",
        "ProcessExceptionDump",
        "PrepareExceptionDump",
        "PopulateSkEntryFields",
        "PopulateTensorFields",
        "PopulateSubKernelFields",
        "PopulateDumpInfoFields",
        "FillExceptionDumpInfo",
        "FillUniqueExceptionDumpInfos",
        "GetSubKernelTaskArgs",
        "PrintExceptionDumpInfoArray",
        "PrintVector",
        "GetFuncSymbolInfo",
        "BuildFuncSymbolTable",
        "SuperKernelExceptionCallBackFunc",
        "operator()",
    }
)


class Classified(NamedTuple):
    """One recognised message: its kind, the ``[Core N]`` id (or None) and the regex groups.
    A named tuple: one is made per distinct handler line, and tuples are built in C."""

    kind: str
    core: int | None
    groups: tuple[str | None, ...]
    dialects: tuple[int, int] | None


#: ``Classified(*fields)`` made by the tuple constructor itself (the named tuple's ``__new__`` is a
#: Python function: a fifth of classify's time). ``Classified._make`` would be Python code too.
_classified = tuple.__new__

_KEY = 4  # characters of a pattern's literal start that index it


def _literal_prefix(pattern: str) -> str:
    """The text every full match of ``pattern`` starts with ("" when unknown: a top-level ``|``, a
    group or a class first). A character followed by ``?``, ``*`` or ``{`` is optional: it ends it."""
    if _has_top_level_bar(pattern):
        return ""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= len(pattern) or pattern[i + 1].isalnum():
                break
            lit, step = pattern[i + 1], 2
        elif ch in ".^$*+?{}[]|()":
            break
        else:
            lit, step = ch, 1
        if pattern[i + step : i + step + 1] in ("*", "?", "{"):
            break
        out.append(lit)
        i += step
    return "".join(out)


def _has_top_level_bar(pattern: str) -> bool:
    depth, i, in_class = 0, 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
        i += 1
    return False


def _first_chars(pattern: str) -> frozenset[str] | None:
    """The characters a full match of ``pattern`` can start with; None = any (or not worked out).
    Only the first item of the parsed pattern is looked at, and only when it cannot match empty."""
    import importlib

    try:
        sre: Any = importlib.import_module("re._parser")  # Python >= 3.11
    except ImportError:  # pragma: no cover - Python 3.10
        sre = importlib.import_module("sre_parse")
    try:
        return _firsts(list(sre.parse(pattern)))
    except Exception:  # noqa: BLE001 - a private parser's shape: "unknown" is always a safe answer
        return None


def _firsts(items: list[tuple[Any, Any]]) -> frozenset[str] | None:
    if not items:
        return None
    op, av = items[0]
    name = getattr(op, "name", "")
    if name == "LITERAL":
        return frozenset(chr(av))
    if name == "SUBPATTERN":
        _group, add, rm, sub = av
        return _firsts(list(sub)) if not add and not rm else None
    if name == "BRANCH":
        out: set[str] = set()
        for alt in av[1]:
            got = _firsts(list(alt))
            if got is None:
                return None
            out |= got
        return frozenset(out)
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        lo, _hi, sub = av
        return _firsts(list(sub)) if lo >= 1 else None
    if name == "IN":
        chars: set[str] = set()
        for iop, iav in av:
            iname = getattr(iop, "name", "")
            if iname == "LITERAL":
                chars.add(chr(iav))
            elif iname == "RANGE" and iav[1] - iav[0] < 128:
                chars.update(chr(c) for c in range(iav[0], iav[1] + 1))
            else:
                return None
        return frozenset(chars)
    return None


def _index(
    kinds: tuple[LineKind, ...],
) -> tuple[dict[str, tuple[LineKind, ...]], dict[str, tuple[LineKind, ...]]]:
    """Kinds by the first :data:`_KEY` characters of their literal start, each bucket merged with the
    kinds whose start is shorter or unknown and can begin with the key's first character, in catalogue
    order: a text is tried only against kinds it can match, in the same order as the whole catalogue
    (first full match still wins). Texts outside every bucket use the loose kinds by first character
    (key "" = the loose kinds whose first character is not worked out, tried for every text)."""
    prefixes = [_literal_prefix(lk.pattern) for lk in kinds]
    firsts = [
        frozenset(p[0]) if p else _first_chars(lk.pattern) for lk, p in zip(kinds, prefixes, strict=True)
    ]

    def loose_ok(p: str, f: frozenset[str] | None, ch: str) -> bool:
        return len(p) < _KEY and (f is None or ch in f)

    rows = list(zip(kinds, prefixes, firsts, strict=True))
    index: dict[str, tuple[LineKind, ...]] = {}
    for key in {p[:_KEY] for p in prefixes if len(p) >= _KEY}:
        index[key] = tuple(lk for lk, p, f in rows if loose_ok(p, f, key[0]) or p[:_KEY] == key)
    chars = {c for _lk, p, f in rows if len(p) < _KEY and f is not None for c in f}
    by_char = {c: tuple(lk for lk, p, f in rows if loose_ok(p, f, c)) for c in chars}
    by_char[""] = tuple(lk for lk, p, f in rows if len(p) < _KEY and f is None)
    return index, by_char


_CORE_INDEX, _CORE_LOOSE = _index(CORE)
_PLAIN_INDEX, _PLAIN_LOOSE = _index(PLAIN)


def classify(text: str) -> Classified | None:
    """Match one SK message text (tag already removed) against the catalogue; None = unknown.

    Not cached by text: the plog copy of a block is derived from the super_kernel.log parse
    (:mod:`skdbg.parsers.sk_copies`), and a cache kept two objects alive per handler line, which made
    the collector walk the whole heap more often than the lookups saved."""
    t = text.strip()
    if not t:
        return None
    m = CORE_PREFIX.fullmatch(t) if t.startswith("[Core ") else None
    if m is not None and len(m.group(1)) <= 4000:
        rest = m.group(2).strip()
        kinds = _CORE_INDEX.get(rest[:_KEY])
        if kinds is None:
            kinds = _CORE_LOOSE.get(rest[:1], _CORE_LOOSE[""])
        for lk in kinds:
            g = lk.fullmatch(rest)
            if g is not None:
                return (
                    None
                    if len(rest) > 4000 and _oversized(g.groups())
                    else _classified(Classified, (lk.kind, int(m.group(1)), g.groups(), lk.dialects))
                )
        return None
    kinds = _PLAIN_INDEX.get(t[:_KEY])
    if kinds is None:
        kinds = _PLAIN_LOOSE.get(t[:1], _PLAIN_LOOSE[""])
    for lk in kinds:
        g = lk.fullmatch(t)
        if g is not None:
            return (
                None
                if len(t) > 4000 and _oversized(g.groups())
                else _classified(Classified, (lk.kind, None, g.groups(), lk.dialects))
            )
    return None


def _oversized(groups: tuple[str | None, ...]) -> bool:
    """Decimal fields past the int-conversion limit are garbage, not values: keep the line as unknown.
    (Groups are parts of the matched text, so callers ask only for texts over 4000 characters.)"""
    return any(g is not None and len(g) > 4000 and g.lstrip("-").isdigit() for g in groups)


#: the table rows that make most of a handler block (task queue, DfxInfo): the run reader takes
#: their kind and groups from its run regex (:func:`run_line_regex`) instead of :func:`classify`.
#: Each is the first kind :func:`classify` tries for any text it matches (``tests/test_sk_run_kinds.py``
#: holds the two to each other).
RUN_KINDS = ("entry_addr", "queue_task", "dfx_node", "origin_name", "node_not_func")
#: the group of :func:`run_line_regex` that takes any other body
RUN_OTHER = "other"


class RunLineRegex(NamedTuple):
    """A run regex that classifies the :data:`RUN_KINDS` as it splits lines: ``regex`` and, per kind,
    what a reader needs to make :func:`classify`'s answer for a line the regex named it: the indices
    of its catalogue groups, whether there is more than one (``m.group`` of one index gives a string,
    not a tuple) and its dialect range. :data:`RUN_OTHER` has no entry."""

    regex: re.Pattern[str]
    groups: dict[str, tuple[tuple[int, ...], bool, tuple[int, int] | None]]


def run_line_regex(prefix: str) -> RunLineRegex:
    """``prefix`` (one capturing group: the line's prefix and the one blank before its body), then
    the body: a :data:`RUN_KINDS` branch (named after its kind) or :data:`RUN_OTHER`, then ``\\n``.

    Why it equals :func:`classify` of the body: a run line is printable ASCII and tabs, so
    ``strip()`` removes blanks and tabs only. A branch is its catalogue pattern after leading blanks
    (each pattern starts with a non-blank, so ``[ \\t]*`` takes exactly them) and ends with a
    non-blank (a body with trailing blanks is left to ``classify``): it matches exactly when the
    pattern fully matches the stripped body, with the same groups. The branch's name is the
    outermost group, so ``lastgroup`` names the kind."""
    by_kind = {lk.kind: lk for lk in PLAIN}
    branches = []
    for kind in RUN_KINDS:
        pattern = by_kind[kind].pattern
        assert "(?P" not in pattern and not re.search(r"\\[1-9]", pattern)  # numbered groups only
        branches.append(rf"(?P<{kind}>[ \t]*(?:{pattern})(?<![ \t]))")
    regex = regexcode.compile(rf"{prefix}(?:{'|'.join(branches)}|(?P<{RUN_OTHER}>[^\n]*))\n")
    # a kind's groups are those between its branch's group and the next branch's (counted from the
    # one regex: compiling a catalogue pattern alone only to count them would cost its compile)
    ends = [regex.groupindex[kind] for kind in (*RUN_KINDS, RUN_OTHER)]
    groups = {}
    for i, kind in enumerate(RUN_KINDS):
        idx = tuple(range(ends[i] + 1, ends[i + 1]))
        groups[kind] = (idx, len(idx) > 1, by_kind[kind].dialects)
    return RunLineRegex(regex, groups)
