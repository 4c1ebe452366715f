"""The SuperKernel model: children, options and the derived fused kernel type, block dim and params.

Why: the generator, the scope planner and the candidate builder all reason about the same facts — a
child's kernel type and block dim, its SK parameter offsets, its events — so they live in plain
dataclasses constructible in code (``SkRequest``) as well as from an ``OPS.json`` file
(:func:`load_ops_json`).  Rules are those of codegen spec Part 2 §2.1, §2.3 and §2.4.
"""

from __future__ import annotations

import enum
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skdbg.codegen.fusion.options import SkOptions, parse_options

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class FusionInputError(ValueError):
    """Bad generator input: names the file (or op index) and what was expected."""


class KernelType(enum.Enum):
    """JIT kernel types with their enum values (used in ``dy_block_num`` and the compile info)."""

    AIV_ONLY = 0
    AIC_ONLY = 1
    MIX_AIV_1_0 = 4
    MIX_AIC_1_0 = 5
    MIX_AIC_1_1 = 6
    MIX_AIC_1_2 = 7

    @property
    def json_name(self) -> str:
        return f"KERNEL_TYPE_{self.name}"

    @classmethod
    def from_json(cls, name: str) -> KernelType:
        if not name.startswith("KERNEL_TYPE_") or name[12:] not in cls.__members__:
            raise KeyError(name)
        return cls[name[12:]]

    @property
    def device(self) -> str:
        """``aic``, ``aiv`` or ``mix`` (the early-start/sync device class)."""
        if self in (KernelType.AIV_ONLY, KernelType.MIX_AIV_1_0):
            return "aiv"
        if self in (KernelType.AIC_ONLY, KernelType.MIX_AIC_1_0):
            return "aic"
        return "mix"


_TASK_RATION = {
    KernelType.MIX_AIV_1_0: "0:1",
    KernelType.MIX_AIC_1_0: "1:0",
    KernelType.MIX_AIC_1_1: "1:1",
    KernelType.MIX_AIC_1_2: "1:2",
    KernelType.AIV_ONLY: "0:1",
    KernelType.AIC_ONLY: "1:0",
}


def task_ration(kind: KernelType) -> str:
    """``c:v`` of a fused kernel type (compiled JSON ``taskRation``)."""
    return _TASK_RATION[kind]


@dataclass(frozen=True)
class SocInfo:
    """What the generator needs from the platform: chip tag, FFTS presence and core counts."""

    name: str
    chip: str
    has_ffts: bool
    vector_core_cnt: int
    ai_core_cnt: int

    @property
    def npu_arch(self) -> int:
        return 3510 if self.chip == "c310" else 2201


_SOC_FAMILIES: tuple[tuple[str, str, bool, int, int], ...] = (
    ("Ascend910_93", "c220", True, 48, 24),
    ("Ascend910B", "c220", True, 48, 24),
    ("Ascend950", "c310", False, 64, 32),
)


def soc_info(name: str, vector_core_cnt: int | None = None, ai_core_cnt: int | None = None) -> SocInfo:
    """Per-SoC defaults (a few families); explicit core counts override them."""
    for prefix, chip, ffts, vec, cube in _SOC_FAMILIES:
        if name.startswith(prefix):
            return SocInfo(name, chip, ffts, vector_core_cnt or vec, ai_core_cnt or cube)
    known = ", ".join(p + "*" for p, *_ in _SOC_FAMILIES)
    raise FusionInputError(f"current soc: {name} series do not support super kernel feature (known: {known})")


@dataclass(frozen=True)
class ChildOp:
    """One op-list entry: the child's compile-info JSON (already loaded) plus its place in the SK."""

    info: dict[str, Any]
    stream_id: int = -1
    send_event_list: tuple[int, ...] = ()
    recv_event_list: tuple[int, ...] = ()
    task_type: str = "normal"
    text_size: int = 0
    source: str = "<op>"


@dataclass(frozen=True)
class SkRequest:
    """A whole SK generation request (the parsed ``OPS.json``)."""

    kernel_name: str
    ops: tuple[ChildOp, ...]
    options: str = ""
    soc: str = "Ascend910_9391"
    vector_core_cnt: int | None = None
    ai_core_cnt: int | None = None


