"""Fault localisation (triage.md §3.1–§3.3, §3.2 SK-entry confirmation, F5/F6 instance, X3/X6, T5).

Scenes come from the general scene builder; rule cases post-edit a built scene where the builder has no
knob (a renamed model dir, an edited plog field) so each test changes exactly one fact.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from triage_support import TWO_STREAM_CHILDREN, TWO_STREAM_CORE, build_two_stream

from skdbg.parsers.cond import encode_cond
from skdbg.scenebuilder.scene import BuiltScene, FaultCore, Kernel, SkDef
from skdbg.triage.context import open_context
from skdbg.triage.localize import localize
from skdbg.triage.stages import Localization

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "scenes" / "aiv-fault-add-custom"

CHILDREN = TWO_STREAM_CHILDREN
CORE = TWO_STREAM_CORE


def build(tmp_path: Path, **kw: Any) -> BuiltScene:
    return build_two_stream(tmp_path, **kw)


def loc_of(root: Path, **kw: Any) -> Localization:
    return localize(open_context(root, **kw))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new))


# ------------------------------------------------------------------------------------------ example


def test_example_scene_localises_to_model_48_1_scope_3() -> None:
    loc = loc_of(EXAMPLE)
    f = loc.fault
    assert loc.pid == 48213
    assert (f.kind, f.phase, f.dialect, f.model, f.scope_id, f.node_cnt) == (
        "sk",
        "device_fault",
        "D5",
        "48_1",
        3,
        3,
    )
    assert f.entry == "sk_entry_mix11_op_trace" and f.op_trace is True
    assert (
        loc.instance is not None and loc.instance.model_label == "model_48_1" and loc.instance.scope_id == 3
    )
    assert loc.instance_rule == "model_id" and loc.dialect_known
    assert loc.fault_time is not None and loc.fault_time.strftime("%H:%M:%S") == "14:03:21"
    assert f.sk_name is not None and f.sk_name.startswith("sk_3_")
    # evidence cites the runtime fault line, the handler anchor and the model/scope line, each once
    excerpts = [e.excerpt for e in loc.evidence]
    assert any("fault kernel_name=sk_entry_mix11_op_trace" in x for x in excerpts)
    assert any("Exception is from superkernel function" in x for x in excerpts)
    assert any("SkScopeId=3" in x for x in excerpts)
    assert all(e.file and e.line for e in loc.evidence)
    assert len({(e.file, e.line) for e in loc.evidence}) == len(loc.evidence)


# ------------------------------------------------------------------------------------------ dialects / instance rules


@pytest.mark.parametrize(
    ("dialect", "rule", "resolution"),
    [
        ("D0", "origin_names", "name_sequence"),
        ("D1", "origin_names", "name_sequence"),
        ("D2", "scope_id", "header"),
        ("D3", "scope_id", "header"),
        ("D4", "scope_id", "header"),
        ("D5", "model_id", "header"),
    ],
)
def test_every_dialect_resolves_the_instance(
    tmp_path: Path, dialect: str, rule: str, resolution: str
) -> None:
    b = build(tmp_path, dialect=dialect)
    loc = loc_of(b.root)
    assert loc.fault.kind == "sk" and loc.fault.dialect == dialect and loc.dialect_known
    # issue 11 item 9: scope id and model are filled whenever the SK is known, however it was resolved
    assert (loc.fault.scope_id, loc.fault.model, loc.fault.scope_resolution) == (7, "48_1", resolution)
    assert loc.instance_rule == rule
    assert loc.instance is not None and loc.instance.scope_id == 7
    assert loc.fault.node_cnt == 5


def test_d5_model_id_picks_exactly_its_model_dir_among_copies(tmp_path: Path) -> None:
    b = build(tmp_path, extra_models=["48_2"])
    loc = loc_of(b.root)
    assert loc.instance_rule == "model_id"
    assert loc.instance is not None and loc.instance.model_label == "model_48_1"


def test_f5_same_scope_in_two_model_dirs_without_model_id_is_ambiguous(tmp_path: Path) -> None:
    b = build(tmp_path, dialect="D3", extra_models=["48_2"])
    loc = loc_of(b.root)
    assert loc.instance is None and loc.instance_rule == "ambiguous"
    assert sorted(i.model_label for i in loc.instance_candidates) == ["model_48_1", "model_48_2"]


def test_d0_origin_names_choose_the_sk_with_that_child_list(tmp_path: Path) -> None:
    b = build(tmp_path, dialect="D0", extra_sks=[SkDef(9, "other.scope", [Kernel("Foo_1", "AIV_ONLY")])])
    loc = loc_of(b.root)
    assert loc.instance_rule == "origin_names"
    assert loc.instance is not None and loc.instance.scope_id == 7


def test_no_dfx_block_and_one_sk_is_single_sk(tmp_path: Path) -> None:
    b = build(tmp_path, dfx=False)
    loc = loc_of(b.root)
    assert loc.fault.kind == "sk" and loc.instance_rule == "single_sk"
    assert loc.instance is not None and loc.instance.scope_id == 7


def test_no_dfx_block_and_two_sks_is_ambiguous(tmp_path: Path) -> None:
    b = build(tmp_path, dfx=False, extra_sks=[SkDef(9, "other.scope", [Kernel("Foo_1", "AIV_ONLY")])])
    loc = loc_of(b.root)
    assert loc.instance is None and loc.instance_rule == "ambiguous"
    assert {i.scope_id for i in loc.instance_candidates} == {7, 9}


def test_f5_model_id_naming_an_absent_dir_resolves_nothing(tmp_path: Path) -> None:
    b = build(tmp_path)
    b.model_dir.rename(b.model_dir.parent / "model_48_9")
    loc = loc_of(b.root)
    assert loc.fault.model == "48_1" and loc.instance is None and loc.instance_rule == "none"
    assert any(n.startswith("F5") for n in loc.notes)


def test_f6_scope_id_absent_from_the_model_dir(tmp_path: Path) -> None:
    b = build(tmp_path)
    edit(b.plog, "SkScopeId=7", "SkScopeId=8")
    loc = loc_of(b.root)
    assert loc.fault.scope_id == 8 and loc.instance is None
    assert any(n.startswith("F6") for n in loc.notes)


def test_f3_other_pids_metadata_is_never_substituted(tmp_path: Path) -> None:
    b = build(tmp_path, sk_meta_pid=51000)
    loc = loc_of(b.root)
    assert loc.pid == 48213 and loc.instance is None and loc.instance_candidates == []
    assert any(n.startswith("F3") and "51000" in n for n in loc.notes)


# ------------------------------------------------------------------------------------------ scope id order, T5


def test_t5_cond_scope_disagreeing_with_the_printed_one_is_not_used(tmp_path: Path) -> None:
    cond = encode_cond(2, 1, 9, 0)  # scope 9 in COND, printed SkScopeId stays 7
    b = build(
        tmp_path,
        dialect="D4",
        cores=[FaultCore(3, "AIC", pc=("child", 1), state=("OP_LAUNCHED", 1), cond=cond)],
    )
    loc = loc_of(b.root)
    assert loc.fault.scope_id == 7
    assert loc.instance is not None and loc.instance.scope_id == 7
    assert any(n.startswith("T5") for n in loc.notes)


def test_printed_skscopeid_wins_over_the_header(tmp_path: Path) -> None:
    b = build(tmp_path, dialect="D5", extra_sks=[SkDef(9, "other.scope", [Kernel("Foo_1", "AIV_ONLY")])])
    edit(b.plog, "skScopeId=7", "skScopeId=9")
    loc = loc_of(b.root)
    assert loc.fault.scope_id == 7
    assert any("SkHeaderInfo skScopeId=9" in n for n in loc.notes)


def test_header_scope_id_is_used_when_no_core_prints_one(tmp_path: Path) -> None:
    b = build(tmp_path, dialect="D5")
    edit(b.plog, "ModelIdIdx=0, ModelId=48_1, SkScopeId=7", "ModelIdIdx=0")
    loc = loc_of(b.root)
    # the header line still carries modelId=48_1 and skScopeId=7
    assert loc.fault.scope_id == 7 and loc.fault.model == "48_1"
    assert loc.instance is not None and loc.instance_rule == "model_id"


# ------------------------------------------------------------------------------------------ fault families


def test_x3_non_sk_fault_with_a_child_like_name_is_never_an_sk_child(tmp_path: Path) -> None:
    b = build(tmp_path, fault="non_sk", non_sk_kernel="QuantMatmul_5b21")
    loc = loc_of(b.root)
    assert loc.fault.kind == "non_sk" and loc.fault.kernel_name == "QuantMatmul_5b21"
    assert loc.instance is None and loc.incident is None and loc.fault.entry is None
    assert any(n.startswith("X3") for n in loc.notes)
    assert loc.fault.phase == "device_fault"


def test_x6_ge_mode_sk_shows_the_ge_chain(tmp_path: Path) -> None:
    b = build(tmp_path, fault="ge_sk")
    loc = loc_of(b.root)
    assert loc.fault.kind == "ge_sk" and loc.fault.kernel_name is not None
    assert loc.fault.kernel_name.startswith("te_superkernel_")
    assert loc.instance is None
    x6 = [e for e in loc.evidence if e.level == "X6"]
    assert any("origin_op_name" in e.excerpt for e in x6)
    assert any("symbol name=" in e.excerpt for e in x6)
    assert loc.fault.sk_name is not None and loc.fault.sk_name.startswith("sk_")


def test_sk_constant_entry_is_its_own_note_and_not_attributable(tmp_path: Path) -> None:
    b = build(tmp_path, fault="non_sk", non_sk_kernel="sk_constant_entry_3f2a")
    loc = loc_of(b.root)
    assert loc.fault.kind == "non_sk" and loc.instance is None
    assert any(n.startswith("sk_constant_entry") for n in loc.notes)


def test_hang_without_any_fault_line_is_kind_none(tmp_path: Path) -> None:
    b = build(tmp_path, fault="none", failure_phase="hang")
    loc = loc_of(b.root)
    assert loc.fault.kind == "none" and loc.fault.phase == "hang"
    assert loc.runtime_fault is None and loc.incident is None and loc.fault_time is None
    assert loc.fault.dialect is None and not loc.dialect_known


def test_handler_anchor_alone_makes_an_sk_fault(tmp_path: Path) -> None:
    b = build(tmp_path, handler="anchor_only")
    loc = loc_of(b.root)
    assert loc.fault.kind == "sk" and loc.incident is not None
    assert loc.fault.entry == "sk_entry_mix11"


def test_runtime_line_alone_makes_an_sk_fault(tmp_path: Path) -> None:
    b = build(tmp_path, handler="none")
    loc = loc_of(b.root)
    assert loc.fault.kind == "sk" and loc.incident is None and loc.fault.dialect is None
    assert loc.fault.entry == "sk_entry_mix11" and loc.fault.op_trace is False
    assert loc.instance_rule == "single_sk"


# ------------------------------------------------------------------------------------------ entry fields


def test_op_trace_comes_from_the_entry_and_a_disagreeing_handler_field_is_noted(tmp_path: Path) -> None:
    b = build(tmp_path, op_trace=True, debug_options={"debug_op_exec_trace": 1})
    edit(b.plog, "op_trace=true", "op_trace=false")
    loc = loc_of(b.root)
    assert loc.fault.entry == "sk_entry_mix11_op_trace" and loc.fault.op_trace is True
    assert any("op_trace=false" in n for n in loc.notes)


def test_unknown_dialect_is_recorded(tmp_path: Path) -> None:
    b = build(tmp_path, handler="anchor_only")
    loc = loc_of(b.root)
    assert loc.fault.dialect == "unknown" and not loc.dialect_known


def test_device_id_comes_from_the_runtime_fault_line(tmp_path: Path) -> None:
    b = build(tmp_path, device=2)
    assert loc_of(b.root).fault.device_id == 2
    edit(b.plog, "device_id=2,", "device_id=5,")
    loc = loc_of(b.root)
    assert loc.fault.device_id == 5


# ------------------------------------------------------------------------------------------ phase


def test_phase_is_verbatim_from_run_json(tmp_path: Path) -> None:
    b = build(tmp_path, failure_phase="correctness")
    assert loc_of(b.root).fault.phase == "correctness"


def test_phase_without_run_json_is_device_fault_when_a_fault_line_exists(tmp_path: Path) -> None:
    b = build(tmp_path, run=None)
    loc = loc_of(b.root)
    assert loc.fault.phase == "device_fault"
    assert loc.pid == 48213 and "auto-filled" in loc.notes[0]


def test_phase_without_run_json_and_without_fault_is_unknown(tmp_path: Path) -> None:
    b = build(tmp_path, fault="none", run=None)
    assert loc_of(b.root).fault.phase == "unknown"


def test_invalid_phase_is_not_used(tmp_path: Path) -> None:
    b = build(tmp_path, run={"failure_phase": "exploded"})
    loc = loc_of(b.root)
    assert loc.fault.phase == "device_fault"
    assert any("exploded" in n for n in loc.notes)


# ------------------------------------------------------------------------------------------ process choice


def test_only_the_run_pids_plog_counts(tmp_path: Path) -> None:
    """A second process's plog with its own SK fault is ignored: only P's faults and incidents count."""
    a = build(tmp_path / "a")
    other = build(tmp_path / "b", pid=51000, fault="non_sk")
    shutil.copy(other.plog, a.plog.parent / other.plog.name)
    loc = loc_of(a.root)
    assert loc.pid == 48213 and loc.fault.kind == "sk"
    assert all(i.pid == 48213 for i in loc.incidents)


def test_without_run_pid_the_sk_fault_plog_is_chosen(tmp_path: Path) -> None:
    a = build(tmp_path / "a", run={"pid": None})
    other = build(tmp_path / "b", pid=51000, fault="non_sk")
    shutil.copy(other.plog, a.plog.parent / other.plog.name)
    loc = loc_of(a.root)
    assert loc.pid == 48213 and "SK fault" in loc.notes[0]


def test_run_override_pid_selects_the_process(tmp_path: Path) -> None:
    b = build(tmp_path)
    doc = json.loads((b.root / "run.json").read_text())
    doc["pid"] = 51000
    over = tmp_path / "override.json"
    over.write_text(json.dumps(doc))
    loc = loc_of(b.root, run_json=over)
    assert loc.pid == 51000 and loc.fault.kind == "none" and loc.instance is None
