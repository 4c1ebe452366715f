"""The SK exception-handler parse (artifacts.md §1.4, §1.8), one import for its callers.

The work is split by job: the records (:mod:`skdbg.parsers.sk_records`); the line parser
(:mod:`skdbg.parsers.sk_parser`, driven by the line kinds of :mod:`skdbg.parsers.sk_lines` and the
field table of :mod:`skdbg.parsers.sk_fields`), which follows the stream; the blocks it fills
(:mod:`skdbg.parsers.sk_builders`), what each line writes into its block (:mod:`skdbg.parsers.sk_rows`)
and the blocks made records (:mod:`skdbg.parsers.sk_freeze`); the merging of plog and
``super_kernel.log`` copies (:mod:`skdbg.parsers.sk_dedupe`) and the tables
(:mod:`skdbg.parsers.sk_frames`). This module re-exports their public names.
"""

from __future__ import annotations

from skdbg.parsers.sk_dedupe import (
    dedupe_incidents,
)
from skdbg.parsers.sk_frames import (
    cores_frame,
    counters_frame,
    dfx_frame,
    incidents_frame,
    traces_frame,
)
from skdbg.parsers.sk_parser import (
    A_ONLY,
    B_ONLY,
    PRE,
    SkMessage,
    from_filelog,
    from_plog,
    iter_filelog_messages,
    iter_plog_messages,
    parse_plog_file,
    parse_sk_log,
    parse_sk_messages,
    parse_super_kernel_log,
)
from skdbg.parsers.sk_records import (
    DIALECTS,
    NON_AOT_DETAIL,
    AbortInfo,
    AllCoreTrace,
    CallbackB,
    CondInfo,
    CoreTrace,
    CounterEntry,
    CounterTable,
    DfxNode,
    DfxTable,
    DumpRecord,
    DumpTensor,
    ExceptionCore,
    Incident,
    ModelMap,
    NonSkFault,
    QueueTask,
    SkHandlerResult,
    SkHeaderInfo,
    SkipDuplicate,
    Sources,
    TaskQueue,
    TraceSymbol,
)
from skdbg.parsers.sk_rows import CORE_FIELD

__all__ = [
    "A_ONLY",
    "AbortInfo",
    "AllCoreTrace",
    "B_ONLY",
    "CORE_FIELD",
    "CallbackB",
    "CondInfo",
    "CoreTrace",
    "CounterEntry",
    "CounterTable",
    "DIALECTS",
    "DfxNode",
    "DfxTable",
    "DumpRecord",
    "DumpTensor",
    "ExceptionCore",
    "Incident",
    "ModelMap",
    "NON_AOT_DETAIL",
    "NonSkFault",
    "PRE",
    "QueueTask",
    "SkHandlerResult",
    "SkHeaderInfo",
    "SkMessage",
    "SkipDuplicate",
    "Sources",
    "TaskQueue",
    "TraceSymbol",
    "cores_frame",
    "counters_frame",
    "dedupe_incidents",
    "dfx_frame",
    "from_filelog",
    "from_plog",
    "incidents_frame",
    "iter_filelog_messages",
    "iter_plog_messages",
    "parse_plog_file",
    "parse_sk_log",
    "parse_sk_messages",
    "parse_super_kernel_log",
    "traces_frame",
]