def preload_pages(text_size: int) -> int:
    """Preload page count of a child: ceil(min(size, 16384) / 2048)."""
    return math.ceil(min(text_size, 2048 * 8) / 2048)


@dataclass
class Child:
    """A child after reading its JSON, with its derived SK parameter layout."""

    index: int
    kernel_name: str
    called: dict[str, Any]
    split_mode_in_json: int | None
    kernel_type: KernelType
    json_block_dim: int
    block_num: int
    dynamic: bool
    timestamp: bool
    debug_option: str
    debug_size: int
    with_sync_all: bool
    params: list[str]
    early_start_set: bool
    early_start_wait: bool
    dcci_before: bool  # effective flags (JSON, or for a dynamic child the options, §2.2)
    dcci_after: bool
    dcci_disable: bool
    stream_id: int
    send_events: list[int]
    recv_events: list[int]
    pages: int
    param_offset: int = 0
    extra_params: list[str] = field(default_factory=list)
    notify_param_offset: int = 0
    wait_param_offset: int = 0
    send_info: dict[str, str] = field(default_factory=dict)
    recv_info: dict[str, str] = field(default_factory=dict)
    is_last_op: bool = False
    op_type: str = ""  # ``sub_operator_op_type``: what the dcci-* options are matched against
    json_dcci: tuple[bool, bool, bool] = (False, False, False)  # the JSON's before/after/disable

    @property
    def multi_stream_name(self) -> str:
        return f"{self.kernel_name}_{self.index}"


def function_keys(kind: KernelType, chip: str) -> tuple[str, ...]:
    """Keys of ``sub_operator_kernel_name`` (or a dynamic tiling-key entry) a kernel type needs."""
    if kind in (KernelType.AIV_ONLY, KernelType.AIC_ONLY):
        return ("AiCore",)
    if kind is KernelType.MIX_AIV_1_0:
        return (f"dav-{chip}-vec",)
    if kind is KernelType.MIX_AIC_1_0:
        return (f"dav-{chip}-cube",)
    return (f"dav-{chip}-cube", f"dav-{chip}-vec")


def _check_function_names(child: Child, soc: SocInfo, where: str) -> None:
    """Refuse a child json whose function names the generator would need but cannot find."""
    if child.dynamic:
        table = child.called.get("dynamic_func_names")
        if not isinstance(table, dict) or not table:
            raise FusionInputError(
                f"{where}: dynamic child needs sub_operator_kernel_name.dynamic_func_names"
            )
        for key, entry in table.items():
            if not str(key).isdigit() or not isinstance(entry, dict):
                raise FusionInputError(
                    f"{where}: dynamic_func_names[{key!r}]: expected a numeric tiling key → object"
                )
            try:
                kind = KernelType.from_json(str(entry.get("kernel_type")))
            except KeyError:
                raise FusionInputError(
                    f"{where}: dynamic_func_names[{key!r}].kernel_type {entry.get('kernel_type')!r} is not supported"
                ) from None
            for need in function_keys(kind, soc.chip):
                if not isinstance(entry.get(need), str):
                    raise FusionInputError(
                        f"{where}: dynamic_func_names[{key!r}] needs a {need!r} function name"
                    )
        return
    for need in function_keys(child.kernel_type, soc.chip):
        entry = child.called.get(need)
        if not isinstance(entry, dict) or not isinstance(entry.get("func_name"), str):
            raise FusionInputError(
                f"{where}: {child.kernel_type.json_name} needs sub_operator_kernel_name.{need}.func_name"
            )


def _identifier(value: object, where: str, path: str) -> None:
    """Refuse a value that generated C++ would use as a name unless it is a C identifier.

    Child JSON comes from other people's builds; a ``kernelName`` holding a newline once wrote an
    ``#include`` line into the SK source. Names are checked here, once, at the model boundary, so no
    template or string builder downstream needs to escape them.
    """
    if not isinstance(value, str) or not _IDENT.fullmatch(value):
        raise FusionInputError(f"{where}: {path} {value!r}: expected a C identifier")


