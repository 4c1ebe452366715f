"""Typed records for what the CANN runtime, GE and adump print around an AI Core fault (artifacts.md §1.5).

Why a separate classifier: the SK exception handler (``[SK][…]`` lines) only exists for AOT SK entries;
for every other fault family — JIT ``te_superkernel_*``, constant-codegen ``sk_constant_entry_*``, a
plain operator — these runtime lines are the only evidence, and even for AOT SK they carry the
device-side facts (core id, ``pc start``/``current``, ``para base``) the handler's per-core blocks are
checked against (triage.md §3.1.2, §3.2). Wording changed across CANN versions, so every variant the
spec, the runtime source and the official analyser (MSA) show is matched, and fields are optional where
a variant omits them. Nothing here guesses: a line that names a marker but does not fit any variant is
returned as ``None`` so the caller keeps it as :class:`~skdbg.parsers.common.Unrecognized`.

The same message bodies also reach the user through the error manager (``EZ9999: Inner Error!`` +
``TraceBack (most recent call last):`` + ``[FUNC:…][FILE:…][LINE:…]`` suffixes, §1.5 item 9, row 11).
Those are not plog lines; :func:`parse_error_manager_line` handles them at the file level and classifies
the body with the same functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from skdbg import regexcode
from skdbg.parsers.common import Source, lazy_regex, oversized_number
from skdbg.parsers.frames import rows_frame
from skdbg.parsers.plog_line import PlogLine

if TYPE_CHECKING:
    import pandas as pd

FaultKind = Literal["sk", "ge_sk", "sk_constant", "non_sk"]

# §1.5 "Error codes" — the ACL/runtime codes seen in `<api>: ErrCode=<n>, desc=[…]` lines (row 19).
ERROR_CODES: Mapping[int, str] = {
    507015: "ACL_ERROR_RT_AICORE_EXCEPTION: AI Core exception",
    507035: "vector core exception (AI Vector core fault)",
    507014: "AICORE_TIMEOUT: AI Core task timeout",
    507018: "AICPU_EXCEPTION: generic AI CPU exception (may mask an earlier, more specific fault)",
    507000: "runtime internal error",
    507899: "driver internal error",
    107022: "task abort",
}

# §1.5 — error-manager codes printed to stderr / RecentErrMsg and in `report error … module_name=` lines.
ERROR_MANAGER_CODES: Mapping[str, str] = {
    "EZ9999": "inner error (generic wrapper; the nested runtime lines carry the cause)",
    "EE9999": "inner error reported by the runtime/system",
    "EE8888": "inner error: failure reason of an API call (FuncErrorReason)",
}

KERNEL_FAULT_ENDINGS = ("program is NULL!", "ctx is NULL!", "module is nullptr!")

_HEX_OR_DEC = r"(?:0[xX][0-9a-fA-F]+|-?\d+)"
_HEX_NO_PREFIX = r"(?:0[xX])?[0-9a-fA-F]+"

# §1.5 item 4 — kernel identification. Variants: old `Aicore kernel execute failed`, hybrid
# `[DFX_INFO]Aicore kernel execute failed`, new `[DFX_INFO]AI Core kernel execution failed`, and the FFTS+
# wording `fftsplus task execute failed, device_id=…` (MSA test data). Endings from the runtime's
# PrintErrorInfoForDavinciTask: `program id=…, hash=….` or
# `program is NULL!`/`ctx is NULL!`/`module is nullptr!`.
#: ``(?<!\s)`` before a ``\s*`` that may start inside a run of blanks (the search's start, a lazy
#: field's end): from a blank after a blank, the run's rest is what the try one character earlier,
#: made first, already took and let go, so the match is the same and a long run of blanks costs one
#: pass, not one pass per blank (a line of thousands of blanks took seconds, a MiB line hours);
#: tests/test_runtime_regex_linear.py holds each pattern to its plain form
KERNEL_FAULT_RE = regexcode.compile(
    r"(?:(?P<dfx>\[DFX_INFO\])\s*|(?<!\s)\s*)(?P<phrase>Aicore kernel execute failed|"
    r"AI Core kernel execution failed|"
    r"fftsplus task execute failed),\s*device_id=(?P<device_id>\d+),\s*stream_id=(?P<stream_id>-?\d+),\s*"
    r""
    r"report_stream_id=(?P<report_stream_id>-?\d+),\s*task_id=(?P<task_id>\d+),\s*flip_num=(?P<flip_num>\d+),\s*"
    r"fault kernel_name=(?P<kernel>.*?)(?:,\s*fault kernel info ext=(?P<ext>.*?))?"
    r"(?:,\s*(?P<ending>program is NULL!|ctx is NULL!|module is nullptr!)"
    r"|,?(?<!\s)\s*program id=(?P<program_id>\d+)(?:,\s*hash=(?P<hash>[^,]*?))?\.?)(?<!\s)\s*$"
)
# Lenient fallback for a kernel-identification line whose layout is not one of the above (MSA's own regex
# only relies on these keys).
_KV_INT_RE = {
    key: lazy_regex(rf"(?<![A-Za-z_]){key}\s*=\s*(-?\d+)")
    for key in ("device_id", "stream_id", "report_stream_id", "task_id", "flip_num")
}
_LENIENT_KERNEL_RE = lazy_regex(r"fault kernel_name=(?P<kernel>[^,]*)")
_LENIENT_EXT_RE = lazy_regex(r"fault kernel info ext=(?P<ext>[^,]*)")
_LENIENT_HASH_RE = lazy_regex(r"hash=(?P<hash>[^,]*?)\.?\s*$")
_LENIENT_PROGRAM_RE = lazy_regex(r"program id=(?P<pid>\d+)")

# §1.5 item 1 — device core report. Two wordings:
# `The error from device(chipId:…, dieId:…), serial number is N,
# there is an <kind>, core id is C, error code = X, dump info: …` (ProcessStarsCoreErrorInfo and the A5-class
# ProcessDavidStarsCoreErrorInfo) and the newer
# `An error occurs on the device(chipId:…), the serial number is N,
# the error is <kind>, core id is …` (CANN error-code docs, EZ2001/EZ9999 examples).
CORE_REPORT_RE = regexcode.compile(
    r"(?:The error from device|An error occurs on the device)\s*\(\s*chip[Ii]d\s*[:=]\s*(?P<chip>\d+)\s*,\s*"
    r"die[Ii]d\s*[:=]\s*(?P<die>\d+)\s*\)\s*,\s*(?:the\s+)?serial number is\s+(?P<serial>\d+)\s*,\s*"
    r"(?:there is an?\s+(?P<kind1>.+?)|the error is\s+(?P<kind2>.+?))\s*,\s*core id is\s+(?P<core>\d+)\s*,\s*"
    r"error code\s*=\s*(?P<code>[^,]+?)\s*,\s*dump info:\s*(?P<dump>.*)$"
)
# Split the dump-info list on ", <key>:" only, so values holding commas (`su error info: 0x…,0x…`,
# `cube error info: 0,0`) stay whole and a key missing its colon (`vec error infor 0x…`) joins the
# previous item.
_DUMP_SPLIT_RE = regexcode.compile(r",\s*(?=[A-Za-z][A-Za-z0-9_ ]*?\s*:)")
_FIRST_NUM_RE = regexcode.compile(r"0[xX][0-9a-fA-F]+|\d+")

# §1.5 item 1 follow-up: `The extend info: errcode:(a, b, c) errorStr: … subErrType:…` (also `errorcode:`).
EXTEND_RE = regexcode.compile(
    r"The extend info:\s*(?:errcode|errorcode)\s*:\s*\((?P<codes>[^)]*)\)\s*(?:errorStr:\s*(?P<rest>.*))?$"
)
_EXTEND_KEYS = r"(?:\w+ info|fixp_error\d*|fsmId|mId|tslot|thread\w*|ctxid|blk|sublk|subErrType)"
_EXTEND_STR_END_RE = regexcode.compile(rf"(?:,\s*|(?<!\s)\s+)(?={_EXTEND_KEYS}\s*:)")
#: a ``key: number`` field, else a run of digits or a word, skipped whole (findall gives ``("", "")``
#: for them). Why the skips: a key ends where its word does (a colon or a blank must follow), so when
#: the field fails at a word's first letter it fails at every later one, and findall's retry at each
#: of them made a long word cost its length squared; after a run of digits the next letter is tried,
#: as findall did
_EXTEND_FIELD_RE = regexcode.compile(
    r"([A-Za-z_]\w*(?: info)?)\s*:\s*(0[xX][0-9a-fA-F]+|-?\d+)|[0-9]+|[A-Za-z_]\w*"
)

# §1.5 item 2.
KERNEL_TASK_RE = regexcode.compile(
    r"(?P<phrase>Kernel task happen error|An error occurred in the kernel task),\s*"
    r"(?:(?P<aicpu>receive aicpu failed msg,\s*aicpu error code)|ret[Cc]ode)\s*=\s*(?P<code>"
    + _HEX_OR_DEC
    + r")"
    r"\s*,\s*\[(?P<reason>[^\]]*)\]"
)
FFTS_RE = lazy_regex(
    r"fftsplus task execute "
    r"failed,\s*dev_id=(?P<dev>\d+),\s*stream_id=(?P<stream>\d+),\s*task_id=(?P<task>\d+)"
    r"(?:,\s*context_id=(?P<ctx>\d+))?(?:,\s*thread_id=(?P<thread>\d+))?"
    r"(?:,\s*err_type=(?P<et>\d+)(?:\[(?P<etd>[^\]]*)\])?)?(?:,\s*pcStart=(?P<pc>0[xX][0-9a-fA-F]+))?"
    r"(?:,\s*kernelName\s*[:=]\s*(?P<kn>[^,\s]+?))?\.?\s*$"
)
# §1.5 item 3; real logs also show `stream_id = 2,  retcode=0x10f` spacing and lower-case variants.
STREAM_SYNC_RE = regexcode.compile(
    r"Stream [Ss]ynchronize failed,\s*stream_id\s*=\s*(?P<stream>\d+)"
    r"(?:,\s*ret[Cc]ode\s*=\s*(?P<code>" + _HEX_OR_DEC + r"))?(?:,\s*\[(?P<reason>[^\]]*)\])?"
)
# §1.5 item 6.
#: the API name is tried at a word's start only, past any digits (or other non-letter word characters)
#: it begins with: a name ends where its word does, so a try at a later letter of the word fails where
#: the first failed, and one try per letter made a long word cost its length squared. The match may
#: then start before the name (at those digits); only its groups are read
ERRCODE_RE = regexcode.compile(
    r"(?:(?<!\w)[^\W_A-Za-z]*(?P<api>[A-Za-z_]\w*)\s*:\s*(?:\[[A-Z_]+\])*)?ErrCode=(?P<code>\d+),\s*"
    r"desc=\[(?P<desc>[^\]]*)\]"
    r"(?:,\s*InnerCode=(?P<inner>" + _HEX_OR_DEC + r"))?"
)
# §1.5 item 7 (GE graph mode) and triage §3.1.4.
ERROR_TRACKING_RE = lazy_regex(
    r"origin_op_name \[(?P<origin>[^\]]*)\],\s*op_name \[(?P<op>[^\]]*)\]"
    r"(?:,\s*task_id (?P<task>\d+))?(?:,\s*stream_id (?P<stream>\d+))?"
)
_ERRNO_RE = lazy_regex(r"ErrorNo:\s*(?P<no>-?\d+)(?:\((?P<desc>[^)]*)\))?")
# §1.5 item 8 (adump / IDEDD). PCs, offsets and sizes print as hex without 0x.
DUMP_EXCEPTION_RE = lazy_regex(
    r"\[Dump\]\[Exception\]\s*coreId=(?P<core>\d+),\s*coreType=(?P<ctype>\d+),\s*"
    r""
    rf"startPC=(?P<start>{_HEX_NO_PREFIX}),\s*currentPC=(?P<cur>{_HEX_NO_PREFIX}),\s*offset=(?P<off>{_HEX_NO_PREFIX}),\s*"
    rf"symbol name=(?P<sym>.*?),\s*symbol size=(?P<size>{_HEX_NO_PREFIX}),\s*"
    rf"symbol offset=(?P<soff>{_HEX_NO_PREFIX})\s*\.?\s*$"
)
# MSA (oam-tools collection.py `get_sk_kernel_name`): `kernelName=([^\n]*?)\.\s*$` — the trailing dot is not
# part of the name.
DUMP_CALLBACK_RE = lazy_regex(r"Begin to dump callback exception.*?kernelName=(?P<name>.*?)\.?\s*$")
DUMP_TO_FILE_RE = lazy_regex(r"dump exception to file[\s,:]*(?P<path>\S+)?")
_DATA_DUMP_RE = lazy_regex(r"extra-info/data-dump/(?P<dev>\d+)/(?P<name>[\w.]+)")
REPORT_MODULE_RE = regexcode.compile(r"report error module_type=(?P<type>\d+),\s*module_name=(?P<name>\w+)")

# §1.5 item 9 — error-manager text.
EM_CODE_RE = lazy_regex(
    r"^(?P<code>E[A-Z0-9]\d{4})(?:\[PID:\s*(?P<pid>\d+)\][^()]*\((?P=code)\))?\s*:\s*(?P<body>.*)$"
)
EM_SUFFIX_RE = lazy_regex(r"\[FUNC:(?P<func>[^\]]*)\]\[FILE:(?P<file>[^\]]*)\]\[LINE:(?P<line>\d+)\]\s*$")
TRACEBACK_HEADER = "TraceBack (most recent call last):"


def fault_kind(kernel_name: str | None) -> FaultKind:
    """SK family of a faulting kernel name (triage.md §3.2, §3.1.4).

    ``sk`` = AOT entry (``sk_entry*``), ``sk_constant`` = constant-codegen entry (artifacts §0.1, no handler
    output), ``ge_sk`` = JIT/GE ``te_superkernel_*`` (route X6), ``non_sk`` = anything else (route X3).
    """
    if not kernel_name:
        return "non_sk"
    if kernel_name.startswith("sk_entry"):
        return "sk"
    if kernel_name.startswith("sk_constant_entry_"):
        return "sk_constant"
    if kernel_name.startswith("te_superkernel_"):
        return "ge_sk"
    return "non_sk"


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    t = text.strip()
    try:
        return int(t, 16) if t.lower().startswith("0x") else int(t, 10)
    except ValueError:
        return None


def _hex(text: str | None) -> int | None:
    """adump prints hex without ``0x``; accept both."""
    if text is None:
        return None
    t = text.strip()
    if t.lower().startswith("0x"):
        t = t[2:]
    try:
        return int(t, 16)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class KernelFaultLine:
    """``… kernel execute failed, device_id=…, fault kernel_name=…`` (§1.5 item 4, rows 12–15).

    ``kernel_name`` follows MSA's rule (row 15): the ``fault kernel info ext`` value when it is not
    ``none``, else ``fault kernel_name``. ``kind`` is decided on the raw name first (the SK entry name is
    what the SK handler keys on) and falls back to the effective name.
    """

    src: Source
    wording: str  # "old" | "hybrid" | "new" | "ffts" | "lenient"
    reporter: str | None  # PlogLine.func, e.g. PrintErrorInfoForDavinciTask / GetError
    device_id: int | None
    stream_id: int | None
    report_stream_id: int | None
    task_id: int | None
    flip_num: int | None
    kernel_name_raw: str
    info_ext: str | None
    program_id: int | None
    hash: str | None  # decimal text as printed; None when absent or "(no result)"
    ending: str | None  # "program is NULL!" | "ctx is NULL!" | "module is nullptr!" (row 14)
    kernel_name: str
    kind: FaultKind


@dataclass(frozen=True, slots=True)
class CoreErrorReport:
    """One faulting core as reported by the device (§1.5 item 1, rows 16–17)."""

    src: Source
    wording: str  # "there_is" (The error from device…) | "the_error_is" (An error occurs on the device…)
    chip_id: int
    die_id: int
    serial: int
    error_kind: str  # e.g. "aicore error exception", "aivec error exception", "aivec error"
    core_type: str | None  # "AIC" | "AIV" derived from error_kind
    core_id: int
    error_code_text: str
    error_code: int | None
    pc_start: int | None
    pc_current: int | None
    para_base: int | None
    a5_format: bool  # ProcessDavidStarsCoreErrorInfo layout (has `sc error info`)
    dump_info: tuple[tuple[str, str], ...]  # every `key: value` of the dump list, in order


@dataclass(frozen=True, slots=True)
class CoreErrorExtend:
    """``The extend info: errcode:(…) errorStr: … subErrType:…`` following a core report (§1.5 item 1)."""

    src: Source
    errcodes: tuple[str, ...]
    error_str: str | None
    sub_err_type: int | None
    fields: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class KernelTaskError:
    """``Kernel task happen error, retCode=…, [<reason>].`` / ``An error occurred in the kernel task, …``.

    §1.5 item 2.
    """

    src: Source
    wording: str  # "old" | "new" | "aicpu"
    ret_code: int
    reason: str


@dataclass(frozen=True, slots=True)
class FftsPlusFault:
    """``fftsplus task execute failed, dev_id=…, …, pcStart=0x…, kernelName:…`` (§1.5 item 2, row 18)."""

    src: Source
    device_id: int
    stream_id: int
    task_id: int
    context_id: int | None
    thread_id: int | None
    err_type: int | None
    err_desc: str | None
    pc_start: int | None
    kernel_name: str | None
    kind: FaultKind


@dataclass(frozen=True, slots=True)
class StreamSyncFailed:
    """``Stream Synchronize failed, stream_id=…, retCode=0x…, [<reason>].`` (§1.5 item 3)."""

    src: Source
    stream_id: int
    ret_code: int | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class ApiErrCode:
    """``<api>: ErrCode=<n>, desc=[…], InnerCode=0x…`` with the code-table meaning (§1.5 item 6, row 19)."""

    src: Source
    api: str | None
    err_code: int
    desc: str
    inner_code: int | None
    meaning: str | None


@dataclass(frozen=True, slots=True)
class SkScopeName:
    """JIT SK op name ``sk_<scope>_start_<first>_end_<last>`` (triage.md §3.1.4, row 22)."""

    scope: str
    first: str
    last: str


@dataclass(frozen=True, slots=True)
class ErrorTracking:
    """GE ``ErrorTrackingCallback … origin_op_name [<n>], op_name [<n>], task_id N, stream_id N.``

    §1.5 item 7.
    """

    src: Source
    error_no: str | None
    error_desc: str | None
    origin_op_name: str
    op_name: str
    task_id: int | None
    stream_id: int | None
    sk_name: SkScopeName | None  # parsed from origin_op_name (else op_name) when it has the JIT SK shape


@dataclass(frozen=True, slots=True)
class DumpException:
    """adump ``[Dump][Exception] coreId=…, startPC=…, …, symbol offset=…`` (§1.5 item 8, row 20).

    ``offset_consistent``: ``offset == currentPC − startPC``; ``symbol_contains_offset``:
    ``symbol offset ≤ offset < symbol offset + symbol size`` — both hold in TA's JIT example, so a
    failure flags a log that does not describe the PC it claims to.
    """

    src: Source
    core_id: int
    core_type: int
    start_pc: int
    current_pc: int
    offset: int
    symbol_name: str
    symbol_size: int
    symbol_offset: int
    offset_consistent: bool
    symbol_contains_offset: bool


@dataclass(frozen=True, slots=True)
class DumpExceptionNote:
    """Any other ``[Dump][Exception]`` line (e.g. args-dump progress) — kept as a marker, text verbatim."""

    src: Source
    text: str


@dataclass(frozen=True, slots=True)
class DumpCallbackBegin:
    """``Begin to dump callback exception … kernelName=<name>.`` — MSA's SK-scenario marker (row 21)."""

    src: Source
    kernel_name: str
    kind: FaultKind


