"""sk_device_args.log (artifacts.md §3.9, row 59)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from textlines import iter_meta_text

from skdbg.parsers.device_args import NODE_ID_OUT_OF_RANGE, decode_debug_options, parse_device_args
from skdbg.scenebuilder.skmeta import DfxSpec, NodeSpec, SkSpec, TaskSpec, device_args_lines, write_lines

E = (0x124080B04A00, 0x124080B07A00, 0x124080B0AA00, 0x124080B0DA00)


def _sk(scope: int = 3, **kw: object) -> SkSpec:
    sk = SkSpec(
        scope,
        "decoder.layer.0.mlp",
        [
            NodeSpec(18, func_name="QuantBatchMatmulV3_a", kernel_type="AIC_ONLY"),
            NodeSpec(21, func_name="Cast_b"),
        ],
        aic_tasks=[
            TaskSpec("PRELOAD", 0, 18, "AIC_ONLY", 24, E, 0x10, 0, 0x12C100400000),
            TaskSpec("FUNC", 0, 18, "AIC_ONLY", 24, E, 0x12C100400000, 0x20, 0),
            TaskSpec("SYNC", 0, 18, "AIC_ONLY", 24, (), 0x3, 0x2, 0x1),
        ],
        aiv_tasks=[
            TaskSpec("EVENT_WAIT", 1, 19, "AIV_ONLY", 48, (), 0x12C100500000, 0, 1),
            TaskSpec("FUNC", 2, 21, "AIV_ONLY", 48, E[:1], 0x12C100600000, 0x11, 0),
            TaskSpec("EVENT_NOTIFY", 3, NODE_ID_OUT_OF_RANGE, "AIV_ONLY", 48, (), 0x12C100700000, 0, 0),
        ],
        dfx=[
            DfxSpec(0x5000, 0x6000, 0x3000, 0, 24, 24, 0, E, (0, 0, 0, 0)),
            DfxSpec(0, 0, 0, 0, 0, 0, 0),
            DfxSpec(0x5100, 0x6100, 0, 0x2000, 48, 0, 48, (0, 0, 0, 0), (E[0], 0, 0, 0)),
            DfxSpec(0, 0, 0, 0, 0, 0, 0),
        ],
    )
    for k, v in kw.items():
        setattr(sk, k, v)
    return sk


def test_row59_current_format_two_scopes(tmp_path: Path) -> None:
    lines = device_args_lines([_sk(3), _sk(4)])
    assert lines[2] == ""  # the header format ends with \n: an empty physical line follows
    res = parse_device_args(write_lines(tmp_path / "sk_device_args.log", lines))
    assert res.unrecognized == [] and res.gaps == []
    assert [(b.scope_id, b.occurrence) for b in res.blocks] == [(3, 0), (4, 0)]
    b = res.blocks[0]
    assert b.sk_func_name == "sk_3_decoder.layer.0.mlp_start_QuantBatchMatmulV3_a_end_Cast_b"
    assert b.header is not None
    h = b.header
    assert (
        h.aic_off,
        h.aiv_off,
        h.counter_off,
        h.ws_off,
        h.dfx_off,
        h.event_config_off,
        h.node_cnt,
        h.total_size,
    ) == (
        64,
        1088,
        2112,
        None,
        2624,
        4672,
        4,
        8192,
    )
    aic = b.queue("AIC")
    assert aic is not None and (aic.cap, aic.tasks_declared, len(aic.tasks)) == (64, 3, 3)
    pre, func, sync = aic.tasks
    assert (pre.type, pre.idx, pre.node_id, pre.args, pre.extra_info) == (
        "PRELOAD",
        0,
        18,
        0x10,
        0x12C100400000,
    )
    assert func.entries == E and func.debug_option_names == ("DCCI_AFTER_CHILD",)
    assert (sync.sync_kind, sync.debug_option_names, sync.entries) == (
        "SET_AIC_TO_AIV",
        ("DEBUG_SYNC_ALL",),
        (),
    )
    aiv = b.queue("AIV")
    assert aiv is not None
    wait, f2, notify = aiv.tasks
    assert (wait.type, wait.wait_flag, f2.entries, f2.related_type) == (
        "EVENT_WAIT",
        "EQ",
        (E[0],),
        "AIV_ONLY",
    )
    assert (notify.node_id_out_of_range, notify.node_id, notify.node_id_raw) == (
        True,
        None,
        NODE_ID_OUT_OF_RANGE,
    )
    # the only direct task index -> nodeId mapping
    assert res.task_index_to_node_id(3) == {0: 18, 1: 19, 2: 21, 3: None}
    assert res.task_index_to_node_id(b.sk_func_name) == {0: 18, 1: 19, 2: 21, 3: None}
    assert res.task_index_to_node_id(99) == {}
    d0, _, d2, _ = b.dfx
    assert (d0.bin, d0.ori, d0.aic_size, d0.num_blocks, d0.cube_num, d0.entry_aic) == (
        0x5000,
        0x6000,
        0x3000,
        24,
        24,
        E,
    )
    assert d2.entry_aiv == (E[0], 0, 0, 0)
    df = res.to_frame()
    ids = df[df["scope_id"] == 3]["node_id"]
    assert len(df) == 12 and list(ids[:5]) == [18, 18, 18, 19, 21] and ids.isna().tolist()[5]
    assert list(df["node_id_out_of_range"][:6]) == [False] * 5 + [True]
    assert list(res.dfx_frame()["index"]) == [0, 1, 2, 3, 0, 1, 2, 3]


def test_row59_legacy_header_and_task_lines(tmp_path: Path) -> None:
    legacy_tasks = [TaskSpec("FUNC", 0, None, None, 24, E[:2], 0x1000, 0, None)]
    sk = _sk(
        5, ws_off=3000, aic_tasks=legacy_tasks, aiv_tasks=[], dfx=[DfxSpec(1, 2, 3, 4, None, entry_aic=E)]
    )
    res = parse_device_args(write_lines(tmp_path / "a.log", device_args_lines([sk], dfx_one_per_line=True)))
    assert res.unrecognized == [] and res.gaps == []
    b = res.blocks[0]
    assert b.header is not None and b.header.ws_off == 3000
    t = b.tasks[0]
    assert (t.node_id_raw, t.related_type, t.extra_info, t.entries) == (None, None, None, E[:2])
    # without nodeId the map is empty: it must come from elsewhere
    assert res.task_index_to_node_id(5) == {}
    d = b.dfx[0]
    assert (d.num_blocks, d.cube_num, d.vec_num, d.entry_aic, d.entry_aiv) == (
        None,
        None,
        None,
        E,
        (0, 0, 0, 0),
    )


def test_row59_dfx_one_per_line_equals_four_per_line(tmp_path: Path) -> None:
    a = parse_device_args(write_lines(tmp_path / "a.log", device_args_lines([_sk()])))
    b = parse_device_args(write_lines(tmp_path / "b.log", device_args_lines([_sk()], dfx_one_per_line=True)))
    assert [(d.entry_aic, d.entry_aiv, d.num_blocks) for d in a.blocks[0].dfx] == [
        (d.entry_aic, d.entry_aiv, d.num_blocks) for d in b.blocks[0].dfx
    ]


def test_row59_rerun_appended_latest_block_wins(tmp_path: Path) -> None:
    p = tmp_path / "a.log"
    write_lines(p, device_args_lines([_sk(3)]))
    newer = _sk(3)
    newer.aiv_tasks[1].node_id = 77
    write_lines(p, device_args_lines([newer]), append=True)
    res = parse_device_args(p)
    assert [b.occurrence for b in res.blocks] == [0, 1]
    assert res.task_index_to_node_id(3)[2] == 77


def test_row59_count_gaps_and_stray_lines() -> None:
    lines = device_args_lines([_sk()])
    # drop one task line and its entries
    cut = [x for x in lines if "[2] type=SYNC" not in x]
    text = "\n".join(["   entry[0]=0x1", *cut, "garbage"]) + "\n"
    res = parse_device_args(iter_meta_text(text, "d.log"), file="d.log")
    assert [u.context for u in res.unrecognized] == ["sk_device_args:outside_block", "sk_device_args:line"]
    assert [g.kind for g in res.gaps] == ["task_count_mismatch"]


def test_row59_debug_option_decoding() -> None:
    assert decode_debug_options(0) == ()
    assert decode_debug_options(0x3F) == (
        "DISABLE_DCCI",
        "DEBUG_SYNC_ALL",
        "DCCI_BEFORE_CHILD",
        "DCCI_AFTER_CHILD_REQUESTED",
        "CROSS_CORE_SYNC_CHECK",
        "DCCI_AFTER_CHILD",
    )
    assert decode_debug_options(0x120) == ("DCCI_AFTER_CHILD", "BIT_0x100")


@settings(max_examples=100)
@given(st.lists(st.text(max_size=100), max_size=8))
def test_row59_arbitrary_text_never_raises(lines: list[str]) -> None:
    text = (
        "Dumping device args for function: sk_1_a_start_b_end_c\nAIC TaskQue: cap=1, tasks=1\n"
        + "\n".join(lines)
    )
    parse_device_args(iter_meta_text(text, "d.log"), file="d.log")