def _check_generated_names(child: Child, info: dict[str, Any], where: str) -> None:
    """Every child value that reaches generated source as a name is an identifier (kernel, functions)."""
    _identifier(info.get("kernelName"), where, "kernelName")
    for key, entry in child.called.items():
        if key == "dynamic_func_names" and isinstance(entry, dict):
            for tiling, names in entry.items():
                if isinstance(names, dict):
                    for need, name in names.items():
                        if need != "kernel_type":
                            _identifier(
                                name, where, f"sub_operator_kernel_name.dynamic_func_names.{tiling}.{need}"
                            )
        elif isinstance(entry, dict) and "func_name" in entry:
            _identifier(entry["func_name"], where, f"sub_operator_kernel_name.{key}.func_name")
    for i, param in enumerate(info.get("sub_operator_params") or []):
        _identifier(param, where, f"sub_operator_params[{i}]")


def _child(index: int, op: ChildOp, opts: SkOptions, soc: SocInfo) -> Child:
    info = op.info
    where = f"{op.source} (op {index})"
    try:
        kernel_type = KernelType.from_json(str(info["sub_operator_kernel_type"]))
        debug = str(info.get("debugOptions", ""))
        json_dcci = (
            bool(info.get("sub_operator_call_dcci_before_kernel_start", False)),
            bool(info.get("sub_operator_call_dcci_after_kernel_end", False)),
            bool(info.get("sub_operator_call_dcci_disable_on_kernel", False)),
        )
        timestamp = any(word in debug for word in ("timestamp", "printf", "assert"))
        child = Child(
            index=index,
            kernel_name=str(info["kernelName"]),
            called=dict(info["sub_operator_kernel_name"]),
            split_mode_in_json=info.get("split_mode"),
            kernel_type=kernel_type,
            json_block_dim=int(info["blockDim"]),
            block_num=int(info["blockDim"]),
            dynamic=op.task_type == "dynamic",
            timestamp=timestamp,
            debug_option=debug if timestamp else "",
            debug_size=int(info["debugBufSize"]) if timestamp else 0,
            with_sync_all=bool(info.get("sub_op_with_sync_all", False)),
            params=[f"{p}_{index}" for p in info["sub_operator_params"]],
            early_start_set=bool(info["sub_operator_early_start_set_flag"]),
            early_start_wait=bool(info["sub_operator_early_start_wait_flag"]),
            dcci_before=json_dcci[0],
            dcci_after=json_dcci[1],
            dcci_disable=json_dcci[2],
            stream_id=op.stream_id,
            send_events=list(op.send_event_list),
            recv_events=list(op.recv_event_list),
            pages=preload_pages(op.text_size),
            op_type=str(info.get("sub_operator_op_type", "")),
            json_dcci=json_dcci,
        )
    except (KeyError, TypeError, ValueError) as err:
        raise FusionInputError(
            f"read sub op json file failed, json name {where}, reason is: missing or bad {err}"
        ) from None
    _check_function_names(child, soc, where)
    _check_generated_names(child, info, where)
    if op.task_type not in ("normal", "dynamic"):
        raise FusionInputError(f"{where}: task_type {op.task_type!r}, expected 'normal' or 'dynamic'")
    if opts.early_start.value == 0 and (child.early_start_set or child.early_start_wait):
        raise FusionInputError(
            f"sub operator {child.kernel_name} early-start mode set:{child.early_start_set}, "
            f"wait:{child.early_start_wait}, donot match with super kernel early-start mode: False"
        )
    if child.split_mode_in_json is not None and child.split_mode_in_json != opts.split_mode:
        raise FusionInputError(
            f"sub operator {child.kernel_name} split_mode: {child.split_mode_in_json}, "
            f"donot match with super kernel split_mode: {opts.split_mode}"
        )
    if child.dynamic:
        _apply_dynamic_dcci_options(child, opts)
        if child.early_start_set or child.early_start_wait:
            raise FusionInputError(f"{child.kernel_name} is dynamic op, do not support early start")
        aiv = kernel_type in (KernelType.AIV_ONLY, KernelType.MIX_AIV_1_0)
        child.block_num = soc.vector_core_cnt if aiv else soc.ai_core_cnt
        child.extra_params = [
            f"__ac_dynamic_tiling_key_{index}",
            f"__ac_dynamic_block_num_{index}",
            f"__ac_wait_lock_{index}",
        ]
    return child