@dataclass(frozen=True, slots=True)
class DumpToFile:
    """``dump exception to file …`` (§1.5 item 8).

    Device id and file name come from ``extra-info/data-dump/<dev>/<f>``.
    """

    src: Source
    path: str | None
    device_id: int | None
    file_name: str | None


@dataclass(frozen=True, slots=True)
class ErrorReportModule:
    """``report error module_type=5, module_name=EZ9999`` — precedes core reports (§1.5 item 1)."""

    src: Source
    module_type: int
    module_name: str
    meaning: str | None


RuntimeRecord = (
    KernelFaultLine
    | CoreErrorReport
    | CoreErrorExtend
    | KernelTaskError
    | FftsPlusFault
    | StreamSyncFailed
    | ApiErrCode
    | ErrorTracking
    | DumpException
    | DumpExceptionNote
    | DumpCallbackBegin
    | DumpToFile
    | ErrorReportModule
)


@dataclass(frozen=True, slots=True)
class ErrorManagerLine:
    """One line of the user-facing error-manager text (§1.5 item 9, row 11).

    ``record`` is the runtime record the body classifies as (fields still extracted); ``traceback`` marks
    the ``TraceBack (most recent call last):`` header; ``func``/``file``/``line_no`` come from the
    ``[FUNC:…][FILE:…][LINE:…]`` suffix.
    """

    src: Source
    code: str | None
    pid: int | None
    body: str
    func: str | None
    file: str | None
    line_no: int | None
    traceback: bool
    record: RuntimeRecord | None


