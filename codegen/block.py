"""The generated SK adaptation block for one entry: Args struct, ``__sk__`` function, SK_BIND (spec §1.6).

The block is text appended after the entry's closing brace; the original ``__global__`` is never
touched. Every identifier that reaches the generated C++ is checked first (:func:`check_identifier`),
so a hostile name in a source or contract cannot inject code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skdbg.codegen.kerneltype import map_kernel_type_for_sk
from skdbg.codegen.reader import KernelEntry
from skdbg.codegen.render import render

MAX_SPLITS = 4
SYS_ARGS_MODES = ("auto", "always", "never")
_ALIGN4_TYPES = ("int8_t", "uint8_t", "int16_t", "uint16_t", "bool")
_IDENT_RE = re.compile(r"[A-Za-z_]\w*\Z")
_CTYPE_RE = re.compile(r"[\w\s:<>,*&]+\Z")
_BIND_TARGET_RE = re.compile(r"([A-Za-z_]\w*)\s*<([\w\s:<>,*.+\-()]*)>\Z")
_GET_BLOCK_NUM_CALL_RE = re.compile(r"AscendC\s*::\s*GetBlockNum\s*\(\s*\)")
_TASK_TYPE_LINE_RE = re.compile(r"^[ \t]*KERNEL_TASK_TYPE_DEFAULT\s*\([^;\n]*\)\s*;?[ \t]*$")
_TASK_TYPE_INLINE_RE = re.compile(r"KERNEL_TASK_TYPE_DEFAULT\s*\([^;\n]*\)\s*;?")
_TPIPE_DECL_RE = re.compile(r"^([ \t]*)(?:AscendC\s*::\s*)?TPipe\s+([A-Za-z_]\w*)\s*(?:;|=)")


class AdaptError(ValueError):
    """A rendering request that cannot produce valid C++ (bad mask, split count, identifier, type)."""


def check_identifier(name: str, what: str) -> str:
    if not _IDENT_RE.match(name):
        raise AdaptError(f"{what} {name!r} is not a C++ identifier")
    return name


def check_options(mask: int, num_splits: int, with_sys_args: str) -> None:
    if not 1 <= num_splits <= MAX_SPLITS:
        raise AdaptError(f"num_splits must be in 1..{MAX_SPLITS} (SK_BIND limit), got {num_splits}")
    if not 0 <= mask <= 7:
        raise AdaptError(f"mask must be in 0..7 (DCCI/early-start bit mask), got {mask}")
    if with_sys_args not in SYS_ARGS_MODES:
        raise AdaptError(f"with_sys_args must be one of {', '.join(SYS_ARGS_MODES)}, got {with_sys_args!r}")


def name_camel(name: str) -> str:
    """``my_op``→``MyOp``, ``addCustom``→``Addcustom`` (str.capitalize per ``_`` part, as upstream)."""
    return "".join(part.capitalize() for part in name.split("_") if part)


def needs_align4(c_type: str) -> bool:
    return any(t in c_type for t in _ALIGN4_TYPES)


def parse_bind_target(bind_target: str, entry: str) -> list[str]:
    """Template arguments of a contract ``bind_target`` like ``tk<half, 2>`` (validated, no injection)."""
    m = _BIND_TARGET_RE.match(bind_target.strip())
    if not m or m.group(1) != entry:
        raise AdaptError(f"bind_target {bind_target!r} must be '{entry}<template arguments>'")
    args: list[str] = []
    depth, cur = 0, ""
    for ch in m.group(2):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    args.append(cur.strip())
    if any(not a for a in args):
        raise AdaptError(f"bind_target {bind_target!r} has an empty template argument")
    return args


def strip_global_only_macros(body: str) -> str:
    lines = body.splitlines(keepends=True)
    out: list[str] = []
    for line in lines:
        content = line.rstrip("\n")
        if content.lstrip().startswith("//"):
            out.append(line)
            continue
        if _TASK_TYPE_LINE_RE.match(content):
            continue
        cut = _TASK_TYPE_INLINE_RE.sub("", content)
        if cut != content:
            if cut.strip() or line.endswith("\n"):
                out.append(cut + ("\n" if line.endswith("\n") else ""))
            continue
        out.append(line)
    return "".join(out)


def insert_tpipe_destroy(body: str) -> str:
    """After every ``TPipe name;`` add ``name.DestroyWithoutPipeAll();`` before its scope's ``}`` (§1.6.4)."""
    lines = body.split("\n")
    depth_before: list[int] = []
    depth = 0
    for line in lines:
        depth_before.append(depth)
        if line.lstrip().startswith("//"):
            continue
        depth = max(0, depth + line.count("{") - line.count("}"))
    inserts: dict[int, list[str]] = {}
    tail: list[str] = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("//"):
            continue
        m = _TPIPE_DECL_RE.match(line)
        if not m:
            continue
        indent, name = m.group(1), m.group(2)
        level = depth_before[i] + line.count("{") - line.count("}")
        close = next(
            (
                k
                for k in range(i + 1, len(lines))
                if depth_before[k] == level and lines[k].strip().startswith("}")
            ),
            None,
        )
        span = "\n".join(lines[i + 1 : close if close is not None else len(lines)])
        if f"{name}.DestroyWithoutPipeAll(" in span:
            continue
        call = f"{indent}{name}.DestroyWithoutPipeAll();"
        if close is None:
            tail.append(call)
        else:
            inserts.setdefault(close, []).append(call)
    out: list[str] = []
    for i, line in enumerate(lines):
        out.extend(inserts.get(i, []))
        out.append(line)
    text = "\n".join(out).rstrip("\n")
    if tail:
        text += "\n" + "\n".join(tail)
    return text


