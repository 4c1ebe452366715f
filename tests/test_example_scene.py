"""The bundled example scene ``examples/scenes/aiv-fault-add-custom`` (skdbg/scenebuilder/example.py).

Why: the committed scene is the first thing a user runs skdbg on; it must never drift from its builder
(byte-identical regeneration) and every artifact must tell the same story as the §1.7 incident when read
back through the real parsers (Evidence), including the offline PC → child resolution of §4.7.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skdbg.parsers.binfiles import load_image_table
from skdbg.parsers.cond import encode_cond
from skdbg.parsers.plog_line import parse_plog_ts
from skdbg.scene import Evidence, load_evidence
from skdbg.scenebuilder import example

COMMITTED = Path(__file__).resolve().parents[1] / "examples" / "scenes" / example.SCENE_NAME
MODEL_DIR = f"sk_meta/{example.PID}/model_{example.MODEL_ID}"
ADD_CUSTOM_ID = 121


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def ev() -> Evidence:
    return load_evidence(COMMITTED)


def test_committed_scene_is_byte_identical_to_a_fresh_build(tmp_path: Path) -> None:
    """Regenerating the scene reproduces the committed files exactly (no drift, deterministic output)."""
    fresh = _files(example.build_example_scene(tmp_path / "scene"))
    committed = _files(COMMITTED)
    assert sorted(fresh) == sorted(committed)
    for name, data in fresh.items():
        assert committed[name] == data, name


def test_build_is_deterministic_and_main_replaces_scene(tmp_path: Path) -> None:
    dest = tmp_path / "s"
    assert example.main([str(dest)]) == 0
    (dest / "stale.txt").write_text("x")
    assert example.main([str(dest)]) == 0
    assert not (dest / "stale.txt").exists()
    assert _files(dest) == _files(COMMITTED)
    other = tmp_path / "not-a-scene"
    other.mkdir()
    (other / "keep.txt").write_text("x")
    assert example.main([str(other)]) == 2
    assert (other / "keep.txt").exists()


def test_layout_and_size() -> None:
    files = _files(COMMITTED)
    assert {
        "run.json",
        "env/check_environment.json",
        "source_sites.json",
        "src/model.py",
        "log/plog/plog-48213_20260610140058123.log",
        f"{MODEL_DIR}/sk_fused_nodes.log",
        f"{MODEL_DIR}/sk_node_detail.log",
        f"{MODEL_DIR}/sk_scope_split.log",
        f"{MODEL_DIR}/sk_fusion_fail_reasons.log",
        f"{MODEL_DIR}/sk_device_args.log",
        f"{MODEL_DIR}/super_kernel.log",
        f"{MODEL_DIR}/sk_task_queue.json",
        f"{MODEL_DIR}/bin_files/sk_entry_0x124080A03000.o",
        f"{MODEL_DIR}/bin_files/QuantBatchMatmulV3_8ab2c4f1_1_0x124080B04800.o",
        f"{MODEL_DIR}/bin_files/add_custom_0x124080C01000.o",
        f"{MODEL_DIR}/bin_files/Cast_9f3e21_2_0x124080D01000.o",
    } == set(files)
    elf_total = sum(len(v) for k, v in files.items() if k.endswith(".o"))
    assert elf_total < 64 * 1024
    # two copies of the 75-core handler dump (plog + super_kernel.log) dominate; stays well under 400 KB
    assert sum(len(v) for v in files.values()) < 400 * 1024


def test_one_d5_incident_core30_matches_node1_entry2(ev: Evidence) -> None:
    """§1.7: one incident, dialect D5, op_trace, core 30 AIV in node[1] entry[2], COND 0x30102."""
    inc = ev.frame("incidents")
    assert len(inc) == 1
    row = inc.iloc[0]
    assert row["dialect"] == "D5"
    assert row["entry"] == example.ENTRY
    assert bool(row["op_trace"]) is True
    assert row["pid"] == example.PID
    assert row["model_id"] == example.MODEL_ID
    assert row["sk_scope_id"] == example.SCOPE_ID
    assert row["node_cnt"] == 3
    cores = ev.frame("cores")
    assert len(cores) == 1
    c = cores.iloc[0]
    assert (c["core_id"], c["core_type"], bool(c["matched"])) == (30, "AIV", True)
    assert (c["node"], c["entry"]) == (1, 2)
    assert c["entry"] == 30 % 4
    assert c["start_pc"] == 0x124080A03C00
    assert c["origin_name"] == "add_custom"
    assert c["func_size"] == 0x1A2C
    assert c["entry_addr"] <= c["current_pc"] < c["end_addr"] == c["entry_addr"] + 0x1A2C
    assert c["cond_value"] == 0x30102 == encode_cond(state=2, index=1, scope_id=3, model_idx=0)
    assert (c["cond_state"], c["cond_index"], c["cond_scope_id"]) == (2, 1, 3)
    assert (c["trace_state"], c["trace_op_id"]) == (2, 1)


def test_runtime_fault_lines_agree_with_handler(ev: Evidence) -> None:
    """§1.5: the runtime's core report, kernel-fault line and ErrCode name the same core, PCs and entry."""
    faults = ev.frame("plog-faults")
    c = ev.frame("cores").iloc[0]
    rep = faults[faults["type"] == "CoreErrorReport"].iloc[0]
    assert rep["core_id"] == 30
    assert (rep["pc_start"], rep["pc_current"]) == (c["start_pc"], c["current_pc"])
    assert rep["para_base"] == example.ARGS_DEV
    kf = faults[faults["type"] == "KernelFaultLine"].iloc[0]
    assert kf["kernel_name"] == example.ENTRY
    assert (kf["streamId"], kf["task_id"], kf["device_id"]) == (example.STREAM_ID, 1, example.DEVICE)
    err = faults[faults["type"] == "ApiErrCode"].iloc[0]
    assert err["err_code"] == 507035