def split_sk_scope_name(name: str) -> SkScopeName | None:
    """``sk_<scope>_start_<first>_end_<last>`` → parts, or None when the name has another shape.

    The scope ends at the first ``_start_``; the last op starts after the *rightmost* ``_end_`` (op names
    such as ``QuantBatchMatmulV3_2`` keep their own underscores).
    """
    if not name.startswith("sk_"):
        return None
    head, sep, last = name.rpartition("_end_")
    if not sep or not last:
        return None
    scope, sep2, first = head[3:].partition("_start_")
    if not sep2 or not scope or not first:
        return None
    return SkScopeName(scope=scope, first=first, last=last)


def _kernel_fault(text: str, src: Source, func: str | None) -> KernelFaultLine | None:
    m = KERNEL_FAULT_RE.search(text)
    if m is not None:
        phrase = m.group("phrase")
        if phrase.startswith("fftsplus"):
            wording = "ffts"
        elif phrase.startswith("AI Core"):
            wording = "new"
        else:
            wording = "hybrid" if m.group("dfx") else "old"
        raw = m.group("kernel").strip()
        ext = m.group("ext")
        ext = ext.strip() if ext is not None else None
        hash_text = m.group("hash")
        hash_value = (
            None if hash_text is None or hash_text.strip() in ("", "(no result)") else hash_text.strip()
        )
        return _make_kernel_fault(
            src,
            wording,
            func,
            [_int(m.group(k)) for k in ("device_id", "stream_id", "report_stream_id", "task_id", "flip_num")],
            raw,
            ext,
            _int(m.group("program_id")),
            hash_value,
            m.group("ending"),
        )
    km = _LENIENT_KERNEL_RE().search(text)
    if km is None:
        return None
    ints: list[int | None] = []
    for key in ("device_id", "stream_id", "report_stream_id", "task_id", "flip_num"):
        vm = _KV_INT_RE[key]().search(text)
        ints.append(int(vm.group(1)) if vm else None)
    em = _LENIENT_EXT_RE().search(text)
    hm = _LENIENT_HASH_RE().search(text)
    pm = _LENIENT_PROGRAM_RE().search(text)
    ending = next((e for e in KERNEL_FAULT_ENDINGS if text.rstrip().endswith(e)), None)
    return _make_kernel_fault(
        src,
        "lenient",
        func,
        ints,
        km.group("kernel").strip(),
        em.group("ext").strip() if em else None,
        int(pm.group("pid")) if pm else None,
        hm.group("hash").strip() if hm and hm.group("hash").strip() not in ("", "(no result)") else None,
        ending,
    )


