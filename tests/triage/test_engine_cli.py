"""End to end: ``skdbg analyze`` / ``report`` / ``verify`` on the bundled scenes and on bad input.

Acceptance of the triage issue: every bundled scene analysed with ``--format json`` validates against
the analysis contract (spec/analysis-json.md) and gives its documented verdict; analysis never writes
into the scene; malformed run.json or model source is exit 3 with a precise message.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.triage.schema import validate_analysis, validate_verify

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenes"

# scene -> (confidence, rule, suspect task index or None, routes that must be present, proposal status, mechanism)
EXPECTED = {
    "aiv-fault-add-custom": ("high", "C3", 1, set(), "proposed", "explicit_none_exclusion"),
    "high-single-stream": ("high", "C3", 2, set(), "proposed", "explicit_none_exclusion"),
    "duplicate-symbol-medium": ("medium", "C4", 3, {"R3"}, "proposed", "explicit_none_exclusion"),
    "entry-only-low": ("low", "C6", None, {"R2"}, "none", None),
    "event-bound-split": ("high", "C3", 4, {"R5"}, "proposed", "dependency_aligned_split"),
    "non-sk-fault": ("n/a", "C0", None, {"X3"}, "none", None),
    # the clean re-launch of high-single-stream (tests/scenebuilder/test_example_scenes.py verifies the pair): alone it
    # holds no fault evidence, so the gate stops at G3 and nothing is attributed
    "high-single-stream-fixed": ("n/a", "C0", None, {"R1"}, "none", None),
}


def _run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return res.exit_code, res.stdout, res.stderr


def _tree_digest(root: Path) -> dict[str, tuple[str, float]]:
    return {
        p.relative_to(root).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_every_bundled_scene_is_covered() -> None:
    assert {p.name for p in EXAMPLES.iterdir() if p.is_dir()} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bundled_scene_json_validates_and_gives_its_verdict(name: str) -> None:
    code, out, _ = _run("analyze", str(EXAMPLES / name), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    validate_analysis(doc)
    confidence, rule, task, routes, status, mechanism = EXPECTED[name]
    verdict = doc["verdict"]
    assert (verdict["confidence"], verdict["rule"]) == (confidence, rule)
    if task is None:
        assert verdict["suspect"] is None
    else:
        assert verdict["suspect"]["task_index"] == task
    assert routes <= set(doc["routes"])
    assert doc["proposal"]["status"] == status
    assert doc["proposal"]["mechanism"] == mechanism
    # every evidence item cites a file and a line or a locator
    for item in verdict["evidence"]:
        assert item["file"] and (item["line"] is not None or item.get("json_path")), item


def test_entry_only_low_names_the_exec_trace_next_step() -> None:
    doc = json.loads(_run("analyze", str(EXAMPLES / "entry-only-low"), "--format", "json")[1])
    steps = {s["id"]: s for s in doc["next_steps"]}
    assert steps["D1"]["options"] == {"debug_op_exec_trace": 1}
    assert steps["D1"]["accepted_by_probe"] is True


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_human_formats_name_verdict_rule_and_cited_lines(fmt: str) -> None:
    code, out, _ = _run("analyze", str(EXAMPLES / "high-single-stream"), "--format", fmt)
    assert code == 0
    assert "C3" in out and "SwiGlu_41d9e0" in out
    assert "log/plog/plog-48213_" in out  # evidence cited by file:line
    assert "super_kernel_scope_begin(None)" in out


def test_analysis_never_writes_into_the_scene(tmp_path: Path) -> None:
    scene = tmp_path / "scene"
    shutil.copytree(EXAMPLES / "event-bound-split", scene)
    before = _tree_digest(scene)
    for fmt in ("json", "text", "md"):
        assert _run("analyze", str(scene), "--format", fmt)[0] == 0
    assert _run("report", str(scene), "-o", str(tmp_path / "report"))[0] == 0
    assert _tree_digest(scene) == before


def test_report_writes_the_failure_scene_folder(tmp_path: Path) -> None:
    out_dir = tmp_path / "report"
    code, out, _ = _run("report", str(EXAMPLES / "aiv-fault-add-custom"), "-o", str(out_dir), "--lang", "zh")
    assert code == 0
    written = {Path(line).name for line in out.splitlines()}
    assert {"FAILURE_SCENE.md", "failure_isolation.json", "evidence_index.json", "analysis.json"} <= written
    record = json.loads((out_dir / "failure_isolation.json").read_text(encoding="utf-8"))
    assert record["suspect_child"]["node_id"] == 121
    assert all(v["result"] == "not_run" for v in record["verification"])  # attribution alone proves nothing
    validate_analysis(json.loads((out_dir / "analysis.json").read_text(encoding="utf-8")))


def test_report_refuses_a_folder_inside_the_scene(tmp_path: Path) -> None:
    scene = tmp_path / "scene"
    shutil.copytree(EXAMPLES / "high-single-stream", scene)
    code, _, err = _run("report", str(scene), "-o", str(scene / "report"))
    assert code != 0 and "scene" in err


def test_verify_command_reports_every_gate(tmp_path: Path) -> None:
    # NEW = the same failed scene copied: the candidate never ran, so V1 or V2 fails and the rest is not_run;
    # every copied artifact is the failed attempt's own evidence — R7 whatever the gates say, attempt invalid
    new = tmp_path / "new"
    shutil.copytree(EXAMPLES / "high-single-stream", new)
    code, out, _ = _run("verify", str(EXAMPLES / "high-single-stream"), str(new), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    validate_verify(doc)
    results = [g["result"] for g in doc["verification"]]
    assert [g["gate"] for g in doc["verification"]] == ["V1", "V2", "V3", "V4", "V5"]
    assert "failed" in results and doc["routes"] == ["R7"]
    assert doc["attempt"]["status"] == "invalid" and doc["refused_evidence"]
    first_failed = results.index("failed")
    assert all(r == "not_run" for r in results[first_failed + 1 :])


def test_malformed_run_json_is_exit_3(tmp_path: Path) -> None:
    scene = tmp_path / "scene"
    shutil.copytree(EXAMPLES / "high-single-stream", scene)
    (scene / "run.json").write_text('{"pid": 48213, "rank": ', encoding="utf-8")
    code, out, err = _run("analyze", str(scene), "--format", "json")
    assert code == 3 and out == ""
    assert "run.json" in err and "expected" in err


def test_malformed_run_override_is_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "run.json"
    bad.write_bytes(b"\x00\x01binary")
    code, _, err = _run("analyze", str(EXAMPLES / "high-single-stream"), "--run", str(bad))
    assert code == 3 and str(bad) in err


def test_malformed_model_source_is_exit_3(tmp_path: Path) -> None:
    scene = tmp_path / "scene"
    shutil.copytree(EXAMPLES / "high-single-stream", scene)
    model = scene / "src" / "model.py"
    model.write_text(model.read_text(encoding="utf-8") + "\ndef broken(:\n", encoding="utf-8")
    code, _, err = _run("analyze", str(scene))
    assert code == 3 and "src/model.py" in err and "Python" in err


@pytest.mark.parametrize(
    "args",
    [
        ["analyze", "/nonexistent/scene"],
        ["analyze", str(EXAMPLES / "high-single-stream"), "--source-root", "/nonexistent/src"],
        ["verify", "/nonexistent/old", str(EXAMPLES / "high-single-stream")],
    ],
)
def test_missing_paths_are_exit_3(args: list[str]) -> None:
    code, _, err = _run(*args)
    assert code == 3 and "/nonexistent" in err


def test_bad_option_values_are_usage_errors() -> None:
    assert _run("analyze", str(EXAMPLES / "high-single-stream"), "--skew", "-1")[0] == 2
    assert _run("analyze", str(EXAMPLES / "high-single-stream"), "--format", "xml")[0] == 2


def test_source_root_overrides_the_scene_copy(tmp_path: Path) -> None:
    """--source-root: the marker edit is computed against the user's checkout, not the scene copy."""
    root = tmp_path / "checkout"
    (root / "src").mkdir(parents=True)
    original = (EXAMPLES / "high-single-stream" / "src" / "model.py").read_text(encoding="utf-8")
    (root / "src" / "model.py").write_text(
        "# a header line the scene copy does not have\n" + original, encoding="utf-8"
    )
    doc = json.loads(
        _run("analyze", str(EXAMPLES / "high-single-stream"), "--source-root", str(root), "--format", "json")[
            1
        ]
    )
    plain = json.loads(_run("analyze", str(EXAMPLES / "high-single-stream"), "--format", "json")[1])
    shifted = [e["line"] for e in doc["proposal"]["marker_edits"]]
    base = [e["line"] for e in plain["proposal"]["marker_edits"]]
    assert shifted and shifted == [line + 1 for line in base]
