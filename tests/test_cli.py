"""The command line contract: stdout = data, stderr = messages, exit codes 0 / 2 / 3 (DESIGN.md, issue 2)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from skdbg.cli import main
from skdbg.scenebuilder.elf import SymSpec, text_section, write_elf

REPO = Path(__file__).resolve().parent.parent


def _run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    runner = CliRunner()
    result = runner.invoke(main, list(args), input=stdin)
    return result.exit_code, result.stdout, result.stderr


def test_help_documents_exit_codes() -> None:
    code, out, _ = _run("--help")
    assert code == 0
    for text in ("0  done", "2  usage error", "3  unreadable or malformed input", "inspect", "symbolize"):
        assert text in out
    code, out, _ = _run("inspect", "--help")
    assert code == 0 and "3  unreadable or malformed input" in out


def test_inspect_lists_tables_with_row_counts(upstream: Path) -> None:
    code, out, err = _run("inspect", str(upstream / "autotune-pipeline"), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    counts = {r["table"]: r["rows"] for r in doc["rows"]}
    assert counts["fused-nodes"] == 2 and counts["sk-functions"] == 1 and counts["prof"] == 2
    assert counts["plog-faults"] == 0
    assert "gap: no plog" in err  # messages on stderr, never mixed into the JSON


def test_acceptance_fused_nodes_json_lists_both_children(upstream: Path) -> None:
    code, out, _ = _run(
        "inspect", str(upstream / "autotune-pipeline"), "--table", "fused-nodes", "--format", "json"
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "skdbg.table/1" and doc["table"] == "fused-nodes"
    got = [(r["nodeId"], r["streamId"], r["funcName"], r["kernelType"]) for r in doc["rows"]]
    assert got == [
        (10, 1, "static_kernel_GroupedMatmul_hash", "AIC_ONLY"),
        (11, 2, "static_kernel_VectorPost_hash", "AIV_ONLY"),
    ]
    assert doc["rows"][0]["file"] == "sk_meta/1/model_48_1/sk_fused_nodes.log" and doc["rows"][0]["line"] == 2


def test_acceptance_torchair_plog_excerpt_fault_origin_op_and_dump_symbol(upstream: Path) -> None:
    code, out, _ = _run(
        "inspect", str(upstream / "torchair-sk-case-plog"), "--table", "plog-faults", "--format", "json"
    )
    assert code == 0
    rows = json.loads(out)["rows"]
    kernel = [r for r in rows if r["type"] == "KernelFaultLine"]
    assert kernel and all(r["kernel_name"].startswith("te_superkernel_911c4c52") for r in kernel)
    assert kernel[0]["kind"] == "ge_sk" and kernel[0]["streamId"] == 70 and kernel[0]["task_id"] == 0
    (tracking,) = [r for r in rows if r["type"] == "ErrorTracking"]
    assert tracking["origin_op_name"] == "sk_sp1_start_TransQuantParamV2_end_QuantBatchMatmulV3_2"
    (dump,) = [r for r in rows if r["type"] == "DumpException"]
    assert dump["symbol_name"].endswith("__kernel0_middle_split3")
    assert (dump["offset"], dump["symbol_size"], dump["symbol_offset"]) == (0x68B8, 0x1914, 0x6800)
    assert dump["offset_consistent"] is True and dump["symbol_contains_offset"] is True


def test_inspect_csv_and_table_formats(upstream: Path) -> None:
    code, out, _ = _run(
        "inspect", str(upstream / "autotune-pipeline"), "--table", "fused-nodes", "--format", "csv"
    )
    assert code == 0
    header = out.splitlines()[0].split(",")
    assert header[:2] == ["pid", "model"] and "funcName" in header and len(out.splitlines()) == 3
    code, out, _ = _run("inspect", str(upstream / "autotune-pipeline"), "--table", "sk-functions")
    assert code == 0 and "scopeId" in out and "decoder.layer.0.mlp" in out


def test_unknown_table_is_usage_error(upstream: Path) -> None:
    code, out, err = _run("inspect", str(upstream / "autotune-pipeline"), "--table", "nope")
    assert code == 2 and out == ""
    assert "unknown table 'nope'" in err and "fused-nodes" in err


def test_missing_scene_and_file_as_scene_are_bad_input(tmp_path: Path) -> None:
    code, out, err = _run("inspect", str(tmp_path / "absent"))
    assert code == 3 and out == "" and "does not exist" in err
    f = tmp_path / "x.log"
    f.write_text("hello\n")
    code, _, err = _run("inspect", str(f))
    assert code == 3 and "a scene directory, got a file" in err


def test_binary_file_named_plog_is_a_precise_error(tmp_path: Path) -> None:
    (tmp_path / "plog-7_20260101000000000.log").write_bytes(b"\x00\x01\x02garbage\x00" * 100)
    code, _, err = _run("inspect", str(tmp_path))
    assert code == 0 and "plog-7_20260101000000000.log" in err and "binary data" in err
    code, out, err = _run("inspect", str(tmp_path), "--table", "plog-faults")
    assert code == 3 and out == ""
    assert "plog-7_20260101000000000.log: expected a CANN plog" in err or "binary data" in err


def test_malformed_json_is_a_gap_and_other_artifacts_still_load(tmp_path: Path, upstream: Path) -> None:
    """Row 62 at scene level: a truncated sk_task_queue.json does not hide the other files."""
    model = tmp_path / "sk_meta" / "1" / "model_48_1"
    model.mkdir(parents=True)
    src = upstream / "autotune-pipeline" / "sk_meta" / "1" / "model_48_1" / "sk_fused_nodes.log"
    (model / "sk_fused_nodes.log").write_bytes(src.read_bytes())
    (model / "sk_task_queue.json").write_text('{"version": "1.0", "scopes": [')
    code, out, _ = _run("inspect", str(tmp_path), "--table", "fused-nodes", "--format", "json")
    assert code == 0 and len(json.loads(out)["rows"]) == 2
    code, out, err = _run("inspect", str(tmp_path), "--table", "task-queue")
    assert code == 3 and "sk_task_queue.json:1" in err and "valid JSON" in err
    code, out, _ = _run("inspect", str(tmp_path), "--table", "gaps", "--format", "json")
    kinds = [r["kind"] for r in json.loads(out)["rows"]]
    assert "unreadable" in kinds


def _elf(tmp_path: Path) -> Path:
    path = tmp_path / "add_custom_0x1000.o"
    write_elf(
        path,
        sections=[text_section(0x400)],
        symbols=[SymSpec("add_custom", 0x100, 0x80), SymSpec("helper", 0x200, 0x40)],
    )
    return path


def test_symbolize_arguments_and_stdin(tmp_path: Path) -> None:
    elf = _elf(tmp_path)
    code, out, _ = _run("symbolize", str(elf), "0x1110", "1210", "--format", "json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["base"] == "0x1000" and doc["base_source"] == "file name"
    got = [(r["symbol"], r["offset_in_symbol"]) for r in doc["rows"]]
    assert got == [("add_custom", 0x10), ("helper", 0x10)]
    code, out, _ = _run("symbolize", str(elf), "--base", "0", "--format", "csv", stdin="0x110\n\n0x5000\n")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 3 and "add_custom" in lines[1] and "unresolved" in lines[2]


def test_symbolize_bad_pc_and_bad_elf(tmp_path: Path) -> None:
    elf = _elf(tmp_path)
    code, out, err = _run("symbolize", str(elf), "0xzz")
    assert code == 2 and out == "" and "expected a hexadecimal PC" in err and "'0xzz'" in err
    junk = tmp_path / "junk.o"
    junk.write_bytes(b"not an elf at all")
    code, out, err = _run("symbolize", str(junk), "0x10")
    assert code == 3 and out == "" and "junk.o" in err
    code, _, err = _run("symbolize", str(tmp_path), "0x10")
    assert code == 3 and "directory" in err


def test_symbolize_refuses_what_is_no_64_bit_address(tmp_path: Path) -> None:
    """A sign, a digit separator, a non-ASCII digit, a second 0x, a blank argument or a value past 64
    bits is no PC (int(text, 16) takes the first three and the last): a usage error naming the argument
    or stdin line and saying what is wrong, nothing written."""
    elf = _elf(tmp_path)
    for bad, why in (
        ("-0x10", "has a sign"),
        ("+0x1110", "has a sign"),
        ("0x11_10", "not a hex digit"),
        ("0x0x1110", "not a hex digit"),
        ("0x1\u0661", "not ASCII"),
        ("0x10000000000000000", "more than 64 bits"),
        ("", "is empty"),
    ):
        code, out, err = _run("symbolize", str(elf), "0x1110", "--", bad)
        assert (code, out) == (2, ""), bad
        assert f"argument 2: {bad!r} " in err and f"{why}: expected a hexadecimal PC" in err, err
    # stdin lines are counted as sed counts them (a form feed is no line break); blank lines are skipped
    code, out, err = _run("symbolize", str(elf), stdin="0x1110\n\n0x1110\f0x1210\n-1\n")
    assert (code, out) == (2, "") and "stdin line 3: '0x1110\\x0c0x1210' has a character" in err, err
    code, out, err = _run("symbolize", str(elf), "0x1110", "--base=-0x1000")
    assert (code, out) == (2, "") and "--base: '-0x1000' has a sign: expected a hexadecimal address" in err
    # the largest address is one, and blanks around a PC (a pasted column, a CRLF file) are not refused
    code, out, _ = _run("symbolize", str(elf), "0xffffffffffffffff", " 0X1110\t", "--format", "json")
    assert code == 0
    rows = json.loads(out)["rows"]
    assert [r["pc"] for r in rows] == [0xFFFFFFFFFFFFFFFF, 0x1110] and rows[1]["symbol"] == "add_custom"
    code, out, _ = _run("symbolize", str(elf), "--format", "csv", stdin="0x1110\r\n\r\n 0x1210 \r\n")
    assert code == 0
    assert [(r["pc"], r["symbol"]) for r in csv.DictReader(io.StringIO(out))] == [
        (str(0x1110), "add_custom"),
        (str(0x1210), "helper"),
    ]


def test_human_table_shows_addresses_in_hex(tmp_path: Path) -> None:
    elf = _elf(tmp_path)
    code, out, _ = _run("symbolize", str(elf), "0x1110")
    assert code == 0
    assert "0x1110" in out and "0x10" in out and "add_custom" in out
    assert "4368" not in out  # the decimal form of 0x1110 is not what people compare against plog PCs


def test_empty_scene_lists_tables_and_says_what_is_missing(tmp_path: Path) -> None:
    """A scene whose sk_meta/ holds no model yet: it opens, and the gaps say what is missing."""
    (tmp_path / "sk_meta").mkdir()
    code, out, err = _run("inspect", str(tmp_path), "--format", "json")
    assert code == 0
    counts = {r["table"]: r["rows"] for r in json.loads(out)["rows"]}
    assert counts["fused-nodes"] == 0 and counts["gaps"] == 2
    assert "no sk_meta model directory" in err and "no plog-<pid>_<stamp>.log" in err
    code, out, _ = _run("inspect", str(tmp_path), "--table", "cores", "--format", "json")
    assert code == 0 and json.loads(out)["rows"] == []


def test_symbolize_json_keeps_integers_next_to_unresolved_pcs(tmp_path: Path) -> None:
    """An unresolved PC (None cells) must not turn the integer columns into floats."""
    elf = _elf(tmp_path)
    code, out, _ = _run("symbolize", str(elf), "0x1110", "0x9000", "--format", "json")
    assert code == 0
    first, second = json.loads(out)["rows"]
    assert type(first["offset_in_symbol"]) is int and type(first["sym_start"]) is int
    assert second["symbol"] is None and second["tier"] == "unresolved"


def test_batch_commands_tune_the_interpreter_and_the_tui_does_not() -> None:
    """analyze & co. raise the collector's thresholds and shorten the switch interval (skdbg.cli);
    the conftest fixture puts the defaults back after each test."""
    import gc
    import sys

    from skdbg.cli import BATCH_GC_THRESHOLDS, BATCH_SWITCH_INTERVAL

    before = (gc.get_threshold(), sys.getswitchinterval())
    CliRunner().invoke(main, ["explain", "C3"])
    assert gc.get_threshold() == BATCH_GC_THRESHOLDS
    assert sys.getswitchinterval() == pytest.approx(BATCH_SWITCH_INTERVAL)  # stored in microseconds
    gc.set_threshold(*before[0])
    sys.setswitchinterval(before[1])
    CliRunner().invoke(main, ["tui", "--help"])
    assert (gc.get_threshold(), sys.getswitchinterval()) == before


def test_one_scene_commands_keep_freed_memory_and_others_do_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that reads one scene and ends has the allocator keep what it frees (skdbg.heap); a
    command that may run long (the TUI, or one that goes through many scenes) does not. Only counted
    here: tests/test_heap.py runs the tuning, in processes of its own."""
    import skdbg.cli

    kept: list[bool] = []
    monkeypatch.setattr(skdbg.cli, "keep_freed_memory", lambda: kept.append(True))
    CliRunner().invoke(main, ["explain", "C3"])
    CliRunner().invoke(main, ["tui", "--help"])
    assert kept == []
    scene = Path(__file__).resolve().parents[1] / "examples" / "scenes" / "high-single-stream"
    result = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json", "--no-cache"])
    assert result.exit_code == 0 and kept == [True]