def _make_kernel_fault(
    src: Source,
    wording: str,
    func: str | None,
    ints: list[int | None],
    raw: str,
    ext: str | None,
    program_id: int | None,
    hash_value: str | None,
    ending: str | None,
) -> KernelFaultLine:
    # Row 15 (MSA aicore_error_parser: ext wins when it is not "none").
    effective = ext if ext and ext != "none" else raw
    kind = fault_kind(raw)
    if kind == "non_sk":
        kind = fault_kind(effective)
    return KernelFaultLine(
        src=src,
        wording=wording,
        reporter=func,
        device_id=ints[0],
        stream_id=ints[1],
        report_stream_id=ints[2],
        task_id=ints[3],
        flip_num=ints[4],
        kernel_name_raw=raw,
        info_ext=ext,
        program_id=program_id,
        hash=hash_value,
        ending=ending,
        kernel_name=effective,
        kind=kind,
    )


def _core_type(kind_text: str) -> str | None:
    k = kind_text.lower()
    if "aivec" in k or "vector" in k or "aiv " in k:
        return "AIV"
    if "aicore" in k or "cube" in k or "aic " in k:
        return "AIC"
    return None


def _core_report(text: str, src: Source) -> CoreErrorReport | None:
    m = CORE_REPORT_RE.search(text)
    if m is None:
        return None
    dump = m.group("dump").strip()
    if dump.endswith("."):
        dump = dump[:-1]
    pairs: list[tuple[str, str]] = []
    for item in _DUMP_SPLIT_RE.split(dump):
        key, sep, value = item.partition(":")
        if sep:
            pairs.append((key.strip(), value.strip()))
        elif pairs:  # defensive: text without a key joins the previous value
            pairs[-1] = (pairs[-1][0], pairs[-1][1] + ", " + item.strip())
        else:
            pairs.append(("", item.strip()))
    values = dict(pairs)

    def first_num(key: str) -> int | None:
        v = values.get(key)
        if v is None:
            return None
        nm = _FIRST_NUM_RE.search(v)
        return _int(nm.group(0)) if nm else None

    kind_text = (m.group("kind1") or m.group("kind2") or "").strip()
    code_text = m.group("code").strip()
    return CoreErrorReport(
        src=src,
        wording="there_is" if m.group("kind1") else "the_error_is",
        chip_id=int(m.group("chip")),
        die_id=int(m.group("die")),
        serial=int(m.group("serial")),
        error_kind=kind_text,
        core_type=_core_type(kind_text),
        core_id=int(m.group("core")),
        error_code_text=code_text,
        error_code=_int(code_text),
        pc_start=first_num("pc start"),
        pc_current=first_num("current"),
        para_base=first_num("para base"),
        a5_format="sc error info" in values,
        dump_info=tuple(pairs),
    )


