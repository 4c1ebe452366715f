"""The ``super_kernel_options`` grammar of the JIT SuperKernel generator (codegen spec Part 2 §2.2).

Why a module of its own: the same string travels from a model's compile options through the scope
planner into a regenerated candidate, and every malformed part must be refused with a message that
names the key and the accepted values (item 48) before any source is written.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class OptionError(ValueError):
    """A ``super_kernel_options`` part that upstream would refuse (unknown key, bad value, …)."""


class EarlyStart(enum.Enum):
    """``early-start``: 0 disable, 1 V2, 2 V2 without sub-kernel flags (V1 is not reachable)."""

    DISABLE = 0
    V2 = 1
    V2_NO_SUB_KERNEL = 2
    V1 = 3


class PreloadCode(enum.Enum):
    """``preload-code``: whole (`max`), none, per-func (advance step); step-by-step is internal only."""

    WHOLE = "max"
    NONE = "none"
    ADVANCE_STEP = "per-func"
    STEP_BY_STEP = "step-by-step"


_BOOL_KEYS = ("stream-fusion", "debug-dcci-all", "debug-sync-all", "feed-sync-all", "profiling")
_LIST_KEYS = ("dcci-before-kernel-start", "dcci-after-kernel-end", "dcci-disable-on-kernel")
_TEXT_KEYS = ("compile-options", "strict-scope-check")
_INT_KEYS = ("debug-aic-num", "debug-aiv-num")
KNOWN_KEYS = (
    "split-mode",
    "early-start",
    "preload-code",
    "func-align",
    *_BOOL_KEYS,
    *_TEXT_KEYS,
    *_LIST_KEYS,
    *_INT_KEYS,
)


@dataclass(frozen=True)
class SkOptions:
    """Parsed options with upstream defaults; ``raw`` keeps the parsed key → value text."""

    split_mode: int = 4
    early_start: EarlyStart = EarlyStart.V2
    preload: PreloadCode = PreloadCode.ADVANCE_STEP
    func_align: int = 512
    stream_fusion: bool = False
    debug_dcci_all: bool = False
    debug_sync_all: bool = False
    feed_sync_all: bool = False
    profiling: bool = False
    compile_options: tuple[str, ...] = ()
    strict_scope_check: str | None = None
    dcci_before_kernel_start: tuple[str, ...] = ()
    dcci_after_kernel_end: tuple[str, ...] = ()
    dcci_disable_on_kernel: tuple[str, ...] = ()
    debug_aic_num: int = 0
    debug_aiv_num: int = 0
    raw: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


def _int(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise OptionError(
            f"[Super Kernel] Invalid compile option: {key}={value}, expected an integer"
        ) from None


def _bool(key: str, value: str) -> bool:
    if value not in ("0", "1"):
        raise OptionError(f"[Super Kernel] Invalid compile option: {key}={value}, should be 0 or 1")
    return value == "1"


def _split_mode(value: str) -> int:
    num = _int("split-mode", value)
    if not 0 < num <= 64:
        raise OptionError(
            f"[Super Kernel] Invalid compile option: split-mode={value}, should between (0, 64]"
        )
    return num


def _func_align(value: str) -> int:
    num = _int("func-align", value)
    if num < 0 or (num > 0 and (num < 2 or num & (num - 1))):
        raise OptionError(
            f"[Super Kernel] Invalid compile option: func-align={value}, should be [0, 2, 4, 8, ...]"
        )
    return num


def _early_start(value: str) -> EarlyStart:
    table = {"0": EarlyStart.DISABLE, "1": EarlyStart.V2, "2": EarlyStart.V2_NO_SUB_KERNEL}
    if value not in table:
        raise OptionError(f"[Super Kernel] Invalid compile option: early-start={value}, should be 0, 1 or 2")
    return table[value]


def _preload(value: str) -> PreloadCode:
    table = {"max": PreloadCode.WHOLE, "none": PreloadCode.NONE, "per-func": PreloadCode.ADVANCE_STEP}
    if value not in table:
        raise OptionError(
            f"[Super Kernel] Invalid compile option: preload-code={value}, should be max, none or per-func"
        )
    return table[value]


def _split_pairs(text: str, convert_underscore: bool) -> tuple[dict[str, str], list[str]]:
    pairs: dict[str, str] = {}
    warnings: list[str] = []
    for part in text.strip().strip('"').split(":"):
        if not part.strip():
            continue
        if "=" not in part:
            warnings.append(f"[Super Kernel] option part {part!r} has no '=', ignored")
            continue
        key, value = (s.strip() for s in part.split("=", 1))
        if convert_underscore:
            key = key.replace("_", "-")
        if not key or not value:
            raise OptionError(f"[Super Kernel] Invalid compile option: {part!r}, empty key or value")
        if key in pairs:
            raise OptionError(f"[Super Kernel] Invalid compile option: {key} option is set more than once.")
        if key not in KNOWN_KEYS:
            raise OptionError(f"[Super Kernel] Invalid compile option: {key} option is not supported.")
        pairs[key] = value
    return pairs, warnings


def _comma_list(value: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in value.split(",") if p.strip())


def parse_options(text: str, *, convert_underscore: bool = False) -> SkOptions:
    """Parse ``k=v:k=v`` (quotes stripped, empty parts ignored); raise :class:`OptionError` on bad input."""
    pairs, warnings = _split_pairs(text, convert_underscore)
    kw: dict[str, object] = {"raw": dict(pairs), "warnings": tuple(warnings)}
    for key, value in pairs.items():
        attr = key.replace("-", "_")
        if key == "split-mode":
            kw[attr] = _split_mode(value)
        elif key == "early-start":
            kw[attr] = _early_start(value)
        elif key == "preload-code":
            kw["preload"] = _preload(value)
        elif key == "func-align":
            kw[attr] = _func_align(value)
        elif key in _BOOL_KEYS:
            kw[attr] = _bool(key, value)
        elif key == "compile-options":
            kw[attr] = _comma_list(value)
        elif key == "strict-scope-check":
            kw[attr] = value
        elif key in _LIST_KEYS:
            kw[attr] = _comma_list(value)
        else:
            num = _int(key, value)
            if num < 0:
                raise OptionError(f"[Super Kernel] Invalid compile option: {key}={value}, should be >= 0")
            kw[attr] = num
    return SkOptions(**kw)  # type: ignore[arg-type]