def _apply_dynamic_dcci_options(child: Child, opts: SkOptions) -> None:
    """A dynamic child's DCCI flags come from the SK options, matched on its ``sub_operator_op_type``.

    Why: a dynamic child is compiled offline, before the SK options are known, so its JSON flags
    cannot reflect them; upstream's generator (``update_dynamic_op_dcci_options``) decides at SK
    generation instead. ``dcci-disable-on-kernel`` wins (before/after off, disable on); otherwise
    before/after are exactly "listed in the option" and the JSON's disable flag stays. Matching is
    exact string equality against the comma list (empty items dropped), as upstream. Static children
    keep their JSON flags: their compile already applied the options.
    """
    if child.op_type in opts.dcci_disable_on_kernel:
        child.dcci_before, child.dcci_after, child.dcci_disable = False, False, True
        return
    child.dcci_before = child.op_type in opts.dcci_before_kernel_start
    child.dcci_after = child.op_type in opts.dcci_after_kernel_end


@dataclass
class SkModel:
    """Derived SK facts: children with offsets, fused type/block, events, stream mode, dump options."""

    kernel_name: str
    options: SkOptions
    soc: SocInfo
    children: list[Child]
    kernel_type: KernelType
    block_num: int
    two_stream: bool
    inner_events: set[int]
    params: list[str]
    timestamp: bool
    debug_option: str
    debug_size: int
    workspace_size: int


def _connect(sender: Child, receiver: Child) -> set[int]:
    return set(sender.send_events) & set(receiver.recv_events)


def _stream_mode(children: list[Child], opts: SkOptions) -> tuple[bool, set[int]]:
    """Two-stream detection and inner events (§2.6); raises on the refused pairings (item 56)."""
    inner: set[int] = set()
    two = False
    for former, op in zip(children, children[1:], strict=False):
        own = _connect(op, op)
        if own:
            raise FusionInputError(
                f"ERROR: exists send-recv event pair within 1 op: {op.kernel_name}, event id: {own}"
            )
        link = _connect(former, op)
        if former.stream_id == op.stream_id and link:
            raise FusionInputError(
                "ERROR: super kernel do not support self send/receive pair within 1 real stream"
            )
        if former.stream_id != op.stream_id and not link:
            if not opts.stream_fusion:
                raise FusionInputError(
                    "ERROR: super kernel do not support more than 2 real stream, use "
                    "'options=\"stream-fusion=1\"' to enable operators fusion on multi-stream"
                )
            two = True
            break
        inner |= link
    senders: dict[int, list[Child]] = {}
    for c in children:
        for ev in c.send_events:
            senders.setdefault(ev, []).append(c)
    for late in children:
        for ev in late.recv_events:
            for early in senders.get(ev, ()):
                if early.index >= late.index:
                    continue
                if early.stream_id == late.stream_id:
                    raise FusionInputError(
                        "ERROR: super kernel do not support self send/receive pair within 1 real stream"
                    )
                inner.add(ev)
    return two, inner


_TYPE_BITS = {
    KernelType.AIV_ONLY: 0b1,
    KernelType.AIC_ONLY: 0b10,
    KernelType.MIX_AIV_1_0: 0b100,
    KernelType.MIX_AIC_1_0: 0b1000,
    KernelType.MIX_AIC_1_1: 0b10000,
    KernelType.MIX_AIC_1_2: 0b100000,
}


def fused_type(children: list[Child]) -> tuple[KernelType, int, int, int]:
    """(SK kernel type, block num, max aic, max aiv) by the OR-of-bits table of §2.3."""
    bits = max_aic = max_aiv = 0
    for c in children:
        bits |= _TYPE_BITS[c.kernel_type]
        aic = c.block_num if c.kernel_type.device in ("aic", "mix") else 0
        aiv = c.block_num if c.kernel_type.device in ("aiv", "mix") else 0
        if c.kernel_type is KernelType.MIX_AIC_1_2:
            aiv = 2 * c.block_num
        max_aic, max_aiv = max(max_aic, aic), max(max_aiv, aiv)
    if bits in (0b1, 0b100, 0b101):
        return KernelType.MIX_AIV_1_0, max_aiv, max_aic, max_aiv
    if bits in (0b10, 0b1000, 0b1010):
        return KernelType.MIX_AIC_1_0, max_aic, max_aic, max_aiv
    if bits == 0b10000 or max_aiv <= max_aic:
        return KernelType.MIX_AIC_1_1, max_aic, max_aic, max_aiv
    return KernelType.MIX_AIC_1_2, max(max_aic, math.ceil(max_aiv / 2)), max_aic, max_aiv


