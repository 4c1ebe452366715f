"""One convention for ``-o`` output folders, on EVERY command that writes one (issue 12 item 4).

Expected behaviour (hand-written from the issue, not from the code): an existing non-empty folder
is a usage error — exit 2, exactly one line on stderr, the folder byte-for-byte unchanged; ``--force``
replaces it (the old content is gone, the command's own first file is there); a failure in the
middle of writing leaves nothing behind — neither the folder nor a temporary sibling — and, with
``--force`` over an existing folder, leaves that folder untouched.
"""

from __future__ import annotations

import errno
import json
import pathlib
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import skdbg.atomic
from skdbg.cli import main

REPO = Path(__file__).resolve().parents[1]
SCENE = REPO / "examples" / "scenes" / "high-single-stream"
KERNELS = REPO / "examples" / "kernels"
OPS = REPO / "examples" / "superkernel" / "ops.json"


@dataclass
class Command:
    """argv for ``skdbg`` given the output folder, and a file the command must write there."""

    argv: Callable[[Path, Path], list[str]]  # (work dir, out) -> argv
    writes: str
    setup: Callable[[Path], None] = lambda work: None


def _run(argv: list[str]) -> Result:
    return CliRunner().invoke(main, argv)


def _ok(argv: list[str]) -> None:
    res = _run(argv)
    assert res.exit_code == 0, res.output


def _adapt(src: Path, out: Path) -> None:
    _ok(["codegen", "adapt", str(src), "-o", str(out), "--io-contract", str(KERNELS / "my_op.io.json")])


def _adapted(work: Path) -> None:
    _adapt(KERNELS / "my_op.asc", work / "adapted")


def _aggregated(work: Path) -> None:
    _adapted(work)
    _ok(["codegen", "aggregate", str(work / "adapted"), "-o", str(work / "agg")])


def _session(work: Path) -> None:
    res = _run(["session", "new", "--session-dir", str(work / "ledger"), "--format", "json"])
    assert res.exit_code == 0, res.output
    (work / "sid").write_text(json.loads(res.stdout)["id"])


def _proposal(work: Path) -> None:
    res = _run(["analyze", str(SCENE), "--format", "json"])
    assert res.exit_code == 0, res.output
    (work / "analysis.json").write_text(res.stdout)


COMMANDS: dict[str, Command] = {
    "report": Command(lambda w, o: ["report", str(SCENE), "-o", str(o)], "FAILURE_SCENE.md"),
    "session export": Command(
        lambda w, o: [
            "session",
            "export",
            (w / "sid").read_text(),
            "-o",
            str(o),
            "--session-dir",
            str(w / "ledger"),
        ],
        "REPORT.md",
        _session,
    ),
    "codegen adapt": Command(
        lambda w, o: [
            "codegen",
            "adapt",
            str(KERNELS / "my_op.asc"),
            "-o",
            str(o),
            "--io-contract",
            str(KERNELS / "my_op.io.json"),
        ],
        "operator-sk-adapted.json",
    ),
    "codegen aggregate": Command(
        lambda w, o: ["codegen", "aggregate", str(w / "adapted"), "-o", str(o)],
        "operator-sk-adapted.json",
        _adapted,
    ),
    "codegen compare": Command(
        lambda w, o: ["codegen", "compare", str(w / "agg"), "-o", str(o), "--npu-arch", "dav-2201"],
        "operator-sk-standalone-verify.json",
        _aggregated,
    ),
    "codegen templates render": Command(
        lambda w, o: ["codegen", "templates", "render", "add_custom", "-o", str(o)], "csrc/add_custom.asc"
    ),
    "codegen candidate": Command(
        lambda w, o: [
            "codegen",
            "candidate",
            str(SCENE),
            "--proposal",
            str(w / "analysis.json"),
            "-o",
            str(o),
        ],
        "candidate.json",
        _proposal,
    ),
    "codegen superkernel": Command(
        lambda w, o: ["codegen", "superkernel", str(OPS), "-o", str(o)],
        "te_superkernel_decoder_mlp_kernel.cpp",
    ),
}


@pytest.fixture(params=sorted(COMMANDS))
def command(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Command, Path]:
    cmd = COMMANDS[request.param]
    work = tmp_path / "work"
    work.mkdir()
    cmd.setup(work)
    return cmd, work


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _existing(parent: Path) -> Path:
    out = parent / "out"
    out.mkdir(parents=True)
    (out / "mine.txt").write_text("the user's own file\n")
    return out


def test_existing_non_empty_folder_is_exit_2_one_line_and_untouched(command: tuple[Command, Path]) -> None:
    cmd, work = command
    out = _existing(work.parent / "target")
    before = _snapshot(out)
    res = _run(cmd.argv(work, out))
    assert res.exit_code == 2, res.output
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("skdbg: error: ") and str(out) in lines[0]
    assert "--force" in lines[0]
    assert res.stdout == ""
    assert _snapshot(out) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]  # no temporary sibling


