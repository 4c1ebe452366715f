"""Reason vocabularies of the SK optimiser and how printed texts map back to them (§3.7, §3.8).

Why a module of its own: break reasons, fusion-fail reasons and scope statuses appear in
sk_scope_split.log, sk_fusion_fail_reasons.log and super_kernel.log, and upstream printed them
two ways over time — as enum names (artifacts.md, AOT@mirror 8d0b4fbc) and as English detail
texts (``FusionFailReasonToStr``/``ScopeBreakReasonToStr`` in ``sk_node.cpp``/``sk_scope_info.h``
of earlier revisions, e.g. mirror-cann/graph-autofusion sk_scope_info.h @d9d8ff19, sk_node.cpp
@00239185). Parsers keep the raw text and add the enum they could derive; unknown names are
kept and flagged, never rejected.
"""

from __future__ import annotations

import re

from skdbg import regexcode

FUSION_FAIL_REASONS = frozenset(
    {
        "CAN_FUSE",
        "OP_UNSUPPORT",
        "DYNAMIC_TASK_UNSUPPORT",
        "NOT_IN_SCOPE",
        "IN_UNFUSIBLE_SCOPE",
        "EXCEED_CORE_MAX",
        "RESET_TYPE_NODE",
        "ISOLATED_EVENT",
        "EXIST_DEADLOCK",
        "SCOPE_FUSE_PART",
        "EXTERNAL_DEPEND",
        "UNSUPPORT_EVENT_TYPE",
        "MEMORY_WAIT_NODE_ONLY",
        "MEMORY_WRITE_NODE_ONLY",
        "DEFAULT_NODE",
        "SIMT_OP_UNSUPPORT",
        "KERNEL_ATTR_GET_FAILED",
        "EXCEED_SCOPE_MAX",
    }
)
SUB_REASONS = {
    "SCOPE_FUSE_PART": frozenset({"RESOURCE_INSUFFICIENT", "NO_TARGET_NODE", "UNRECOVERABLE_FAIL"}),
    "EXIST_DEADLOCK": frozenset(
        {
            "KERNEL_INSUFFICIENT_CORES",
            "NOTIFY_INSUFFICIENT_CORES",
            "NOTIFY_NOT_IN_GRAPH",
            "NOTIFY_AFTER_SK_RANGE",
            "NOTIFY_INVALID",
            "FIRST_WAIT",
            "NO_SUPPORT_NODE",
        }
    ),
    "OP_UNSUPPORT": frozenset(
        {
            "BINDMAP_INIT_EMPTY",
            "BINHDL_NULL",
            "FUNCHDL_NULL",
            "FUNC_NOT_FOUND",
            "BIN_DEV_ADDR_GET_FAILED",
            "FUNC_ADDR_GET_FAILED",
            "BINDMAP_ENTRY_CONFLICT",
            "BINDMAP_CAP_INCONSISTENT",
            "BIN_HOST_ADDR_GET_FAILED",
        }
    ),
}
# Quirk (§3.8): the detail texts of these two are swapped relative to the enum comments
# upstream; the enum name is the truth, the attached detail text describes the other one.
SWAPPED_DETAIL_REASONS = frozenset({"NOT_IN_SCOPE", "IN_UNFUSIBLE_SCOPE"})