def apply_debug_core_nums(
    kind: KernelType, block: int, aic: int, aiv: int, soc: SocInfo
) -> tuple[KernelType, int]:
    """``debug-aic-num``/``debug-aiv-num`` override (§2.3, item 51)."""
    if aic == 0 and aiv == 0:
        return kind, block
    if aic and aiv and aic != aiv and aic * 2 != aiv:
        raise FusionInputError(
            f"[Super Kernel][ERROR]: ratio of super kernel options debug-aic-num {aic} to debug-aiv-num {aiv} "
            "is invalid. Should be 1:0 or 0:1 or 1:1 or 1:2."
        )
    if aic > soc.ai_core_cnt:
        raise FusionInputError(
            f"[Super Kernel][ERROR]: debug-aic-num {aic} exceeds platform max aic num {soc.ai_core_cnt}."
        )
    if aiv > soc.vector_core_cnt:
        raise FusionInputError(
            f"[Super Kernel][ERROR]: debug-aiv-num {aiv} exceeds platform max aiv num {soc.vector_core_cnt}."
        )
    needs: list[tuple[str, str, int, int]] = []
    if kind.device == "aic":
        needs = [("aic", "aic", aic, block)]
    elif kind.device == "aiv":
        needs = [("aiv", "aiv", aiv, block)]
    elif kind is KernelType.MIX_AIC_1_1:
        needs = [("mix 1:1", "aic", aic, block), ("mix 1:1", "aiv", aiv, block)]
    else:
        needs = [("mix 1:2", "aic", aic, block), ("mix 1:2", "aiv", aiv, 2 * block)]
    for case, core, value, need in needs:
        if value < need:
            raise FusionInputError(
                f"[Super Kernel][ERROR]: In super kernel {case} case, option debug-{core}-num {value} "
                f"should not be less than max sub op {core} num {need}."
            )
    if aiv == 0:
        return KernelType.MIX_AIC_1_0, aic
    if aic == 0:
        return KernelType.MIX_AIV_1_0, aiv
    if aic == aiv:
        return KernelType.MIX_AIC_1_1, aic
    return KernelType.MIX_AIC_1_2, aic


def _workspace(opts: SkOptions, kind: KernelType, block: int, n_children: int) -> int:
    if not opts.feed_sync_all:
        return 0
    blocks = 2 * block if kind is KernelType.MIX_AIC_1_2 else block
    base = 512
    while blocks * base <= n_children * 128:
        base *= 2
    return blocks * base


#: the output folder holds ``<kernel_name>_kernel.cpp``; a file name is at most NAME_MAX (255) bytes
_NAME_MAX = 255
_KERNEL_FILE_SUFFIX = "_kernel.cpp"


