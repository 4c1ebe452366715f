"""sk_meta directory discovery, artifacts.md §7.7 rows 76–79."""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError
from skdbg.parsers.discovery import discover_sk_meta


def _model(root: Path, pid: str, label: str, files: tuple[str, ...] = ("super_kernel.log",)) -> Path:
    d = root / "sk_meta" / pid / label
    d.mkdir(parents=True)
    for name in files:
        (d / name).write_text("x\n")
    return d


def test_row76_any_entry_point_resolves_to_the_same_model_dirs(tmp_path: Path) -> None:
    model = _model(tmp_path / "runs", "48213", "model_48_1", ("sk_fused_nodes.log",))
    entry_points = [tmp_path, tmp_path / "runs" / "sk_meta", tmp_path / "runs" / "sk_meta" / "48213", model]
    for entry in entry_points:
        layout = discover_sk_meta(entry)
        assert [(m.pid, m.label, m.model_id) for m in layout.models] == [(48213, "model_48_1", "48_1")], entry
        assert layout.models[0].files == {"fused_nodes": model / "sk_fused_nodes.log"}


def test_row77_several_pids_and_models_kept_apart(tmp_path: Path) -> None:
    _model(tmp_path, "200", "model_48_1")
    _model(tmp_path, "200", "model_48_2")
    _model(tmp_path, "100", "model_unknown")
    _model(tmp_path, "rank3", "model_7_1")
    layout = discover_sk_meta(tmp_path)
    assert [m.label for m in layout.models_of("200")] == ["model_48_1", "model_48_2"]
    unknown = layout.models_of("100")[0]
    assert unknown.model_id is None and unknown.pid == 100
    assert layout.models_of("rank3")[0].pid is None


def test_row78_missing_files_are_capability_gaps_not_failures(tmp_path: Path) -> None:
    model = _model(tmp_path, "7", "model_1_1", ("super_kernel.log",))
    layout = discover_sk_meta(tmp_path)
    assert len(layout.models) == 1
    missing = layout.models[0].missing()
    assert "task_queue" in missing and "bin_files" in missing and "super_kernel_log" not in missing
    details = [g.detail for g in layout.gaps]
    assert any("sk_task_queue.json missing" in d and "L3" in d for d in details)
    assert all(
        g.kind == "missing_file" and g.collect and "ASCEND_OP_COMPILE_SAVE_KERNEL_META=1" in g.collect
        for g in layout.gaps
    )
    (model / "bin_files").mkdir()
    (model / "bin_files" / "add_custom_0x124080C00000.o").write_bytes(b"\x7fELF")
    assert "bin_files" not in discover_sk_meta(tmp_path).models[0].missing()


def test_row79_autotune_fixture_tree_loads(upstream: Path) -> None:
    layout = discover_sk_meta(upstream / "autotune-pipeline")
    (model,) = layout.models
    assert (model.pid, model.label, model.model_id) == (1, "model_48_1", "48_1")
    assert sorted(model.files) == ["fail_reasons", "fused_nodes", "scope_split"]
    assert [p.name for p in layout.prof_files] == ["sk_prof_device_0.json"]


def test_profiling_files_in_pid_dir_and_legacy_name(tmp_path: Path) -> None:
    _model(tmp_path, "5", "model_2_1")
    (tmp_path / "sk_meta" / "5" / "sk_prof_device_0.json").write_text("[{}]")
    (tmp_path / "sk_meta" / "5" / "sk_event_dev_device_1.json").write_text("[{}]")
    names = sorted(p.name for p in discover_sk_meta(tmp_path).prof_files)
    assert names == ["sk_event_dev_device_1.json", "sk_prof_device_0.json"]


def test_empty_scene_is_a_gap(tmp_path: Path) -> None:
    layout = discover_sk_meta(tmp_path)
    assert layout.models == []
    assert [g.kind for g in layout.gaps] == ["no_sk_meta"]


def test_file_or_missing_path_is_a_parse_error(tmp_path: Path) -> None:
    f = tmp_path / "plog.log"
    f.write_text("x")
    with pytest.raises(ParseError, match="a scene directory, got a file"):
        discover_sk_meta(f)
    with pytest.raises(ParseError, match="does not exist"):
        discover_sk_meta(tmp_path / "nope")