def test_an_absent_or_empty_folder_is_written(command: tuple[Command, Path]) -> None:
    cmd, work = command
    empty = work.parent / "empty"
    empty.mkdir()
    for out in (work.parent / "deep" / "absent", empty):
        res = _run(cmd.argv(work, out))
        assert res.exit_code == 0, res.output
        assert (out / cmd.writes).is_file()


def test_force_replaces_the_folder(command: tuple[Command, Path]) -> None:
    cmd, work = command
    out = _existing(work.parent / "target")
    res = _run([*cmd.argv(work, out), "--force"])
    assert res.exit_code == 0, res.output
    assert not (out / "mine.txt").exists()
    assert (out / cmd.writes).is_file()
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]  # no staging or trash left


def _fail_second_write(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Make the second file written into a staging folder fail with ENOSPC (a disk filling up)."""
    written: list[Path] = []
    real_text, real_bytes = pathlib.Path.write_text, pathlib.Path.write_bytes

    def check(path: Path) -> None:
        if any(".tmp-" in part for part in path.parts):
            written.append(path)
            if len(written) == 2:
                raise OSError(errno.ENOSPC, "No space left on device", str(path))

    def write_text(self: Path, *args: Any, **kwargs: Any) -> int:
        check(self)
        return real_text(self, *args, **kwargs)

    def write_bytes(self: Path, data: Any) -> int:
        check(self)
        return real_bytes(self, data)

    real_tree_write = skdbg.atomic._write_bytes

    def tree_write(
        path: str, data: bytes, *flags: int
    ) -> None:  # the writing thread of skdbg.atomic.TreeWriter
        check(Path(path))
        real_tree_write(path, data, *flags)

    monkeypatch.setattr(pathlib.Path, "write_text", write_text)
    monkeypatch.setattr(pathlib.Path, "write_bytes", write_bytes)
    monkeypatch.setattr(skdbg.atomic, "_write_bytes", tree_write)
    return written


def test_a_failure_mid_write_leaves_nothing_behind(
    command: tuple[Command, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cmd, work = command
    parent = work.parent / "fresh" / "sub"
    written = _fail_second_write(monkeypatch)
    res = _run(cmd.argv(work, parent / "out"))
    assert len(written) == 2, "the injected failure was not reached"
    assert res.exit_code == 3, res.output
    assert len(res.stderr.splitlines()) == 1 and "No space left on device" in res.stderr
    assert not (work.parent / "fresh").exists()  # neither the folder, a temp sibling nor its parents


def test_a_failure_mid_write_with_force_keeps_the_old_folder(
    command: tuple[Command, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cmd, work = command
    out = _existing(work.parent / "target")
    before = _snapshot(out)
    written = _fail_second_write(monkeypatch)
    res = _run([*cmd.argv(work, out), "--force"])
    assert len(written) == 2
    assert res.exit_code == 3, res.output
    assert _snapshot(out) == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["out"]


def test_force_never_replaces_a_folder_holding_an_input(tmp_path: Path) -> None:
    """``report SCENE -o PARENT --force`` would delete the scene being read: refused, exit 2."""
    parent = tmp_path / "parent"
    scene = parent / "scene"
    shutil.copytree(SCENE, scene)
    before = _snapshot(parent)
    res = _run(["report", str(scene), "-o", str(parent), "--force"])
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert _snapshot(parent) == before


def test_report_inside_the_scene_is_a_usage_error(tmp_path: Path) -> None:
    res = _run(["report", str(SCENE), "-o", str(SCENE / "report")])
    assert res.exit_code == 2 and "sealed" in res.stderr
    assert not (SCENE / "report").exists()


def test_every_folder_command_documents_the_convention() -> None:
    """`--help` of each command that writes a folder explains exit 2 and --force."""
    for name in COMMANDS:
        res = _run([*name.split(), "--help"])
        assert res.exit_code == 0, name
        text = " ".join(res.stdout.split())
        assert "--force" in text and "existing, not empty refused with exit 2" in text, name


def test_superkernel_kernel_name_too_long_for_a_file_name(tmp_path: Path) -> None:
    """An over-long kernel_name is refused as bad input before anything is created (issue 14 item 11)."""
    doc = json.loads(OPS.read_text())
    doc["kernel_name"] = "k" * 250
    for op in doc["ops"]:
        op["json"] = str((OPS.parent / op["json"]).resolve())
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps(doc))
    res = _run(["codegen", "superkernel", str(ops), "-o", str(tmp_path / "out")])
    assert res.exit_code == 3 and "too long" in res.stderr and len(res.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_superkernel_nul_in_a_child_path_is_bad_input(tmp_path: Path) -> None:
    """A NUL byte in ops[].json is malformed input (exit 3, one line), not an internal error."""
    doc = json.loads(OPS.read_text())
    doc["ops"][0]["json"] = "inputs/a\u0000b.json"
    ops = tmp_path / "ops.json"
    ops.write_text(json.dumps(doc))
    res = _run(["codegen", "superkernel", str(ops), "-o", str(tmp_path / "out")])
    assert res.exit_code == 3 and len(res.stderr.splitlines()) == 1
    assert "a\\0b.json" in res.stderr and "null byte" in res.stderr and "\0" not in res.stderr
    assert not (tmp_path / "out").exists()