def build_model(request: SkRequest) -> SkModel:
    """Read the children and derive everything the source and the compiled JSON need."""
    if not _IDENT.fullmatch(request.kernel_name):
        raise FusionInputError(
            f"kernel_name {request.kernel_name!r}: expected a C identifier (it names the entry and the output files)"
        )
    size = len(request.kernel_name) + len(_KERNEL_FILE_SUFFIX)  # an identifier is ASCII: bytes = chars
    if size > _NAME_MAX:
        raise FusionInputError(
            f"kernel_name is {len(request.kernel_name)} characters long: too long for the output file name "
            f"<kernel_name>{_KERNEL_FILE_SUFFIX} (at most {_NAME_MAX - len(_KERNEL_FILE_SUFFIX)})"
        )
    opts = parse_options(request.options)
    soc = soc_info(request.soc, request.vector_core_cnt, request.ai_core_cnt)
    if not request.ops:
        raise FusionInputError("super kernel compile must provide op lists")
    children = [_child(i, op, opts, soc) for i, op in enumerate(request.ops)]
    two, inner = _stream_mode(children, opts)
    offset = 1 if soc.has_ffts else 0
    params: list[str] = []
    for c in children:
        c.param_offset = offset
        c.notify_param_offset = offset + len(c.params) + len(c.extra_params)
        c.wait_param_offset = c.notify_param_offset + len(c.send_events)
        c.extra_params += [f"__ac_notify_lock_{c.index}_{k}" for k in range(len(c.send_events))]
        c.extra_params += [f"__ac_wait_lock_{c.index}_{k}" for k in range(len(c.recv_events))]
        offset += len(c.params) + len(c.extra_params)
        params += c.params + c.extra_params
    kind, block, _, _ = fused_type(children)
    kind, block = apply_debug_core_nums(kind, block, opts.debug_aic_num, opts.debug_aiv_num, soc)
    debug_option = ""
    for c in children:
        if c.timestamp:
            have = debug_option.split(",") if debug_option else []
            debug_option = ",".join(have + [o for o in c.debug_option.split(",") if o not in have])
    return SkModel(
        kernel_name=request.kernel_name,
        options=opts,
        soc=soc,
        children=children,
        kernel_type=kind,
        block_num=block,
        two_stream=two,
        inner_events=inner,
        params=params,
        timestamp=any(c.timestamp for c in children),
        debug_option=debug_option,
        debug_size=max((c.debug_size for c in children), default=0),
        workspace_size=_workspace(opts, kind, block, len(children)),
    )


def _events(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(isinstance(v, int) for v in value):
        raise FusionInputError(f"{where}: expected a list of integer event ids, got {value!r}")
    return tuple(value)


def load_ops_json(path: Path) -> SkRequest:
    """Read ``OPS.json`` (format in issue 7; child ``json`` paths are relative to it)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise FusionInputError(f"{path}: cannot read: {err}") from None
    except json.JSONDecodeError as err:
        raise FusionInputError(f"{path}:{err.lineno}: not valid JSON: {err.msg}") from None
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("kernel_name"), str)
        or not isinstance(doc.get("ops"), list)
    ):
        raise FusionInputError(f"{path}: expected an object with 'kernel_name' (string) and 'ops' (list)")
    ops: list[ChildOp] = []
    for i, entry in enumerate(doc["ops"]):
        where = f"{path}: ops[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("json"), str):
            raise FusionInputError(f"{where}: expected an object with a 'json' path")
        child_path = path.parent / entry["json"]
        try:
            info = json.loads(child_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:  # ValueError: bad UTF-8 or JSON, a NUL in the path
            shown = str(child_path).replace("\0", "\\0")  # a NUL must not reach the terminal
            raise FusionInputError(
                f"read sub op json file failed, json name {shown}, reason is: {err}"
            ) from None
        if not isinstance(info, dict):
            raise FusionInputError(f"{child_path}: expected a JSON object")
        text_size = entry.get("text_size", 0)
        stream_id = entry.get("stream_id", -1)
        if not isinstance(text_size, int) or not isinstance(stream_id, int):
            raise FusionInputError(f"{where}: 'text_size' and 'stream_id' must be integers")
        ops.append(
            ChildOp(
                info=info,
                stream_id=stream_id,
                send_event_list=_events(entry.get("send_event_list", []), f"{where}.send_event_list"),
                recv_event_list=_events(entry.get("recv_event_list", []), f"{where}.recv_event_list"),
                task_type=str(entry.get("task_type", "normal")),
                text_size=text_size,
                source=str(child_path),
            )
        )
    for key, kind in (("options", str), ("soc", str), ("vector_core_cnt", int), ("ai_core_cnt", int)):
        if key in doc and not isinstance(doc[key], kind):
            raise FusionInputError(f"{path}: '{key}' must be a {kind.__name__}")
    return SkRequest(
        kernel_name=doc["kernel_name"],
        ops=tuple(ops),
        options=doc.get("options", ""),
        soc=doc.get("soc", "Ascend910_9391"),
        vector_core_cnt=doc.get("vector_core_cnt"),
        ai_core_cnt=doc.get("ai_core_cnt"),
    )
