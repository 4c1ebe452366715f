"""A scene file whose read fails part-way, for every reader that opens through ``open_regular``.

The read raises ReadFailure (a ParseError) naming the file, what it should have been and the byte
offset; a parser lets it through and the evidence loader records the file as an unreadable gap, so
the rest of the scene is still analysed. Before, a bare OSError ("Input/output error", no file
name) ended the whole analysis with exit 3.

The failure is put in the plain read under ``open_regular``'s buffered reader
(``fsguard._file_readinto``/``_file_readall``), for one file only, from a given offset on.
"""

from __future__ import annotations

import errno
import io
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import skdbg.parsers.fsguard as fsguard
from skdbg.parsers.common import ParseError, ReadFailure
from skdbg.parsers.fsguard import read_regular
from skdbg.parsers.textio import iter_lines

REPO = Path(__file__).resolve().parents[1]
SCENE = REPO / "examples" / "scenes" / "high-single-stream"
MODEL = SCENE / "sk_meta" / "48213" / "model_48_1"
EIO = os.strerror(errno.EIO)


def _fail_from(monkeypatch: pytest.MonkeyPatch, path: Path, at: int) -> None:
    """Reads of ``path`` give its bytes before offset ``at``, then fail with EIO."""
    inode = path.stat().st_ino
    real_into, real_all = io.FileIO.readinto, io.FileIO.readall

    def ours(f: io.FileIO) -> bool:
        return os.fstat(f.fileno()).st_ino == inode

    def readinto(f: io.FileIO, buffer: Any) -> int | None:
        if not ours(f):
            return real_into(f, buffer)
        pos = f.tell()
        if pos >= at:
            raise OSError(errno.EIO, EIO)
        with memoryview(buffer) as mv:
            return real_into(f, mv[: at - pos])

    def readall(f: io.FileIO) -> bytes:
        if not ours(f):
            return real_all(f)
        os.read(f.fileno(), max(0, at - f.tell()))  # what a real readall reads before it fails
        raise OSError(errno.EIO, EIO)

    monkeypatch.setattr(fsguard, "_file_readinto", readinto)
    monkeypatch.setattr(fsguard, "_file_readall", readall)


def _parsers() -> list[tuple[str, Callable[[Path], object]]]:
    from skdbg.parsers.device_args import parse_device_args
    from skdbg.parsers.fused_nodes import parse_fused_nodes
    from skdbg.parsers.node_detail import parse_node_detail
    from skdbg.parsers.scope_split import parse_scope_split
    from skdbg.parsers.super_kernel_log import parse_super_kernel_log, read_super_kernel_log
    from skdbg.parsers.task_queue import parse_task_queue

    def sk_log(path: Path) -> object:
        return parse_super_kernel_log(read_super_kernel_log(path), file=str(path))

    return [
        ("sk_fused_nodes.log", parse_fused_nodes),
        ("sk_node_detail.log", parse_node_detail),
        ("sk_scope_split.log", parse_scope_split),
        ("sk_device_args.log", parse_device_args),
        ("sk_task_queue.json", parse_task_queue),
        ("super_kernel.log", sk_log),
    ]


@pytest.mark.parametrize(("name", "parse"), _parsers(), ids=[n for n, _ in _parsers()])
def test_a_parser_names_the_file_and_offset_of_a_failed_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, parse: Callable[[Path], object]
) -> None:
    path = tmp_path / name
    shutil.copyfile(MODEL / name, path)
    at = path.stat().st_size // 2
    assert at > 0
    parse(path)  # reads whole without the failure
    _fail_from(monkeypatch, path, at)
    with pytest.raises(ReadFailure) as failed:
        parse(path)
    assert str(failed.value).startswith(f"{path}: expected ")
    assert str(failed.value).endswith(f"(readable file: {EIO} at byte {at})")


def test_a_failed_first_read_names_no_offset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.log"
    path.write_text("x\n" * 10, encoding="ascii")
    _fail_from(monkeypatch, path, 0)
    with pytest.raises(ReadFailure, match=rf"^{path}: expected a text log \(readable file: {EIO}\)$"):
        list(iter_lines(path))


def test_reading_a_whole_file_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run.json"
    path.write_text("{}", encoding="ascii")
    assert read_regular(path, what="a run manifest") == b"{}"
    _fail_from(monkeypatch, path, 0)
    with pytest.raises(ParseError, match=rf"^{path}: expected a run manifest \(readable file: {EIO}\)$"):
        read_regular(path, what="a run manifest")


def test_analyze_records_a_failed_sk_meta_file_as_a_gap_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """super_kernel.log fails half-way: the analysis still runs on the other files, names the file
    and offset in a warning, and keeps no verdict in the cache (the read may succeed next time)."""
    from skdbg.cli import main

    scene = tmp_path / "scene"
    shutil.copytree(SCENE, scene)
    sk_log = scene / "sk_meta" / "48213" / "model_48_1" / "super_kernel.log"
    at = sk_log.stat().st_size // 2
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(tmp_path / "cache"))
    _fail_from(monkeypatch, sk_log, at)

    result = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json"])

    assert result.exit_code == 0, result.output
    assert (
        f"skdbg: warning: unreadable: {sk_log}: expected super_kernel.log (readable file: {EIO} at byte {at})"
    ) in result.stderr
    assert '"schema": "skdbg.analysis/1"' in result.stdout
    monkeypatch.undo()
    again = CliRunner().invoke(
        main, ["analyze", str(scene), "--format", "json"], env={"SKDBG_CACHE_DIR": str(tmp_path / "cache")}
    )
    assert again.exit_code == 0, again.output
    assert "unreadable" not in again.stderr
