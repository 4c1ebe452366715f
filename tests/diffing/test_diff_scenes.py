"""``skdbg diff`` on the three uses of issue 17: before/after an exclusion, rank A vs rank B, clean vs
failed. Expected values are written from the bundled scenes' and the emulator models' definitions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sim_support as ss
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.diffing import DiffResult, diff_scenes

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenes"
BEFORE = EXAMPLES / "high-single-stream"
AFTER = EXAMPLES / "high-single-stream-fixed"


def _diff(result: DiffResult, name: str) -> tuple[object, object]:
    for d in result.differences:
        if d.field == name:
            return d.a, d.b
    raise AssertionError(f"{name} does not differ; differences: {[d.field for d in result.differences]}")


@pytest.fixture(scope="module")
def exclusion() -> DiffResult:
    return diff_scenes(BEFORE, AFTER, use_cache=False, parallel=False)


def test_exclusion_fault_is_gone(exclusion: DiffResult) -> None:
    assert _diff(exclusion, "fault.kind") == ("sk", "none")
    assert _diff(exclusion, "suspect") == ("SwiGlu_41d9e0#0", None)
    assert _diff(exclusion, "sk.entry") == ("sk_entry_mix11_op_trace", None)
    assert _diff(exclusion, "cores.pc_relative") == (["SwiGlu_41d9e0#0+0x58"], [])
    assert _diff(exclusion, "cores.cond") == (["AIV:OP_LAUNCHED"], [])
    assert exclusion.same is False


def test_exclusion_child_left_its_sk(exclusion: DiffResult) -> None:
    a, b = _diff(exclusion, "fused[decoder.layer.0.mlp]")
    assert a == [["RmsNorm_5c1d07aa#0", "QuantBatchMatmulV3_8ab2c4f1#0", "SwiGlu_41d9e0#0", "Cast_9f3e21#0"]]
    assert b == [["RmsNorm_5c1d07aa#0", "QuantBatchMatmulV3_8ab2c4f1#0"], ["Cast_9f3e21#0"]]
    d = next(d for d in exclusion.differences if d.field == "fused[decoder.layer.0.mlp]")
    assert "left in B: SwiGlu_41d9e0#0" in d.why
    assert d.cites_a == ("sk_meta/48213/model_48_1/sk_fused_nodes.log:1",)
    a, b = _diff(exclusion, "breaks")
    assert "SwiGlu_41d9e0: IN_UNFUSIBLE_SCOPE" in b  # type: ignore[operator]
    assert "SwiGlu_41d9e0: IN_UNFUSIBLE_SCOPE" not in a  # type: ignore[operator]


def test_exclusion_identity_and_equal_fields(exclusion: DiffResult) -> None:
    pid = next(d for d in exclusion.differences if d.field == "run.pid")
    assert (pid.a, pid.b, pid.identity) == (48213, 50001, True)
    assert _diff(exclusion, "options.debug") == ({"debug_op_exec_trace": 1}, {})
    # both are rank 3 on device 3, first attempt of their round, with the same env probe
    for name in ("run.rank", "run.device", "run.attempt", "env.ready", "env.explicit_none_exclusion"):
        assert name in exclusion.equal
    fault = next(d for d in exclusion.differences if d.field == "fault.kind")
    assert fault.cites_a[0] == "log/plog/plog-48213_20260610140058123.log:23"


@pytest.fixture(scope="module")
def sim_scenes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("diff-sim")
    failing = ss.model(tmp, 6, 3, "fused")
    clean = ss.model(tmp, 6, (), "none")
    out = {"rank0": tmp / "rank0", "rank1": tmp / "rank1", "clean": tmp / "clean"}
    ss.scene(failing, out["rank0"], seed=1)
    ss.scene(failing, out["rank1"], seed=2, run={"rank": 1, "device": 1})
    ss.scene(clean, out["clean"], seed=1)
    return out


def test_rank_a_vs_rank_b_same_child_same_relative_pc(sim_scenes: dict[str, Path]) -> None:
    r = diff_scenes(sim_scenes["rank0"], sim_scenes["rank1"], use_cache=False, parallel=True)
    # the two processes ran the faulting child on different cores and split variants: absolute PCs differ
    pcs = [c["current_pc"] for side in (r.a, r.b) for c in side.context["cores"]]
    assert len(pcs) == 2 and pcs[0] != pcs[1]
    # ... but relative to the child they are the same instruction: no core difference at all
    assert {"cores.pc_relative", "cores.children", "cores.cond", "suspect", "fault.kind"} <= set(r.equal)
    assert r.findings == ()
    assert r.same is True
    assert {d.field for d in r.differences} == {"run.pid", "run.rank", "run.device", "run.start"}


def test_clean_vs_failed(sim_scenes: dict[str, Path]) -> None:
    r = diff_scenes(sim_scenes["clean"], sim_scenes["rank0"], use_cache=False, parallel=False)
    a, b = _diff(r, "fault.kind")
    assert (a, b) == ("none", "sk")
    a, b = _diff(r, "suspect")
    assert a is None and isinstance(b, str) and b.endswith("#0")
    assert _diff(r, "cores.count") == (0, 1)
    # the same model fuses the same six children whether or not it faults
    fused = [f for f in r.equal if f.startswith("fused[")]
    assert fused == ["fused[synthetic.scope]"]
    facts = r.a.by_field()["fused[synthetic.scope]"].value
    assert len(facts) == 1 and len(facts[0]) == 6


def test_cli_formats_and_exit_codes(tmp_path: Path) -> None:
    runner = CliRunner()
    res = runner.invoke(main, ["diff", str(BEFORE), str(AFTER), "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["schema"] == "skdbg.diff/1"
    assert doc["same"] is False
    assert doc["groups"]["fused"]["differ"] == ["fused[decoder.layer.0.mlp]"]
    res = runner.invoke(main, ["diff", str(BEFORE), str(BEFORE), "--format", "md"])
    assert res.exit_code == 0
    assert res.stdout.startswith("# skdbg diff")
    assert "same findings" in res.stdout
    text = runner.invoke(main, ["diff", str(BEFORE), str(AFTER)]).stdout
    assert "≠ fused[decoder.layer.0.mlp]" in text
    assert "~ run.pid" in text


def test_cli_bad_input_names_the_path(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = tmp_path / "nope"
    res = runner.invoke(main, ["diff", str(BEFORE), str(missing)])
    assert res.exit_code == 3
    assert str(missing) in res.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    res = runner.invoke(main, ["diff", str(empty), str(BEFORE)])
    assert res.exit_code == 3
    assert str(empty) in res.stderr and "not a failure scene" in res.stderr


def test_every_compared_field_is_in_the_glossary(exclusion: DiffResult, sim_scenes: dict[str, Path]) -> None:
    from skdbg.glossary import lookup

    r = diff_scenes(sim_scenes["clean"], sim_scenes["rank0"], use_cache=False, parallel=False)
    fields = {f.field for res in (exclusion, r) for side in (res.a, res.b) for f in side.facts}
    names = {"fused[SCOPE]" if f.startswith("fused[") else f for f in fields}
    assert len(names) == 36  # hand-counted from docs/diff.md's table
    assert sorted(n for n in names if not any(e.area == "diff" for e in lookup(n))) == []
    assert any(e.area == "diff" for e in lookup("skdbg.diff/1"))


def test_a_repeated_funcname_is_numbered_by_occurrence() -> None:
    """duplicate-symbol-medium fuses MatMulV3_e07b3c19 twice in one SK (examples/scenes/README.md)."""
    scene = EXAMPLES / "duplicate-symbol-medium"
    r = diff_scenes(scene, scene, use_cache=False, parallel=False)
    assert r.a.by_field()["fused[decoder.layer.0.mlp]"].value == [
        ["RmsNorm_5c1d07aa#0", "MatMulV3_e07b3c19#0", "Add_7c1e#0", "MatMulV3_e07b3c19#1", "Cast_9f3e21#0"]
    ]
    assert r.differences == () and r.same is True


def test_spawned_worker_gives_the_same_result(exclusion: DiffResult) -> None:
    """With another thread running the worker is spawned, not forked: same comparison."""
    import threading

    stop = threading.Event()
    t = threading.Thread(target=stop.wait, daemon=True)
    t.start()
    try:
        r = diff_scenes(BEFORE, AFTER, use_cache=False, parallel=True)
    finally:
        stop.set()
        t.join()
    assert r.to_json() == exclusion.to_json()


def test_entry_fault_pc_is_relative_to_the_entry_image(tmp_path: Path, sim_scenes: dict[str, Path]) -> None:
    """A fault in SK-entry code (fault kind `entry`) is placed in the entry image, not in a child."""
    m = ss.model(tmp_path, 6, 2, "entry")
    ss.scene(m, tmp_path / "e1", seed=1)
    ss.scene(m, tmp_path / "e2", seed=5)
    r = diff_scenes(tmp_path / "e1", tmp_path / "e2", use_cache=False, parallel=False)
    rel = r.a.by_field()["cores.pc_relative"].value
    assert len(rel) == 1 and rel[0].startswith("sk_entry+0x")
    assert "cores.pc_relative" in r.equal and r.same is True
    # against the fused fault of the same-shaped model the faulting code differs: entry vs a child
    other = diff_scenes(tmp_path / "e1", sim_scenes["rank0"], use_cache=False, parallel=False)
    a, b = _diff(other, "cores.pc_relative")
    assert a == rel and isinstance(b, list) and b[0].split("+")[0].endswith("#0")
