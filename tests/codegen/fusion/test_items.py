"""Codegen spec Part 3, SuperKernel generator items 48–60, 62–66, 68, 69 — one test per item.

The JIT items run on the 31 upstream ST cases (``sk_st_cases``) or on small variations of their child
jsons; the AOT items on the rule functions of ``skdbg.codegen.fusion.aot`` / ``constant``.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from sk_st_cases import CASES, ST_ROOT, case_ops_json, case_request

from skdbg.cli_codegen_fusion import superkernel
from skdbg.codegen.fusion import aot
from skdbg.codegen.fusion.blocks import child_blocks
from skdbg.codegen.fusion.constant import ConstQueue, ConstTask, constant_codegen
from skdbg.codegen.fusion.generate import generate_superkernel
from skdbg.codegen.fusion.model import FusionInputError, SkRequest, build_model
from skdbg.codegen.fusion.options import EarlyStart, OptionError, PreloadCode, parse_options
from skdbg.codegen.fusion.streams import collect_edges, crossing_prefix, judge_remove

DEFAULT = "test_sk_1_stream_2_ops_default_aic_only"


def _src(case: str) -> str:
    return generate_superkernel(case_request(case)).source


def _diff(a: str, b: str) -> tuple[list[str], list[str]]:
    """Lines only in ``a`` and lines only in ``b`` (ndiff, order kept)."""
    removed, added = [], []
    for line in difflib.ndiff(a.splitlines(), b.splitlines()):
        if line.startswith("- "):
            removed.append(line[2:])
        elif line.startswith("+ "):
            added.append(line[2:])
    return removed, added


def _with(
    case: str,
    *,
    options: str | None = None,
    infos: dict[int, dict[str, Any]] | None = None,
    ops: dict[int, dict[str, Any]] | None = None,
) -> SkRequest:
    """A variation of an ST case: replaced options, child json fields or op-list fields."""
    req = case_request(case)
    children = list(req.ops)
    for i, fields in (infos or {}).items():
        info = copy.deepcopy(children[i].info)
        info.update(fields)
        for key in [k for k, v in fields.items() if v is None]:
            del info[key]
        children[i] = replace(children[i], info=info)
    for i, fields in (ops or {}).items():
        children[i] = replace(children[i], **fields)
    return replace(req, ops=tuple(children), options=req.options if options is None else options)


# --- 48 options -------------------------------------------------------------------------------------


def test_item_48_options_grammar_and_errors() -> None:
    opts = parse_options("compile-options=-g:split-mode=1:")
    assert opts.raw == {"compile-options": "-g", "split-mode": "1"}
    assert (opts.compile_options, opts.split_mode) == (("-g",), 1)
    assert parse_options('"early-start=1"').early_start is EarlyStart.V2
    assert parse_options("early_start=1", convert_underscore=True).early_start is EarlyStart.V2
    with pytest.raises(OptionError, match="early_start option is not supported"):
        parse_options("early_start=1")
    defaults = parse_options("")
    assert (defaults.split_mode, defaults.early_start, defaults.preload, defaults.func_align) == (
        4,
        EarlyStart.V2,
        PreloadCode.ADVANCE_STEP,
        512,
    )
    for bad, needle in [
        ("nonsense=1", "nonsense option is not supported"),
        ("profiling=1:profiling=0", "more than once"),
        ("split-mode=0", r"\(0, 64\]"),
        ("split-mode=65", r"\(0, 64\]"),
        ("split-mode=x", "integer"),
        ("func-align=3", r"\[0, 2, 4, 8"),
        ("func-align=1", r"\[0, 2, 4, 8"),
        ("preload-code=pre-func", "max, none or per-func"),
        ("profiling=", "empty key or value"),
    ]:
        with pytest.raises(OptionError, match=needle):
            parse_options(bad)
    ignored = parse_options("profiling=1:justaword:")
    assert ignored.profiling and ignored.warnings and "justaword" in ignored.warnings[0]


# --- 49 kernel type / block dim -----------------------------------------------------------------------


def _aic_aiv_request(aic_blocks: int, aiv_blocks: int, options: str = "compile-options=-g:") -> SkRequest:
    return _with(
        DEFAULT,
        options=options,
        infos={
            0: {"sub_operator_kernel_type": "KERNEL_TYPE_AIC_ONLY", "blockDim": aic_blocks},
            1: {"sub_operator_kernel_type": "KERNEL_TYPE_AIV_ONLY", "blockDim": aiv_blocks},
        },
    )


def test_item_49_fused_kernel_type_and_block_dim() -> None:
    for case in CASES:
        golden = json.loads((ST_ROOT / case / "expect_compiled_json.json").read_text())
        got = generate_superkernel(case_request(case)).compiled_json
        assert (got["taskRation"], got["blockDim"]) == (golden["taskRation"], golden["blockDim"]), case
    big_cube = build_model(_aic_aiv_request(32, 1))
    assert (big_cube.kernel_type.name, big_cube.block_num) == ("MIX_AIC_1_1", 32)
    big_vec = build_model(_aic_aiv_request(1, 32))
    assert (big_vec.kernel_type.name, big_vec.block_num) == ("MIX_AIC_1_2", 16)
    dyn = generate_superkernel(case_request("test_sk_2_stream_2_ops_dynamic_send_recv_default_aiv_only"))
    assert (dyn.compiled_json["taskRation"], dyn.compiled_json["blockDim"]) == ("0:1", 48)


# --- 50 parameter offsets ----------------------------------------------------------------------------


def test_item_50_param_offsets() -> None:
    def args(case: str) -> list[tuple[Any, ...]]:
        cj = generate_superkernel(case_request(case)).compiled_json
        return [tuple(k["arg_list"].values()) for k in cj["SuperkernelInfo"]["kernelList"]["aicore"]]

    assert args("test_sk_2_stream_2_ops_default_send_recv_aic_only") == [(1, 4, None), (5, None, 9)]
    assert args("test_sk_2_stream_2_ops_dynamic_send_recv_default_aic_only") == [(1, 7, None), (8, None, 11)]
    for case in CASES:
        golden = json.loads((ST_ROOT / case / "expect_compiled_json.json").read_text())
        want = [k["arg_list"] for k in golden["SuperkernelInfo"]["kernelList"]["aicore"]]
        got = generate_superkernel(case_request(case)).compiled_json["SuperkernelInfo"]["kernelList"][
            "aicore"
        ]
        assert [k["arg_list"] for k in got] == want, case


# --- 51 debug core numbers ---------------------------------------------------------------------------


def test_item_51_debug_aic_aiv_num() -> None:
    fits = build_model(_aic_aiv_request(2, 4, "debug-aic-num=4:debug-aiv-num=8"))
    assert (fits.kernel_type.name, fits.block_num) == ("MIX_AIC_1_2", 4)
    with pytest.raises(FusionInputError, match="Should be 1:0 or 0:1 or 1:1 or 1:2"):
        build_model(_aic_aiv_request(2, 4, "debug-aic-num=4:debug-aiv-num=6"))
    with pytest.raises(FusionInputError, match="In super kernel mix 1:2 case, option debug-aic-num 1"):
        build_model(_aic_aiv_request(2, 4, "debug-aic-num=1:debug-aiv-num=2"))
    with pytest.raises(FusionInputError, match="In super kernel aic case, option debug-aic-num 8"):
        build_model(_with(DEFAULT, options="debug-aic-num=8"))
    with pytest.raises(FusionInputError, match="exceeds platform max aiv num 48"):
        build_model(_aic_aiv_request(2, 4, "debug-aiv-num=64"))
    only_aic = build_model(_with(DEFAULT, options="debug-aic-num=24", infos={0: {"blockDim": 8}}))
    assert (only_aic.kernel_type.name, only_aic.block_num) == ("MIX_AIC_1_0", 24)


# --- 52 goldens ----------------------------------------------------------------------------------------


def test_item_52_all_goldens_line_by_line() -> None:
    equal = [
        c
        for c in CASES
        if _src(c).splitlines() == (ST_ROOT / c / "expect_sk_code.cc").read_text().splitlines()
    ]
    assert len(equal) == 31
    dynamic = (
        ST_ROOT / "test_sk_2_stream_2_ops_dynamic_send_recv_default_aic_only" / "expect_sk_code.cc"
    ).read_text()
    assert any(line.endswith(" ") for line in dynamic.splitlines())  # trailing spaces are part of the golden


# --- 53 compile flags ------------------------------------------------------------------------------------

EARLY = [
    "-D__ASCENDC_ENABLE_SET_NEXT_TASK_START",
    "-D__ASCENDC_ENABLE_WAIT_PRE_TASK_END",
    "-D__ASCENDC_SUPERKERNEL_EARLY_START_V2",
]


def _flags(case: str) -> list[str]:
    return list(generate_superkernel(case_request(case)).flags)


def test_item_53_compile_flags() -> None:
    assert _flags(DEFAULT) == [*EARLY, "-DASCENDC_DUMP=0", "-g"]
    assert _flags("test_sk_1_stream_2_ops_feed_sync_all_1_aic_only") == [
        *EARLY,
        "-D__ASCENDC_SUPERKERNEL_AUTO_SYNC_ALL__",
        "-DASCENDC_DUMP=0",
        "-g",
    ]
    assert _flags("test_sk_1_stream_2_ops_early_start_0_aic_only") == ["-DASCENDC_DUMP=0", "-g"]
    two_stream = [c for c in CASES if generate_superkernel(case_request(c)).model.two_stream]
    assert len(two_stream) == 19  # the intersect case pairs its events, so it stays single-stream
    for case in two_stream:
        assert not set(EARLY) & set(_flags(case)), case
    assert _flags("test_sk_2_stream_2_ops_dynamic_send_recv_default_aic_only") == [
        "-D__SUPER_KERNEL_DYNAMIC_BLOCK_NUM__",
        "-DASCENDC_DUMP",
        "-g",
    ]
    extra = generate_superkernel(_with(DEFAULT, options="compile-options=-g,-O2")).flags
    assert extra[-2:] == ("-g", "-O2")


# --- 54 option effects ---------------------------------------------------------------------------------------


def test_item_54_option_diffs_against_default() -> None:
    base = _src(DEFAULT)
    removed, added = _diff(base, _src("test_sk_1_stream_2_ops_func_align_256_aic_only"))
    assert [r.replace("512", "256") for r in removed] == added and len(added) == 1
    _, added = _diff(base, _src("test_sk_1_stream_2_ops_early_start_0_aic_only"))
    assert "    // reason2: inter op barrier when EarlyStartDisable" in added
    assert "    ffts_cross_core_sync(PIPE_FIX, AscendC::GetffstMsg(0x0, AscendC::SYNC_AIC_FLAG));" in added
    removed, added = _diff(base, _src("test_sk_1_stream_2_ops_preload_code_max_aic_only"))
    assert added == ["    AscendC::PreLoad(8);"] and all("preload(" not in line for line in added)
    assert not any(
        "preload((const void *)" in line
        for line in _src("test_sk_1_stream_2_ops_preload_code_max_aic_only").splitlines()
    )
    _, added = _diff(base, _src("test_sk_1_stream_2_ops_debug_dcci_all_1_aic_only"))
    assert (
        added.count("    // op end debug dcci all.") == 2 and added.count("    pipe_barrier(PIPE_ALL);") == 2
    )
    _, added = _diff(base, _src("test_sk_1_stream_2_ops_debug_sync_all_1_aic_only"))
    assert added.count("    // op end debug sync all.") == 2
    split1 = _src("test_sk_1_stream_2_ops_split_mode_1_aic_only")
    assert "coreid" not in split1 and "__gm__ struct OpSystemRunCfg g_opSystemRunCfg = {0};" in split1
    assert "#if (defined(__DAV_CUBE__) && __NPU_ARCH__ == 2201)" in split1.splitlines()[3]
    assert _src("test_sk_1_stream_2_ops_json_split_none_aic_only") == base
    none_cj = generate_superkernel(
        case_request("test_sk_1_stream_2_ops_json_split_none_aic_only")
    ).compiled_json
    assert none_cj["SuperkernelInfo"]["kernelList"]["aicore"][0]["split_mode"] is None
    no_align = _src_of(_with(DEFAULT, options="compile-options=-g:func-align=0"))
    assert 'extern "C"  __global__  __aicore__ void auto_gen_' in no_align


def _src_of(req: SkRequest) -> str:
    return generate_superkernel(req).source


# --- 55 early start config ---------------------------------------------------------------------------------


def test_item_55_early_start_config_value() -> None:
    assert "g_super_kernel_early_start_config = 0;" in _src(DEFAULT)
    assert "AscendC::WaitPreTaskEndImpl<0>();" in _src(DEFAULT)
    aiv_then_mix = _with(
        DEFAULT,
        infos={
            0: {"sub_operator_kernel_type": "KERNEL_TYPE_AIV_ONLY"},
            1: {
                "sub_operator_kernel_type": "KERNEL_TYPE_MIX_AIC_1_1",
                "sub_operator_kernel_name": {
                    "dav-c220-cube": {"func_name": "pows_mix_aic"},
                    "dav-c220-vec": {"func_name": "pows_mix_aiv"},
                },
            },
        },
    )
    src = _src_of(aiv_then_mix)
    assert "g_super_kernel_early_start_config = 6;" in src and "AscendC::WaitPreTaskEndImpl<6>();" in src
    with pytest.raises(FusionInputError, match="KERNEL_TYPE_CUBE_ONLY"):
        build_model(_with(DEFAULT, infos={1: {"sub_operator_kernel_type": "KERNEL_TYPE_CUBE_ONLY"}}))


# --- 56 errors -----------------------------------------------------------------------------------------------


def test_item_56_refused_inputs() -> None:
    cases: list[tuple[SkRequest, str]] = [
        (
            _with(DEFAULT, ops={0: {"recv_event_list": (7,)}}),
            "first op of super kernel must not have any recv event",
        ),
        (
            _with(DEFAULT, ops={1: {"send_event_list": (7,)}}),
            "last op of super kernel must not have any send event",
        ),
        (
            _with(DEFAULT, ops={0: {"send_event_list": (7,)}, 1: {"recv_event_list": (7,)}}),
            "self send/receive pair within 1 real stream",
        ),
        (
            _with(DEFAULT, ops={1: {"stream_id": 2}}),
            "do not support more than 2 real stream, use 'options=\"stream-fusion=1\"'",
        ),
        (
            _with(DEFAULT, ops={1: {"stream_id": 2, "send_event_list": (5,), "recv_event_list": (5,)}}),
            "exists send-recv event pair within 1 op",
        ),
        (
            _with(DEFAULT, options="split-mode=2"),
            "split_mode: 4, donot match with super kernel split_mode: 2",
        ),
        (
            _with(DEFAULT, options="early-start=0", infos={0: {"sub_operator_early_start_set_flag": True}}),
            "donot match with super kernel early-start mode: False",
        ),
        (
            _with(
                "test_sk_2_stream_2_ops_dynamic_send_recv_default_aic_only",
                infos={0: {"sub_operator_early_start_wait_flag": True}},
            ),
            "is dynamic op, do not support early start",
        ),
    ]
    for req, needle in cases:
        with pytest.raises(FusionInputError, match=re.escape(needle)):
            generate_superkernel(req)
    # child jsons the generator could not use are refused up front, naming the missing field
    missing: list[tuple[SkRequest, str]] = [
        (
            _with(DEFAULT, infos={1: {"sub_operator_kernel_type": "KERNEL_TYPE_MIX_AIC_1_1"}}),
            "KERNEL_TYPE_MIX_AIC_1_1 needs sub_operator_kernel_name.dav-c220-cube.func_name",
        ),
        (_with(DEFAULT, infos={0: {"blockDim": None}}), "read sub op json file failed"),
        (
            _with(
                "test_sk_2_stream_2_ops_dynamic_send_recv_default_aic_only",
                infos={0: {"sub_operator_kernel_name": {"AiCore": {"func_name": "f"}}}},
            ),
            "dynamic child needs sub_operator_kernel_name.dynamic_func_names",
        ),
    ]
    for req, needle in missing:
        with pytest.raises(FusionInputError, match=re.escape(needle)):
            generate_superkernel(req)


# --- 57 two-stream code ------------------------------------------------------------------------------------


def test_item_57_two_stream_structure() -> None:
    aic_only = _src("test_sk_2_stream_2_ops_default_aic_only")
    assert "auto_gen_te_superkernel_2_stream_2_ops_kernel_aic(void)" in aic_only
    assert "_kernel_aiv(void)" not in aic_only
    mix = _src("test_sk_2_stream_2_ops_default_aic_1_1")
    assert "_kernel_aic(void)" in mix and "_kernel_aiv(void)" in mix
    cub_to_vec = _src("test_sk_2_stream_4_ops_remove_crossed_cub_to_vec")
    assert (
        "// sync all C->C kernel_name:is_inf__kernel0, send_info:{'is_inf__kernel0_2': 'cub:cub'}"
        in cub_to_vec
    )
    assert "// sync all C->C kernel_name:is_inf__kernel0, send_info:{}" in _src(
        "test_sk_2_stream_2_ops_default_send_aic_only"
    )
    send_recv = _src("test_sk_2_stream_2_ops_default_send_recv_aic_only")
    assert "// kernel=is_inf__kernel0, ev=100, param_offset=4" in send_recv
    assert "NotifyFunc<true>(param_base[4]);" in send_recv and "WaitFunc<true>(param_base[9]);" in send_recv
    assert "*(reinterpret_cast<__gm__ uint64_t*>(param_base[9])) = 0;" in send_recv
    # events paired inside the SK (sent earlier, received later on the other stream) produce no code
    inner = _with("test_sk_2_stream_2_ops_default_send_recv_aic_only", ops={0: {"send_event_list": (101,)}})
    inner_src = _src_of(inner)
    assert (
        "NotifyFunc<true>(param_base["
        not in inner_src.split("auto_gen_te_superkernel_2_stream_2_ops_kernel(void)")[0].split(
            "WaitFunc(GM_ADDR"
        )[1]
    )
    assert "ev=101" not in inner_src


# --- 58 crossed-line removal --------------------------------------------------------------------------


def test_item_58_crossed_line_removal() -> None:
    result = generate_superkernel(case_request("test_sk_2_stream_4_ops_remove_crossed_cub_to_vec"))
    inf0, pows1, inf2, pows3 = result.model.children
    assert "pows__kernel0_3" not in inf0.send_info  # is_inf#0 -> pows#3 removed (crossed by #2 -> #1)
    assert inf2.send_info.get("pows__kernel0_1") == "cub:vec"
    assert pows1.recv_info.get("is_inf__kernel0_2") == "cub:vec"
    src = result.source
    rule31 = src.index(
        "// Rule 3.1 : sync all c2v must be insert when sendinfo has c2v, kernel_name:is_inf__kernel0"
    )
    rule32 = src.index(
        "// Rule 3.2 : sync all c2v must be insert when recvinfo has c2v, kernel_name:pows__kernel0"
    )
    assert rule31 > 0 and rule32 > 0
    golden = (ST_ROOT / "test_sk_2_stream_4_ops_remove_crossed_cub_to_vec" / "expect_sk_code.cc").read_text()
    assert src == golden


# --- 59 profiling ------------------------------------------------------------------------------------------


def test_item_59_profiling_records() -> None:
    src = _src("test_sk_1_stream_2_ops_profiling_1_aic_only")
    assert "RecordProfiling(0, 0, true);" in src and "RecordProfiling(0, 0, false);" in src
    assert "RecordProfiling(1, 0x8, true);" in src and "RecordProfiling(2, 0x8, false);" in src
    assert "GM_ADDR profilingPtr = param_base[8];" in src  # 3 + 4 params, pointer at #params + 1
    assert "uint32_t taskId = *((__gm__ uint32_t*)(get_para_base() + 8 * 9));" in src
    dyn = _src("test_sk_2_stream_2_ops_dynamic_send_recv_default_aic_only")
    assert "RecordProfiling(100, 0x4, true);" in dyn and "RecordProfiling(101, 12, false);" in dyn
    assert "RecordProfiling(" not in _src(DEFAULT)


# --- 60 meta trailer ---------------------------------------------------------------------------------------


def _trailer(src: str) -> str:
    return src[src.index("#if TILING_KEY_VAR == 0UL") :]


def test_item_60_meta_trailer() -> None:
    one_zero = _trailer(_src(DEFAULT))
    assert (
        one_zero.count("_mix_aic_section") == 1
        and "K_TYPE_MIX_AIC_MAIN}" in one_zero
        and "1, 0} };" in one_zero
    )
    zero_one = _trailer(_src("test_sk_2_stream_2_ops_default_aiv_1_0"))
    assert "_mix_aiv_section" in zero_one and "K_TYPE_MIX_AIV_MAIN}" in zero_one and "0, 1} };" in zero_one
    for case, ratio in (
        ("test_sk_2_stream_2_ops_default_aic_1_1", "1, 1"),
        ("test_sk_2_stream_4_ops_remove_crossed_vec_to_cub", "1, 2"),
    ):
        t = _trailer(_src(case))
        assert t.count("K_TYPE_MIX_AIC_MAIN}") == 2 and t.count(f"{ratio}}} }};") == 2
        assert "defined(__DAV_CUBE__)" in t and "defined(__DAV_VEC__)" in t
    assert _src(DEFAULT).endswith("#endif\n#endif\n")


# --- 62–66, 68, 69 AOT -----------------------------------------------------------------------------------


def test_item_62_aot_kernel_type_choice() -> None:
    F, K = aot.AotFunc, aot.AotKernelType
    assert aot.choose_entry([F(K.AIC_ONLY, 8), F(K.AIC_ONLY, 20)]) == aot.AotEntry(K.AIC_ONLY, 20, 0)
    assert aot.choose_entry([F(K.AIV_ONLY, 40)]).kind is K.AIV_ONLY
    mix = aot.choose_entry([F(K.AIC_ONLY, 24), F(K.AIV_ONLY, 20)])
    assert (mix.kind, mix.num_blocks, mix.aiv_blocks) == (K.MIX_AIC_1_1, 24, 24)
    wide = aot.choose_entry([F(K.AIC_ONLY, 8), F(K.AIV_ONLY, 40)])
    assert (wide.kind, wide.num_blocks, wide.aiv_blocks) == (K.MIX_AIC_1_2, 20, 40)
    both_1_2 = aot.choose_entry([F(K.MIX_AIC_1_2, 4)])
    assert (both_1_2.kind, both_1_2.num_blocks) == (K.MIX_AIC_1_2, 4)
    assert aot.choose_entry([F(K.AIC_ONLY, 4)], per_op_max_core=True).kind is K.MIX_AIC_1_2
    assert aot.choose_entry([F(K.MIX_AIC_1_1, 8), F(K.AIV_ONLY, 40)]).doubled_aiv_1_1


def test_item_63_aot_entry_name() -> None:
    K = aot.AotKernelType
    name = aot.entry_function_name(K.MIX_AIC_1_1, early_start=True, op_trace=True, debug=True)
    assert name == "sk_entry_mix11_debug_op_trace_early_start"
    every = aot.entry_function_name(
        K.AIV_ONLY, simt=True, early_start=True, op_trace=True, dump_profiling=True, debug=True
    )
    assert every == "sk_entry_aiv_debug_dump_profiling_op_trace_early_start_simt"
    assert [aot.entry_function_name(k) for k in (K.AIC_ONLY, K.AIV_ONLY, K.MIX_AIC_1_1, K.MIX_AIC_1_2)] == [
        "sk_entry_aic",
        "sk_entry_aiv",
        "sk_entry_mix11",
        "sk_entry_mix12",
    ]
    with pytest.raises(ValueError, match="DEFAULT"):
        aot.entry_function_name(K.DEFAULT)


def test_item_64_aot_sk_function_name() -> None:
    assert (
        aot.sk_function_name(7, "op_trace", ["Add_1", "Mul_2", "SwiGlu_3"])
        == "sk_7_op_trace_start_Add_1_end_SwiGlu_3"
    )
    assert aot.sk_function_name(3, "scope_a", []) == "sk_3_no_kernel_scope_scope_a"


def test_item_69_constant_codegen_source() -> None:
    aic = ConstQueue(
        "AIC",
        (
            ConstTask(0, "TYPE_PRELOAD", 2, (0x1000,)),
            ConstTask(1, "TYPE_FUNC", 24, (0x1000, 0x2000, 0x3000, 0x4000)),
        ),
    )
    result = constant_codegen(5, aic, ConstQueue("AIV"))
    src = result.source
    assert (result.kernel_type, result.aic, result.aiv) == ("AIC_ONLY", 1, 0)
    assert "struct TaskQue_AIC" in src
    assert [f"sk_constant_entry_impl_split{k}(void)" in src for k in range(1, 5)] == [True] * 4
    assert (
        'extern "C" __global__ __attribute__((aligned(512))) __mix__(1, 0) void sk_constant_entry_5(void)'
        in src
    )
    assert "switch (get_coreid() & 0x3)" in src
    assert "((SkFunc)(0x3000))(&sysArgs);" in src  # split 3 calls its own entry
    assert src.count("pipe_barrier(PIPE_ALL);") == 4
    with pytest.raises(ValueError, match="1..4 split entries"):
        ConstTask(0, "TYPE_FUNC", 1, ())


# --- CLI ------------------------------------------------------------------------------------------------------


def _ops_folder(tmp_path: Path, case: str) -> Path:
    folder = tmp_path / case
    (folder / "inputs").mkdir(parents=True)
    for child in (ST_ROOT / case / "inputs").iterdir():
        (folder / "inputs" / child.name).write_bytes(child.read_bytes())
    (folder / "ops.json").write_text(json.dumps(case_ops_json(case)))
    return folder / "ops.json"


def test_cli_superkernel_writes_source_json_and_flags(tmp_path: Path) -> None:
    case = "test_sk_1_stream_2_ops_feed_sync_all_1_aic_only"
    ops = _ops_folder(tmp_path, case)
    result = CliRunner().invoke(superkernel, [str(ops), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        *EARLY,
        "-D__ASCENDC_SUPERKERNEL_AUTO_SYNC_ALL__",
        "-DASCENDC_DUMP=0",
        "-g",
    ]
    out = tmp_path / "out"
    assert (out / "te_superkernel_1_stream_2_ops_kernel.cpp").read_text() == (
        ST_ROOT / case / "expect_sk_code.cc"
    ).read_text()
    written = json.loads((out / "te_superkernel_1_stream_2_ops.json").read_text())
    assert written["workspace"] == {"num": 1, "size": [16384], "type": [0]}


def test_cli_superkernel_bad_input_exits_3(tmp_path: Path) -> None:
    ops = _ops_folder(tmp_path, DEFAULT)
    doc = json.loads(ops.read_text())
    doc["options"] = "split-mode=99"
    ops.write_text(json.dumps(doc))
    result = CliRunner().invoke(superkernel, [str(ops), "-o", str(tmp_path / "out")])
    assert result.exit_code == 3 and "split-mode=99" in result.output
    doc["ops"][0]["json"] = "inputs/missing.json"
    doc["options"] = ""
    ops.write_text(json.dumps(doc))
    result = CliRunner().invoke(superkernel, [str(ops), "-o", str(tmp_path / "out")])
    assert result.exit_code == 3 and "missing.json" in result.output
    doc["ops"][0]["json"] = "inputs/is_inf.json"
    doc["kernel_name"] = "../escape"
    ops.write_text(json.dumps(doc))
    result = CliRunner().invoke(superkernel, [str(ops), "-o", str(tmp_path / "out")])
    assert result.exit_code == 3 and "expected a C identifier" in result.output
    ops.write_text("{not json")
    result = CliRunner().invoke(superkernel, [str(ops), "-o", str(tmp_path / "out")])
    assert result.exit_code == 3 and ":1: not valid JSON" in result.output
    assert not (tmp_path / "out").exists()


# --- the linear rewrites of two quadratic upstream steps give upstream's answers ------------------------


def _naive_inner(children: list[Any]) -> set[int]:
    """Upstream: every op pair i < j, events sent by i and received by j."""
    inner: set[int] = set()
    for i, early in enumerate(children):
        for late in children[i + 1 :]:
            inner |= set(early.send_events) & set(late.recv_events)
    return inner


def _naive_judge(g: Any, send: str, recv: str, c2v: bool) -> bool:
    """Upstream ``judge_remove``: scan every earlier receiver for a later sender."""
    label = "cub:vec" if c2v else "vec:cub"
    send_idx, recv_idx = g.idx(send, not c2v), g.idx(recv, c2v)
    for op in (g.vec if c2v else g.cub)[0:recv_idx][::-1]:
        for key, value in op.recv_info.items():
            if (
                label in value
                and g.idx(op.multi_stream_name, c2v) < recv_idx
                and g.idx(key, not c2v) > send_idx
            ):
                return True
    return False


_KINDS = ("KERNEL_TYPE_AIC_ONLY", "KERNEL_TYPE_AIV_ONLY", "KERNEL_TYPE_MIX_AIC_1_1")


@st.composite
def _two_stream_requests(draw: st.DrawFn) -> SkRequest:
    n = draw(st.integers(min_value=2, max_value=12))
    streams = [0, 1] + [draw(st.integers(0, 1)) for _ in range(n - 2)]
    kinds = [draw(st.sampled_from(_KINDS)) for _ in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if streams[i] != streams[j]]
    chosen = draw(st.lists(st.sampled_from(pairs), max_size=8, unique=True)) if pairs else []
    sends: dict[int, list[int]] = {}
    recvs: dict[int, list[int]] = {}
    for ev, (i, j) in enumerate(chosen):
        sends.setdefault(i, []).append(100 + ev)
        recvs.setdefault(j, []).append(100 + ev)
    base = case_request(DEFAULT).ops[0]
    ops = []
    for i in range(n):
        info = copy.deepcopy(base.info)
        info["sub_operator_kernel_type"] = kinds[i]
        info["kernelName"] = f"k{i % 3}__kernel0"
        info["sub_operator_kernel_name"] = {
            "AiCore": {"func_name": f"k{i % 3}_middle"},
            "dav-c220-cube": {"func_name": f"k{i % 3}_mix_aic"},
            "dav-c220-vec": {"func_name": f"k{i % 3}_mix_aiv"},
        }
        ops.append(
            replace(
                base,
                info=info,
                stream_id=streams[i],
                send_event_list=tuple(sends.get(i, [])),
                recv_event_list=tuple(recvs.get(i, [])),
            )
        )
    return SkRequest("prop", tuple(ops), options="stream-fusion=1")


@settings(max_examples=150, deadline=None)
@given(_two_stream_requests())
def test_linear_rewrites_match_upstream_scans(req: SkRequest) -> None:
    model = build_model(req)
    assert model.inner_events == _naive_inner(model.children)
    g = collect_edges(model.children, [child_blocks(model, c) for c in model.children])
    for ops, c2v in ((g.cub, True), (g.vec, False)):
        prefix = crossing_prefix(g, c2v)
        for op in ops:
            for key in op.send_info:
                fast = judge_remove(g, prefix, op.multi_stream_name, key, c2v)
                assert fast == _naive_judge(g, op.multi_stream_name, key, c2v)