def _extend(text: str, src: Source) -> CoreErrorExtend | None:
    m = EXTEND_RE.search(text)
    if m is None:
        return None
    codes = tuple(c.strip() for c in m.group("codes").split(",") if c.strip())
    rest = m.group("rest")
    error_str: str | None = None
    tail = ""
    if rest is not None:
        cut = _EXTEND_STR_END_RE.search(rest)
        error_str = (rest[: cut.start()] if cut else rest).strip().rstrip(",").strip() or None
        tail = rest[cut.start() :] if cut else ""
    pairs = tuple((k, v) for k, v in _EXTEND_FIELD_RE.findall(tail) if k)
    sub = next((v for k, v in pairs if k == "subErrType"), None)
    return CoreErrorExtend(src=src, errcodes=codes, error_str=error_str, sub_err_type=_int(sub), fields=pairs)


#: every substring :func:`classify_message` tests before trying a pattern: a text holding none of
#: them is none of the §1.5 lines (each branch is guarded by one of them). Kept beside the function;
#: ``tests/test_plog_thread_fast.py`` checks that the guards and this tuple name the same strings.
CLASSIFY_NEEDLES: tuple[str, ...] = (
    "fault kernel_name",
    "there is a",
    "the error is",
    "The extend info",
    "fftsplus task execute failed",
    "Kernel task happen error",
    "An error occurred in the kernel task",
    "ynchronize failed",
    "ErrCode=",
    "origin_op_name",
    "[Dump][Exception]",
    "Begin to dump callback exception",
    "dump exception to file",
    "report error module_type",
)