# Detail texts printed instead of the enum name by older builds (sk_node.cpp
# ``FusionFailReasonDetail`` @00239185), matched by prefix; the enum is the one of the
# *switch case* that returns the text (so the swap quirk is reproduced, not "corrected").
FUSION_FAIL_TEXTS: tuple[tuple[str, str], ...] = (
    ("node can fuse", "CAN_FUSE"),
    ("The operator does not support the operation of fusing SuperKernel", "OP_UNSUPPORT"),
    ("The operator will refresh task information at runtime", "DYNAMIC_TASK_UNSUPPORT"),
    ("The user actively marked that this operator is not fused", "NOT_IN_SCOPE"),
    ("This operator is not within the fusion range marked by the user", "IN_UNFUSIBLE_SCOPE"),
    ("The number of kernels required by the operator exceeds", "EXCEED_CORE_MAX"),
    ("reset type node in end", "RESET_TYPE_NODE"),
    ("There is no kernel node on the stream where the current node is located", "ISOLATED_EVENT"),
    ("exist deadlock", "EXIST_DEADLOCK"),
    ("scope fuse failed", "SCOPE_FUSE_PART"),
    ("event node has external dependency", "EXTERNAL_DEPEND"),
    ("unsupport event type", "UNSUPPORT_EVENT_TYPE"),
    ("notify node has no wait node in modelRI", "NOTIFY_NO_WAIT_NODE"),
    ("No memory write exists", "MEMORY_WAIT_NODE_ONLY"),
    ("only exists memory write nodes", "MEMORY_WRITE_NODE_ONLY"),
    ("default node uses aicpu resources", "DEFAULT_NODE"),
    ("SIMT operator is not supported", "SIMT_OP_UNSUPPORT"),
    ("Failed to get kernel attribute", "KERNEL_ATTR_GET_FAILED"),
    ("Exceeded maximum scope number limit", "EXCEED_SCOPE_MAX"),
)
# Older enum spellings (sk_node.cpp @00239185) → current names.
FUSION_FAIL_ALIASES = {
    "BINDMAP_IS_EMPTY": "OP_UNSUPPORT",
    "TASK_GROUP_NOT_EMPTY": "DYNAMIC_TASK_UNSUPPORT",
    "EXCEED_DEVICE_MAX": "EXCEED_CORE_MAX",
    "SIMT_OP_NOT_SUPPORTED": "SIMT_OP_UNSUPPORT",
}

BREAK_REASONS = frozenset(
    {"NONE", "UNFUSIBLE_NODE", "DEADLOCK_DETECTED", "SYNCALL_OP_DROP", "DEBUG_PER_OP_MAX_CORE"}
)
LEGACY_BREAK_REASONS = frozenset({"SCHEMODE_CORE_DROP", "SCHEMODE_CORE_RISE"})
BREAK_TEXTS: tuple[tuple[str, str], ...] = (
    ("There exists unfusible node in scope", "UNFUSIBLE_NODE"),
    ("There exists deadlock in scope", "DEADLOCK_DETECTED"),
    (
        "There exists an operator for full kernel synchronization, and the number of kernels of this "
        "operator is less",
        "SCHEMODE_CORE_DROP",
    ),
    (
        "There exists an operator for full kernel synchronization, and the number of kernels of this "
        "operator is greater",
        "SCHEMODE_CORE_RISE",
    ),
    ("Per-Op debug mode", "DEBUG_PER_OP_MAX_CORE"),
)

SCOPE_STATUSES = frozenset(
    {"INIT", "SUCCESS", "RESOURCE_INSUFFICIENT", "NO_TARGET_NODE", "UNRECOVERABLE_FAIL"}
)

_ENUM = regexcode.compile(r"[A-Z][A-Z0-9_]*")
_WITH_SUB = regexcode.compile(r"^(?P<text>.*?)(?: \[(?P<sub>[A-Z][A-Z0-9_]*)\])?$", re.DOTALL)


def classify_fusion_fail(raw: str) -> tuple[str | None, str | None]:
    """``(reason, sub)`` from ``<REASON>[ [<SUB>]]`` or from an older detail text; reason None if unknown."""
    m = _WITH_SUB.match(raw.strip())
    text = m.group("text").strip() if m else raw.strip()
    sub = m.group("sub") if m else None
    if _ENUM.fullmatch(text):
        return FUSION_FAIL_ALIASES.get(text, text), sub
    for prefix, reason in FUSION_FAIL_TEXTS:
        if text.startswith(prefix):
            return reason, sub
    return None, sub


def classify_break_reason(raw: str) -> str | None:
    """Enum of a ``breakReason=`` value printed as a name or (older builds) as a sentence."""
    text = raw.strip()
    if _ENUM.fullmatch(text):
        return text
    for prefix, reason in BREAK_TEXTS:
        if text.startswith(prefix):
            return reason
    return None


def fusion_fail_known(reason: str | None) -> bool:
    return reason is not None and reason in FUSION_FAIL_REASONS


def sub_reason_known(reason: str | None, sub: str | None) -> bool:
    if sub is None:
        return True
    return reason is not None and sub in SUB_REASONS.get(reason, frozenset())


def break_reason_known(reason: str | None) -> bool:
    return reason is not None and (reason in BREAK_REASONS or reason in LEGACY_BREAK_REASONS)
