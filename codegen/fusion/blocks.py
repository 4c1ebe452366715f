"""Per-child code blocks of the JIT SK source: declarations, call/preload blocks, early start, events.

Why separate from the file assembly: these blocks depend only on one child (and the options), and
the assembly (single- or two-stream) picks and orders them.  The shapes follow codegen spec §2.5;
whitespace matters because the goldens are compared line by line (item 52).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skdbg.codegen.fusion.model import Child, KernelType, SkModel
from skdbg.codegen.fusion.options import EarlyStart
from skdbg.codegen.fusion.render import render

_INDENT_RE = re.compile(r"^(?=.+)", re.MULTILINE)


def ind(code: str, indent: str = "    ") -> str:
    """Indent every non-empty line (upstream's indentation rule, blank lines stay empty)."""
    return _INDENT_RE.sub(indent, code)


DCCI_ALL = "dcci((__gm__ uint64_t*)0, cache_line_t::ENTIRE_DATA_CACHE, dcci_dst_t::CACHELINE_OUT);\n\n"


@dataclass
class ChildBlocks:
    """Every text block one child contributes."""

    declare: str = ""
    dynamic_impl: str = ""
    call: str = ""
    call_with_syncall: str = ""
    preload: str = ""
    es_set: str = ""
    es_wait: str = ""
    switch_call: str = ""
    notify: str = ""
    notify_aic: str = ""
    notify_aiv: str = ""
    tmp_notify_aic: str = ""
    wait: str = ""
    sub_kernel_names: tuple[str, ...] = ()


def _dcci_before(c: Child) -> str:
    if not c.dcci_disable and c.dcci_before:
        return "// option: dcci-before-kernel-start\n" + DCCI_ALL
    return ""


def _dcci_after(c: Child) -> str:
    if not c.dcci_disable and c.dcci_after:
        return "// option: dcci-after-kernel-end\n" + DCCI_ALL
    return ""


def call_func(c: Child, lines: list[str], core: str, block_fn: str, preload: bool = False) -> str:
    """``if <core> { if (<block_fn>() < N) { <split ladder> } }`` around calls or preloads."""
    out = f"if {core} {{\n"
    if not preload:
        out += ind(_dcci_before(c), "  ")
    out += f"  if ({block_fn}() < {c.block_num}) {{\n"
    n = len(lines)
    if n > 1:
        out += "    uint8_t coreid = (uint8_t)get_coreid();\n"
        out += f"    if ((coreid % {n}) == 0) {{\n" + ind(lines[0], "      ")
        for i in range(1, n - 1):
            out += f"    }} else if ((coreid % {n}) == {i}) {{\n" + ind(lines[i], "      ")
        out += "    } else {\n" + ind(lines[n - 1], "      ") + "    }\n\n"
    else:
        out += ind(lines[0], "      ")
    out += "  }\n\n"
    if not preload:
        out += ind(_dcci_after(c), "  ")
    return out + "}\n\n"


def _call_func_with_syncall(c: Child, lines: list[str], core: str, block_fn: str) -> str:
    end = "AscendC::SuperKernelAutoSyncAllEndImpl();\n"
    out = f"if {core} {{\n" + ind(_dcci_before(c), "  ") + f"  if ({block_fn}() < {c.block_num}) {{\n"
    n = len(lines)
    if n > 1:
        out += "    uint8_t coreid = (uint8_t)get_coreid();\n"
        out += f"    if ((coreid % {n}) == 0) {{\n" + ind(lines[0], "      ") + ind(end, "      ")
        for i in range(1, n - 1):
            out += (
                f"    }} else if ((coreid % {n}) == {i}) {{\n" + ind(lines[i], "      ") + ind(end, "      ")
            )
        out += "    } else {\n" + ind(lines[n - 1], "      ") + ind(end, "      ") + "    }\n\n"
    else:
        out += ind(lines[0], "      ")
    out += "  } " + ind(_dcci_after(c), "  ")
    out += "else {\n    AscendC::SuperKernelAutoSyncAllComplementImpl();\n  }\n"
    return out + "}\n\n"


def _variants(name: str, split: int) -> list[str]:
    return [name] + [f"{name}_split{j}" for j in range(1, split)]


def _declare(name: str, split: int) -> str:
    return "".join(
        f'extern "C"  __aicore__ void {v}(uint64_t args_offset);\n\n' for v in _variants(name, split)
    )


def _es_block(c: Child, core: str, cond: str, set_flag: bool, mode: EarlyStart) -> str:
    out = f"if {core} {{\n    if ({cond}) {{\n"
    if not set_flag:
        out += "        AscendC::WaitPreTaskEndImpl<__placehoder__earlay_config__>();\n"
    elif mode is EarlyStart.V1:
        out += "        AscendC::SetNextTaskStart();\n"
    elif c.kernel_type.device == "aiv" and core == "ASCEND_IS_AIC":
        out += "        // AIV only, no complement early start set flag.\n"
    elif c.kernel_type.device == "aic" and core == "ASCEND_IS_AIV":
        out += "        // AIC only, no complement early start set flag.\n"
    else:
        out += "        AscendC::SetNextTaskStart();\n"
    return out + "    }\n}\n\n"


def _es_blocks(b: ChildBlocks, c: Child, core: str, cond: str, mode: EarlyStart) -> None:
    b.es_set += _es_block(c, core, cond if c.early_start_set else "true", True, mode)
    b.es_wait += _es_block(c, core, cond if c.early_start_wait else "true", False, mode)


def _arch_keys(m: SkModel) -> tuple[str, str, str]:
    return "AiCore", f"dav-{m.soc.chip}-cube", f"dav-{m.soc.chip}-vec"


def _static_blocks(m: SkModel, c: Child, b: ChildBlocks) -> None:
    split = m.options.split_mode
    core_key, cube_key, vec_key = _arch_keys(m)
    mode = m.options.early_start
    kind = c.kernel_type
    if kind in (KernelType.AIV_ONLY, KernelType.AIC_ONLY, KernelType.MIX_AIV_1_0, KernelType.MIX_AIC_1_0):
        key = {
            KernelType.AIV_ONLY: core_key,
            KernelType.AIC_ONLY: core_key,
            KernelType.MIX_AIV_1_0: vec_key,
            KernelType.MIX_AIC_1_0: cube_key,
        }[kind]
        aiv = kind.device == "aiv"
        core, block_fn = (
            ("ASCEND_IS_AIV", "AscendC::GetBlockIdx") if aiv else ("ASCEND_IS_AIC", "get_block_idx")
        )
        parts = [(str(c.called[key]["func_name"]), core, block_fn)]
    else:
        parts = [
            (str(c.called[cube_key]["func_name"]), "ASCEND_IS_AIC", "get_block_idx"),
            (str(c.called[vec_key]["func_name"]), "ASCEND_IS_AIV", "get_block_idx"),
        ]
    for name, core, block_fn in parts:
        calls = [f"{v}({c.param_offset});\n" for v in _variants(name, split)]
        pre = [f"preload((const void *){v}, {c.pages});\n" for v in _variants(name, split)]
        b.sub_kernel_names += (name,)
        b.declare += _declare(name, split)
        b.call += call_func(c, calls, core, block_fn)
        b.call_with_syncall += _call_func_with_syncall(c, calls, core, block_fn)
        b.preload += call_func(c, pre, core, block_fn, preload=True)
    if len(parts) == 2:
        _es_blocks(b, c, "ASCEND_IS_AIC", f"get_block_idx() >= {c.block_num}", mode)
        _es_blocks(b, c, "ASCEND_IS_AIV", f"get_block_idx() >= {c.block_num}", mode)
    elif kind.device == "aiv":
        _es_blocks(b, c, "ASCEND_IS_AIV", f"AscendC::GetBlockIdx() >= {c.block_num}", mode)
        _es_blocks(b, c, "ASCEND_IS_AIC", "true", mode)
    else:
        _es_blocks(b, c, "ASCEND_IS_AIC", f"get_block_idx() >= {c.block_num}", mode)
        _es_blocks(b, c, "ASCEND_IS_AIV", "true", mode)


def _search(blocks: list[tuple[str, str]]) -> str:
    """Binary-search ``if`` ladder over tiling keys (sorted numerically)."""
    if len(blocks) == 1:
        return f"if (*tilingKeyAddr == {blocks[0][1]}) {{\n{ind(blocks[0][0])}\n}}"
    if len(blocks) == 2:
        return f"if (*tilingKeyAddr == {blocks[0][1]}) {{\n{ind(blocks[0][0])}\n}} else {{\n{ind(blocks[1][0])}\n}}"
    half = len(blocks) // 2
    left, right = _search(blocks[:half]), _search(blocks[half:])
    return f"if (*tilingKeyAddr < {blocks[half][1]}) {{\n{ind(left)}\n}} else {{\n{ind(right)}\n}}"


def _select(var: str, name: str, split: int) -> str:
    out = f"{var} = (uint64_t)({name});"
    for i in range(1, split):
        out += f"\n    {var}_split{i} = (uint64_t)({name}_split{i});"
    return out


def _dyn_split_call(func: str, split: int) -> str:
    if split <= 1:
        return f"{func}(args_offset);"
    out = f"if ((coreid % {split}) == 0) {{\n \n                {func}(args_offset);"
    for i in range(1, split - 1):
        out += f"\n            }} else if ((coreid % {split}) == {i}) {{\n            {func}_split{i}(args_offset);"
    return (
        out
        + f"\n            }} else {{\n \n \n                {func}_split{split - 1}(args_offset);\n            }}"
    )


def _with_splits(text: str, split: int) -> str:
    return text + "".join(f", {text}_split{i}" for i in range(1, split))


def _dynamic_blocks(m: SkModel, c: Child, b: ChildBlocks) -> None:
    split = m.options.split_mode
    core_key, cube_key, vec_key = _arch_keys(m)
    cases: list[tuple[str, str]] = []
    for key, entry in c.called["dynamic_func_names"].items():
        kind = KernelType.from_json(str(entry["kernel_type"]))
        tail = f"dy_block_num = ((uint64_t){kind.value}) << 32 | (*blockNumAddr);\n"
        if kind in (KernelType.MIX_AIC_1_1, KernelType.MIX_AIC_1_2):
            vec, cube = str(entry[vec_key]), str(entry[cube_key])
            body = (
                f"\n{_select('aiv_func_addr', vec, split)}\n{_select('aic_func_addr', cube, split)}\n{tail}"
            )
            names = [vec, cube]
        else:
            key_name = {
                KernelType.AIV_ONLY: core_key,
                KernelType.AIC_ONLY: core_key,
                KernelType.MIX_AIV_1_0: vec_key,
                KernelType.MIX_AIC_1_0: cube_key,
            }[kind]
            name = str(entry[key_name])
            var = "aiv_func_addr" if kind.device == "aiv" else "aic_func_addr"
            body = f"\n{_select(var, name, split)}\n{tail}"
            names = [name]
        for name in names:
            b.sub_kernel_names += (name,)
            b.declare += _declare(name, split)
        cases.append((body, str(key)))
    cases.sort(key=lambda x: int(x[1]))
    base = c.param_offset + len(c.params)
    aiv_args, aic_args = _with_splits("aiv_func_addr", split), _with_splits("aic_func_addr", split)
    b.switch_call = (
        f"switch_func_of_{c.kernel_name}(param_base[{base}], param_base[{base + 1}], param_base[{base + 2}], "
        f"{aiv_args}, {aic_args}, dy_blockNum);\n"
    )
    b.dynamic_impl = render(
        "dynamic_impl.cpp.j2",
        k=c.kernel_name,
        i=c.index,
        aiv_refs=_with_splits("uint64_t& aiv_func_addr", split),
        aic_refs=_with_splits("uint64_t& aic_func_addr", split),
        switch_code=_search(cases),
        aiv_ptrs=_with_splits("const uint64_t dy_aiv_func_ptr", split),
        aic_ptrs=_with_splits("const uint64_t dy_aic_func_ptr", split),
        sk_block_num=m.block_num,
        split_mode=split,
        call_aic=_dyn_split_call("aic_ptr", split),
        call_aiv=_dyn_split_call("aiv_ptr", split),
    )
    call = ""
    if m.two_stream:
        call += ind("AscendC::SyncAll<false>(); // reason: double stream need syncall to wait switch func\n")
    call += _dcci_before(c)
    call += f"call_func_of_{c.kernel_name}({c.param_offset}, {aiv_args}, {aic_args}, dy_blockNum);\n"
    call += _dcci_after(c)
    call += "if ASCEND_IS_AIV {\n" if c.kernel_type.device == "aiv" else "if ASCEND_IS_AIC {\n"
    call += (
        "\n    if (AscendC::GetBlockIdx() == 0) {\n"
        f"        __gm__ volatile uint64_t* lockAddr = reinterpret_cast<__gm__ uint64_t*>(param_base[{base + 2}]);\n"
        "        *lockAddr = 0;\n        dcci(lockAddr, 0, 2);\n    }\n}\n"
    )
    b.call = call
    # upstream never builds a feed-sync-all variant for dynamic children: the call is left out then
    b.call_with_syncall = ""
    mode = m.options.early_start
    _es_blocks(b, c, "ASCEND_IS_AIV", "true", mode)
    _es_blocks(b, c, "ASCEND_IS_AIC", "true", mode)


def _profiling_event(m: SkModel, ev: int, kind: str, end: bool) -> str:
    if not m.options.profiling:
        return ""
    return f"RecordProfiling({ev}, {kind}, {'false' if end else 'true'});\n"


def _event_block(
    m: SkModel, c: Child, events: list[int], base: int, aic: bool, notify: bool
) -> tuple[str, bool]:
    func, kind = ("NotifyFunc", "0x4") if notify else ("WaitFunc", "12")
    out = "if ASCEND_IS_AIC {\n" if aic else "if ASCEND_IS_AIV {\n"
    found = False
    for k, ev in enumerate(events):
        if ev in m.inner_events:
            continue
        out += f"    // kernel={c.kernel_name}, ev={ev}, param_offset={base + k}\n"
        out += _profiling_event(m, ev, kind, False)
        out += f"    {func}<{'true' if aic else 'false'}>(param_base[{base + k}]);\n"
        out += _profiling_event(m, ev, kind, True)
        found = True
    return out + "}\n", found


def _event_blocks(m: SkModel, c: Child, b: ChildBlocks) -> None:
    aic_type = c.kernel_type.device == "aic"
    if c.send_events:
        aic_text, aic_found = _event_block(m, c, c.send_events, c.notify_param_offset, True, True)
        aiv_text, aiv_found = _event_block(m, c, c.send_events, c.notify_param_offset, False, True)
        aic_text = aic_text if aic_found else ""
        aiv_text = aiv_text if aiv_found else ""
        if aic_type:
            b.notify, b.notify_aic = aic_text, aic_text
        else:
            b.notify, b.notify_aiv, b.tmp_notify_aic = aiv_text, aiv_text, aic_text
    if c.recv_events:
        text, found = _event_block(m, c, c.recv_events, c.wait_param_offset, aic_type, False)
        b.wait = text if found else ""


def child_blocks(m: SkModel, c: Child) -> ChildBlocks:
    """All blocks of one child (static or dynamic), events included."""
    b = ChildBlocks()
    if c.dynamic:
        _dynamic_blocks(m, c, b)
    else:
        _static_blocks(m, c, b)
    _event_blocks(m, c, b)
    return b