def may_classify(text: str) -> bool:
    """False when :func:`classify_message` (and so :func:`classify_runtime`) returns None for ``text``
    and for any line of it (no needle holds a ``\n``, so texts joined by ``\n`` can be asked at once).

    Why: a plog scan keeps tens of thousands of records, almost none of them runtime faults; one
    C-level search per batch spares a classifier call per record. ``[DFX_INFO]`` put in front of a
    text (:func:`classify_runtime`) cannot complete a needle: none starts with a suffix of it."""
    return any(map(text.__contains__, CLASSIFY_NEEDLES))


def classify_message(text: str, src: Source, *, func: str | None = None) -> RuntimeRecord | None:
    """Classify one runtime/GE/adump message body; None when it is none of the §1.5 lines.

    Each branch is guarded by a plain substring test so the common no-match case costs no regex.
    """
    if "fault kernel_name" in text:
        return _kernel_fault(text, src, func)
    if "there is a" in text or "the error is" in text:
        core = _core_report(text, src)
        if core is not None:
            return core
    if "The extend info" in text:
        return _extend(text, src)
    if "fftsplus task execute failed" in text:
        fm = FFTS_RE().search(text)
        if fm is not None:
            kn = fm.group("kn")
            return FftsPlusFault(
                src=src,
                device_id=int(fm.group("dev")),
                stream_id=int(fm.group("stream")),
                task_id=int(fm.group("task")),
                context_id=_int(fm.group("ctx")),
                thread_id=_int(fm.group("thread")),
                err_type=_int(fm.group("et")),
                err_desc=fm.group("etd"),
                pc_start=_int(fm.group("pc")),
                kernel_name=kn,
                kind=fault_kind(kn),
            )
        return None
    if "Kernel task happen error" in text or "An error occurred in the kernel task" in text:
        tm = KERNEL_TASK_RE.search(text)
        if tm is None:
            return None
        code = _int(tm.group("code"))
        if code is None:
            return None
        wording = (
            "aicpu" if tm.group("aicpu") else ("old" if tm.group("phrase").startswith("Kernel") else "new")
        )
        return KernelTaskError(src=src, wording=wording, ret_code=code, reason=tm.group("reason"))
    if "ynchronize failed" in text:
        sm = STREAM_SYNC_RE.search(text)
        if sm is None:
            return None
        return StreamSyncFailed(
            src=src,
            stream_id=int(sm.group("stream")),
            ret_code=_int(sm.group("code")),
            reason=sm.group("reason"),
        )
    if "ErrCode=" in text:
        em = ERRCODE_RE.search(text)
        if em is None:
            return None
        code = int(em.group("code"))
        api = em.group("api") or func
        return ApiErrCode(
            src=src,
            api=api,
            err_code=code,
            desc=em.group("desc"),
            inner_code=_int(em.group("inner")),
            meaning=ERROR_CODES.get(code),
        )
    if "origin_op_name" in text:
        gm = ERROR_TRACKING_RE().search(text)
        if gm is None:
            return None
        no = _ERRNO_RE().search(text)
        origin, op = gm.group("origin"), gm.group("op")
        return ErrorTracking(
            src=src,
            error_no=no.group("no") if no else None,
            error_desc=no.group("desc") if no else None,
            origin_op_name=origin,
            op_name=op,
            task_id=_int(gm.group("task")),
            stream_id=_int(gm.group("stream")),
            sk_name=split_sk_scope_name(origin) or split_sk_scope_name(op),
        )
    if "[Dump][Exception]" in text:
        dm = DUMP_EXCEPTION_RE().search(text)
        if dm is None:
            return DumpExceptionNote(src=src, text=text)
        start, cur, off = _hex(dm.group("start")), _hex(dm.group("cur")), _hex(dm.group("off"))
        size, soff = _hex(dm.group("size")), _hex(dm.group("soff"))
        assert (
            start is not None
            and cur is not None
            and off is not None
            and size is not None
            and soff is not None
        )
        return DumpException(
            src=src,
            core_id=int(dm.group("core")),
            core_type=int(dm.group("ctype")),
            start_pc=start,
            current_pc=cur,
            offset=off,
            symbol_name=dm.group("sym").strip(),
            symbol_size=size,
            symbol_offset=soff,
            offset_consistent=off == cur - start,
            symbol_contains_offset=soff <= off < soff + size,
        )
    if "Begin to dump callback exception" in text:
        bm = DUMP_CALLBACK_RE().search(text)
        if bm is None:
            return None
        name = bm.group("name").strip()
        return DumpCallbackBegin(src=src, kernel_name=name, kind=fault_kind(name))
    if "dump exception to file" in text:
        pm = DUMP_TO_FILE_RE().search(text)
        path = pm.group("path") if pm else None
        dd = _DATA_DUMP_RE().search(text)
        return DumpToFile(
            src=src,
            path=path,
            device_id=int(dd.group("dev")) if dd else None,
            file_name=dd.group("name") if dd else None,
        )
    if "report error module_type" in text:
        rm = REPORT_MODULE_RE.search(text)
        if rm is None:
            return None
        name = rm.group("name")
        return ErrorReportModule(
            src=src,
            module_type=int(rm.group("type")),
            module_name=name,
            meaning=ERROR_MANAGER_CODES.get(name),
        )
    return None