def test_fused_nodes_list_the_three_children(ev: Evidence) -> None:
    fn = ev.frame("fused-nodes")
    got = list(zip(fn["nodeId"], fn["streamId"], fn["funcName"], fn["kernelType"], strict=True))
    assert got == [
        (120, 2, "QuantBatchMatmulV3_8ab2c4f1_1", "AIC_ONLY"),
        (ADD_CUSTOM_ID, 2, "add_custom", "AIV_ONLY"),
        (122, 2, "Cast_9f3e21_2", "AIV_ONLY"),
    ]
    assert set(fn["scopeId"]) == {3}
    assert fn["skFuncName"].iloc[0] == (
        "sk_3_decoder.layer.0.mlp_start_QuantBatchMatmulV3_8ab2c4f1_1_end_Cast_9f3e21_2"
    )


def test_device_args_map_task_index_1_to_add_custom(ev: Evidence) -> None:
    """§3.9: node index 1 (AIV FUNC task [1]) → nodeId 121; FUNC entries equal the handler's DfxInfo."""
    da = ev.frame("device-args")
    aiv1 = da[(da["queue"] == "AIV") & (da["position"] == 1)].iloc[0]
    assert (aiv1["type"], aiv1["idx"], aiv1["nodeId"]) == ("FUNC", 1, ADD_CUSTOM_ID)
    assert set(da[da["idx"] == 1]["nodeId"]) == {ADD_CUSTOM_ID}
    models = [m for m in ev.model_evidence if m.device_args is not None]
    assert models[0].device_args is not None
    assert models[0].device_args.task_index_to_node_id(3) == {0: 120, 1: ADD_CUSTOM_ID, 2: 122}
    c = ev.frame("cores").iloc[0]
    assert aiv1["entries"][2] == c["entry_addr"]
    dfx = ev.frame("dfx")
    assert len(dfx) == 3