@dataclass(frozen=True)
class BlockPlan:
    """What the block for one entry needs, also the entry metadata of the manifest."""

    entry: KernelEntry
    sk_type: str
    args_struct: str
    args_type: str
    uses_sys_args: bool
    bind_symbol: str
    bind_functions: tuple[str, ...]
    text: str


def plan_block(
    entry: KernelEntry,
    *,
    mask: int = 4,
    num_splits: int = 4,
    with_sys_args: str = "auto",
    bind_target: str | None = None,
) -> BlockPlan:
    check_options(mask, num_splits, with_sys_args)
    check_identifier(entry.name, "kernel name")
    for p in entry.params:
        check_identifier(p.name, "parameter name")
        if not _CTYPE_RE.match(p.c_type):
            raise AdaptError(f"parameter {p.name} of {entry.name}: unsupported C type {p.c_type!r}")
    sk_type = map_kernel_type_for_sk(entry.qualifiers)
    base = name_camel(entry.name) + "Args"
    check_identifier(base, "Args struct name")
    tnames = [t.name for t in entry.template_params]
    targs: list[str] = []
    if entry.template_params:
        if bind_target is None:
            raise AdaptError(f"templated kernel {entry.name} needs a bind_target")
        targs = parse_bind_target(bind_target, entry.name)
        if len(targs) != len(tnames):
            raise AdaptError(
                f"bind_target {bind_target!r} gives {len(targs)} template arguments, {entry.name} has {len(tnames)}"
            )
    used = [
        t
        for t in entry.template_params
        if any(re.search(rf"\b{re.escape(t.name)}\b", p.c_type) for p in entry.params)
    ]
    args_type = base + (f"<{', '.join(t.name for t in used)}>" if used else "")
    uses_sys = with_sys_args == "always" or (with_sys_args == "auto" and entry.uses_get_block_num)
    body = entry.body
    if uses_sys:
        body = _GET_BLOCK_NUM_CALL_RE.sub("sysArgs->skNumBlocks", body)
    body = insert_tpipe_destroy(strip_global_only_macros(body))
    params: list[str] = []
    if entry.params:
        params.append(f"const {args_type} *args")
    if uses_sys:
        params.append("sk::SkSystemArgs *sysArgs")
    sk_name = f"{entry.name}_sk"
    bind_functions = tuple(
        f"{sk_name}<{', '.join([*targs, str(i)])}>" if targs else f"{sk_name}<{i}>" for i in range(num_splits)
    )
    bind_symbol = bind_target.strip() if (bind_target and targs) else (bind_target or entry.name)
    text = render(
        "sk_block.cpp.j2",
        fields=[
            {"name": p.name, "decl": p.field_type, "trailing": p.trailing, "align4": needs_align4(p.c_type)}
            for p in entry.params
        ],
        struct_template=", ".join(t.decl for t in used),
        args_struct=base,
        fn_template=", ".join([*(t.decl for t in entry.template_params), "uint32_t splitidx"]),
        sk_type=sk_type,
        sk_name=sk_name,
        sk_params=", ".join(params),
        body=body,
        bind_symbol=bind_symbol,
        mask=mask,
        bind_functions=bind_functions,
    )
    return BlockPlan(entry, sk_type, base, args_type, uses_sys, bind_symbol, bind_functions, text)


def specialise(c_type: str, entry: KernelEntry, bind_args: list[str]) -> str:
    """A parameter's C type with template names replaced by the bind target's arguments (metadata)."""
    for t, a in zip(entry.template_params, bind_args, strict=False):
        c_type = re.sub(rf"\b{re.escape(t.name)}\b", a, c_type)
    return c_type