def classify_runtime(line: PlogLine) -> RuntimeRecord | None:
    """Classify one plog record. SK handler lines (``[SK][…]``) are left to the SK-handler parser."""
    if line.is_sk:
        return None
    text = line.text
    # The tokenizer takes `[DFX_INFO]` right after `<Function>:` as a tag; the hybrid/new wording (row 13)
    # is told apart by it, so give it back to the message.
    if "DFX_INFO" in line.tags and not text.startswith("[DFX_INFO]"):
        text = "[DFX_INFO]" + text
    return classify_message(text, line.src, func=line.func)


def parse_error_manager_line(text: str, src: Source) -> ErrorManagerLine | None:
    """A non-plog line of error-manager text (row 11), or None when it is not one.

    Recognised when it carries an error-manager code prefix (``EZ9999: …``,
    ``EZ9999[PID: n] <ts> (EZ9999): …``),
    a ``[FUNC:…][FILE:…][LINE:…]`` suffix, is the ``TraceBack`` header, or its body classifies as a
    runtime record (continuation lines such as ``The extend info: …`` carry no suffix).
    Lines with over-long numbers are not (see :func:`~skdbg.parsers.common.oversized_number`).
    """
    s = text.strip()
    if not s or oversized_number(s) is not None:
        return None
    if s == TRACEBACK_HEADER or s.startswith("TraceBack (most recent call last)"):
        return ErrorManagerLine(src, None, None, s, None, None, None, True, None)
    code: str | None = None
    pid: int | None = None
    body = s
    cm = EM_CODE_RE().match(s)
    if cm is not None:
        code = cm.group("code")
        pid = _int(cm.group("pid"))
        body = cm.group("body").strip()
    func = file = None
    line_no: int | None = None
    sm = EM_SUFFIX_RE().search(body)
    if sm is not None:
        func, file, line_no = sm.group("func"), sm.group("file"), int(sm.group("line"))
        body = body[: sm.start()].rstrip()
    record = classify_message(body, src, func=func)
    if code is None and sm is None and record is None:
        return None
    return ErrorManagerLine(src, code, pid, body, func, file, line_no, False, record)


def _row(rec: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"type": type(rec).__name__, "file": rec.src.file, "line": rec.src.line}
    for f in fields(rec):
        if f.name == "src":
            continue
        value = getattr(rec, f.name)
        if f.name == "record":
            row["record_type"] = type(value).__name__ if value is not None else None
            if value is not None:
                for k, v in _row(value).items():
                    if k not in ("type", "file", "line"):
                        row.setdefault(k, v)
            continue
        if isinstance(value, SkScopeName):
            row["sk_scope"], row["sk_first"], row["sk_last"] = value.scope, value.first, value.last
            continue
        if value is None and f.name == "sk_name":
            row["sk_scope"] = row["sk_first"] = row["sk_last"] = None
            continue
        if isinstance(value, tuple):
            if value and isinstance(value[0], tuple):
                value = "; ".join(f"{k}: {v}" for k, v in value)
            else:
                value = ", ".join(str(v) for v in value)
        row[f.name] = value
    return row


def runtime_frame(records: Sequence[RuntimeRecord | ErrorManagerLine]) -> pd.DataFrame:
    """One row per record: ``type``, ``file``, ``line`` and every field (tuples joined as text)."""
    rows = [_row(r) for r in records]
    return rows_frame(rows, None if rows else ["type", "file", "line"])