def test_images_and_pc_resolution_name_add_custom_split2(ev: Evidence) -> None:
    """§4.6/§4.7: entryAiv[j] = binDevAddr + sknlFunc[j]; CurrentPC → add_custom's split-2 SK variant."""
    images = ev.frame("images")
    assert sorted(Path(f).name for f in images["file"]) == [
        "Cast_9f3e21_2_0x124080D01000.o",
        "QuantBatchMatmulV3_8ab2c4f1_1_0x124080B04800.o",
        "add_custom_0x124080C01000.o",
        "sk_entry_0x124080A03000.o",
    ]
    c = ev.frame("cores").iloc[0]
    table = load_image_table(COMMITTED / MODEL_DIR)
    loc = table.locate(int(c["current_pc"]))
    assert loc.image is not None and Path(loc.image.path).name == "add_custom_0x124080C01000.o"
    assert loc.symbol == "_Z13add_custom_skILj2EEvPK13AddCustomArgsPN2sk12SkSystemArgsE" == c["sk_symbol"]
    assert loc.split_index == 2
    assert loc.child_global == "add_custom"
    assert loc.in_entry is False
    assert loc.sym_size == c["func_size"]
    assert loc.sym_start is not None and 0x124080C01000 + loc.sym_start == c["entry_addr"]
    start = table.locate(int(c["start_pc"]))
    assert start.in_entry is True
    assert start.symbol == example.ENTRY and start.offset_in_symbol == 0


def test_build_facts_name_binaries_and_split_symbols(ev: Evidence) -> None:
    facts = ev.frame("build-facts")
    assert len(facts) > 0
    sk_log = (COMMITTED / MODEL_DIR / "super_kernel.log").read_text()
    assert "funcName=add_custom, binDevAddr=0x124080c01000," in sk_log
    assert (
        "split[2] AIV symbol=_Z13add_custom_skILj2EEvPK13AddCustomArgsPN2sk12SkSystemArgsE, size=0x1a2c, bind=WEAK"
        in sk_log
    )
    assert "Dumped SK entry binary: sk_meta/48213/model_48_1/bin_files/sk_entry_0x124080A03000.o" in sk_log
    assert "[PrintMatchedNodeBasicInfo] [Core 30] Found in node[1], entry[2]" in sk_log


def test_task_queue_json_agrees_with_device_args(ev: Evidence) -> None:
    tq = json.loads((COMMITTED / MODEL_DIR / "sk_task_queue.json").read_text())
    assert tq["modelId"] == example.MODEL_ID
    (scope,) = tq["scopes"]
    assert scope["scopeId"] == 3
    aiv = scope["taskQueues"]["aiv"]["taskQue"]["taskInfos"]
    assert [(t["nodeIndex"], t["type"]) for t in aiv] == [(0, "SYNC"), (1, "FUNC"), (2, "FUNC"), (2, "SYNC")]
    c = ev.frame("cores").iloc[0]
    assert int(aiv[1]["entries"][2], 16) == c["entry_addr"]
    assert int(aiv[1]["args"], 16) == 0x12C100412000


def test_run_json_brackets_plog_and_source_sites_match_model() -> None:
    run = json.loads((COMMITTED / "run.json").read_text())
    assert (run["pid"], run["rank"], run["device"], run["failure_phase"]) == (48213, 3, 0, "device_fault")
    assert run["candidate"]["scope_names"] == ["decoder.layer.0.mlp"]
    plog = (COMMITTED / "log/plog/plog-48213_20260610140058123.log").read_text().splitlines()
    first = parse_plog_ts(plog[0].split("):", 1)[1].split(" ", 1)[0])
    last = parse_plog_ts(plog[-1].split("):", 1)[1].split(" ", 1)[0])
    assert first is not None and last is not None
    assert run["start"] <= first.isoformat(timespec="milliseconds") <= last.isoformat(timespec="milliseconds")
    assert last.isoformat(timespec="milliseconds") <= run["end"]
    sites = json.loads((COMMITTED / "source_sites.json").read_text())
    model = (COMMITTED / "src/model.py").read_text().splitlines()
    assert sites == {"120": 17, "121": 18, "122": 19}
    assert "npu_quant_matmul(" in model[sites["120"] - 1]
    assert "add_custom(a, bias)" in model[sites["121"] - 1]
    assert "b.to(torch.float32)" in model[sites["122"] - 1]
    assert 'super_kernel_scope_begin("decoder.layer.0.mlp")' in model[sites["120"] - 2]
    assert 'super_kernel_scope_end("decoder.layer.0.mlp")' in model[sites["122"]]


def test_no_unreadable_gap_and_nothing_unrecognized(ev: Evidence) -> None:
    assert [g for g in ev.gaps if g.kind == "unreadable"] == []
    assert ev.gaps == []
    assert ev.unrecognized == []
    assert ev.frame("unrecognized").empty