@pytest.mark.parametrize("command", ["analyze", "inspect"])
def test_one_scene_commands_pause_the_collector_and_resume_it(
    command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A one-scene command reads its scene with the cyclic collector off and turns it back on after,
    also when it fails (skdbg.cli._one_scene)."""
    import gc

    import skdbg.scene
    import skdbg.triage.context

    seen: list[bool] = []
    load = skdbg.scene.load_evidence
    opened = skdbg.scene.open_scene

    def load_noting(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return load(*args, **kwargs)  # type: ignore[arg-type]

    def open_noting(*args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return opened(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(skdbg.scene, "load_evidence", load_noting)
    monkeypatch.setattr(skdbg.scene, "open_scene", open_noting)
    monkeypatch.setattr(skdbg.triage.context, "open_scene", open_noting)
    extra = ["--no-cache"] if command == "analyze" else []
    scene = str(REPO / "examples" / "scenes" / "high-single-stream")
    assert gc.isenabled()
    code, _, err = _run(command, scene, "--format", "json", *extra)
    assert code == 0, err
    assert seen and not any(seen)  # the scene was read with the collector paused
    assert gc.isenabled()
    seen.clear()
    code, _, err = _run(command, str(tmp_path), "--format", "json", *extra)  # not a scene: exit 3
    assert code == 3 and "not a failure scene" in err
    assert seen and not any(seen)
    assert gc.isenabled(), "resumed after a failed command too"


def test_resuming_moves_a_big_young_generation_to_the_oldest_only() -> None:
    """More young containers than a collection's threshold: moved to the oldest generation (the next
    allocation must not walk them all); fewer, or objects frozen by someone else: left as they are."""
    import gc

    from skdbg.cli import _resume_collector

    thresholds = gc.get_threshold()
    try:
        gc.disable()
        gc.set_threshold(500)
        kept = [[i] for i in range(2000)]  # 2,000 new containers while paused
        assert gc.get_count()[0] > 500  # over the threshold
        collections: list[int] = []

        def note(phase: str, info: dict[str, int]) -> None:
            if phase == "start":
                collections.append(info["generation"])

        gc.callbacks.append(note)
        try:
            _resume_collector(True)
            after = [[i] for i in range(100)]  # the allocations right after: no collection walks them all
        finally:
            gc.callbacks.remove(note)
        assert collections == [] and gc.isenabled() and gc.get_freeze_count() == 0
        assert all(gc.is_tracked(k) for k in kept + after)  # moved, not dropped

        gc.disable()
        gc.set_threshold(100_000)
        young = [[i] for i in range(2000)]
        before = gc.get_count()[0]
        _resume_collector(False)
        assert not gc.isenabled(), "left off when it was off"
        assert gc.get_count()[0] >= before - 10, "under the threshold: left young"

        frozen = [[i] for i in range(10)]
        gc.freeze()
        gc.set_threshold(500)
        more = [[i] for i in range(2000)]
        _resume_collector(True)
        # the frozen objects are in no generation still (not the freeze count: another thread of the
        # process, pytest-xdist's channel to its controller, may free a frozen object of its own meanwhile)
        in_generations = {id(o) for o in gc.get_objects()}
        assert not any(id(o) in in_generations for o in [frozen, *frozen]), (
            "a host's frozen objects stay frozen"
        )
        assert id(more) in in_generations  # (the check sees the young ones)
        del kept, young, frozen, more
    finally:
        gc.unfreeze()
        gc.enable()
        gc.set_threshold(*thresholds)


_FREEZE_PROBE = """
import atexit, gc, sys
# registered before the command's own hook, so (atexit is last in, first out) it runs after it
atexit.register(lambda: sys.stderr.write(f"FROZEN {gc.get_freeze_count()}\\n"))
from skdbg.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize(
    ("argv", "frozen"), [(["analyze", "SCENE", "--format", "json"], True), (["tui", "--help"], False)]
)
def test_a_batch_command_freezes_the_heap_before_the_exit_collection(argv: list[str], frozen: bool) -> None:
    """The interpreter's last full collection would walk every parsed record of an analysis for
    nothing (a sixth of a first run on the bench scene): a batch command freezes the heap at exit, the
    TUI does not (its process is long-lived and its own)."""
    scene = str(REPO / "examples" / "scenes" / "aiv-fault-add-custom")
    argv = [scene if a == "SCENE" else a for a in argv]
    proc = subprocess.run(
        [sys.executable, "-c", _FREEZE_PROBE, *argv], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("FROZEN "))
    count = int(line.split()[1])
    assert (count > 1000) is frozen, line
