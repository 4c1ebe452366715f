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
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import skdbg.parsers.fsguard as fsguard
from skdbg.parsers.common import ReadFailure
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
    from skdbg.parsers.fail_reasons import parse_fail_reasons
    from skdbg.parsers.fused_nodes import parse_fused_nodes
    from skdbg.parsers.node_detail import parse_node_detail
    from skdbg.parsers.scope_split import parse_scope_split
    from skdbg.parsers.super_kernel_log import parse_super_kernel_log, read_super_kernel_log
    from skdbg.parsers.task_queue import parse_task_queue

    def sk_log(path: Path) -> object:
        return parse_super_kernel_log(read_super_kernel_log(path), file=str(path))

    return [
        ("sk_fused_nodes.log", parse_fused_nodes),
        ("sk_fusion_fail_reasons.log", parse_fail_reasons),
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
    with pytest.raises(ReadFailure, match=rf"^{path}: expected a run manifest \(readable file: {EIO}\)$"):
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


def test_the_profiling_reader_names_the_file_and_offset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skdbg.parsers.sk_prof import ProfReader

    path = tmp_path / "sk_prof_device_0.json"
    events = ",".join(
        f'{{"name": "Op{i}", "ph": "X", "ts": {i}.0, "dur": 1.0, "pid": 0, "tid": 0}}' for i in range(4000)
    )
    path.write_text("[" + events + "]", encoding="ascii")
    assert len(list(ProfReader(path, chunk_chars=4096))) == 4000
    at = path.stat().st_size // 2
    _fail_from(monkeypatch, path, at)
    with pytest.raises(ReadFailure, match=rf"^{path}: expected .* \(readable file: {EIO} at byte {at}\)$"):
        list(ProfReader(path, chunk_chars=4096))


def test_a_large_artifact_hashed_for_g5_names_the_file_and_offset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The general digest path (a file over the one-read size) raises the ReadFailure, kept for every
    later ask (the scene reads no file twice)."""
    from skdbg.scene import Artifact

    path = tmp_path / "super_kernel.log"
    path.write_bytes(b"x" * (5 << 20))
    at = 3 << 20
    _fail_from(monkeypatch, path, at)
    art = Artifact(kind="super_kernel_log", path=path, root=tmp_path)
    for _ in range(2):
        with pytest.raises(ReadFailure, match=rf"\(readable file: {EIO} at byte {at}\)$"):
            art.digest()


def test_collect_names_the_plog_whose_read_failed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skdbg.collect.machine import time_span
    from skdbg.parsers.plog import parse_plog_name

    path = tmp_path / "plog-48213_20260610140000000.log"
    line = "[ERROR] RUNTIME(48213,python3):2026-06-10-14:00:01.123.456 [stream.cc:1024]48213 Launch: ok\n"
    path.write_text(line * 20_000, encoding="ascii")
    plog_file = parse_plog_name(path)
    assert plog_file is not None
    _fail_from(monkeypatch, path, 100)
    with pytest.raises(
        ReadFailure, match=rf"^{path}: expected a plog file \(readable file: {EIO} at byte 100\)$"
    ):
        time_span([plog_file])


def test_an_elf_whose_read_failed_keeps_no_verdict_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel ELF that fails part-way becomes a ``bad_elf`` gap of its image table (the PC is then
    not symbolised); no exception reaches the evidence, yet no verdict built without it is kept."""
    from skdbg.cli import main

    scene = tmp_path / "scene"
    shutil.copytree(SCENE, scene)
    elf = scene / "sk_meta" / "48213" / "model_48_1" / "bin_files" / "SwiGlu_41d9e0_0x124080B40000.o"
    cache = tmp_path / "cache"
    monkeypatch.setenv("SKDBG_CACHE_DIR", str(cache))
    _fail_from(monkeypatch, elf, 100)
    failed = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json"])
    assert failed.exit_code == 0, failed.output
    assert not any(cache.rglob("*")) or all(p.is_dir() for p in cache.rglob("*"))

    monkeypatch.setattr(fsguard, "_file_readinto", io.FileIO.readinto)
    monkeypatch.setattr(fsguard, "_file_readall", io.FileIO.readall)
    again = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json"])
    assert again.exit_code == 0, again.output
    assert again.stdout != failed.stdout  # the whole ELF symbolises the PC: the stored verdict is this one
    assert any(p.is_file() for p in cache.rglob("*"))


@pytest.mark.parametrize("spoiled", ["read fails half-way", "link out of the scene"])
def test_an_unusable_fused_nodes_file_is_not_called_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spoiled: str
) -> None:
    """The gate says the file is there but could not be used (a read that failed, or a link the layout
    refused) and cites it where it lies, instead of advising to collect a file that is there and
    routing to the shallow-fusion diagnosis (X2)."""
    from skdbg.cli import main

    scene = tmp_path / "scene"
    shutil.copytree(SCENE, scene)
    fused = scene / "sk_meta" / "48213" / "model_48_1" / "sk_fused_nodes.log"
    if spoiled == "read fails half-way":
        _fail_from(monkeypatch, fused, fused.stat().st_size // 2)
    else:
        outside = tmp_path / "elsewhere.log"
        outside.write_bytes(fused.read_bytes())
        fused.unlink()
        fused.symlink_to(outside)
    result = CliRunner().invoke(main, ["analyze", str(scene), "--format", "json", "--no-cache"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    (gap,) = [g for g in doc["gate"]["gaps"] if g["id"] == "G3"]
    assert gap["detail"].startswith("sk_fused_nodes.log of this process is there but could not be used")
    assert gap["file"] == "sk_meta/48213/model_48_1/sk_fused_nodes.log"
    assert "X2" not in doc["routes"]
    (f6,) = [g for g in doc["gate"]["gaps"] if g["id"] == "F6"]
    assert f6["detail"].startswith("model_48_1 scope 7: sk_fused_nodes.log is there but could not be used")
    assert (f6["file"], f6["collect"].startswith("copy a readable")) == (gap["file"], True)


def test_a_kept_read_failure_holds_no_frames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The evidence keeps each ParseError for the CLI; its traceback chain would keep the failed
    parser's frames (and their MBs of buffers) alive as long as the evidence."""
    from skdbg.scene import evidence_for, open_scene

    scene = tmp_path / "scene"
    shutil.copytree(SCENE, scene)
    sk_log = scene / "sk_meta" / "48213" / "model_48_1" / "super_kernel.log"
    _fail_from(monkeypatch, sk_log, sk_log.stat().st_size // 2)
    ev = evidence_for(open_scene(scene))
    assert ev.model_evidence[0].super_kernel_log is None
    (kept,) = ev.errors["super_kernel_log"]
    assert isinstance(kept, ReadFailure)
    chain: list[BaseException] = []
    e: BaseException | None = kept
    while e is not None:
        chain.append(e)
        e = e.__cause__ or e.__context__
    assert len(chain) >= 2  # the ReadFailure and the OSError it was raised from
    assert [x.__traceback__ for x in chain] == [None] * len(chain)


def test_a_model_source_whose_read_failed_stays_a_read_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Named as the caller names it (relative to the scene), and still a ReadFailure: the cache then
    keeps no verdict built while it failed."""
    from skdbg.parsers.markers import read_source

    path = tmp_path / "model.py"
    path.write_text("x = 1\n" * 5000, encoding="ascii")
    _fail_from(monkeypatch, path, 4096)
    with pytest.raises(
        ReadFailure,
        match=rf"^src/model.py: expected a Python model source \(readable file: {EIO} at byte 4096\)$",
    ):
        read_source(path, "src/model.py")


def test_a_kept_error_raised_while_handling_another_holds_no_frames(tmp_path: Path) -> None:
    """An error raised ``from None`` inside an ``except`` still holds the first one as its context,
    with that one's frames."""
    from skdbg.scene import evidence_for, open_scene

    ev = evidence_for(open_scene(SCENE))

    def load() -> None:
        try:
            raise ReadFailure("first", "a file")
        except ReadFailure:
            raise ReadFailure("second", "a file") from None

    assert ev._guard("probe", load) is None
    (kept,) = ev.errors["probe"]
    assert kept.__context__ is not None
    assert (kept.__traceback__, kept.__context__.__traceback__) == (None, None)


def test_open_regular_closes_the_descriptor_once_when_the_reader_cannot_be_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closed once: a second close, when the failed raw file is freed later, would close whatever
    file took the descriptor number meanwhile."""
    import gc

    path = tmp_path / "a.log"
    path.write_text("x\n", encoding="ascii")

    def no_reader(raw: Any) -> io.BufferedReader:
        raise MemoryError("no buffer")

    monkeypatch.setattr(io, "BufferedReader", no_reader)
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(MemoryError) as failure:
        fsguard.open_regular(path, what="a text log")
    monkeypatch.undo()
    assert len(os.listdir("/proc/self/fd")) == before
    reuse = os.open(path, os.O_RDONLY)  # the lowest free number: the one just closed
    try:
        del failure  # frees the traceback, and the raw file it holds
        gc.collect()
        os.fstat(reuse)  # still open: nothing closed its number a second time
    finally:
        os.close(reuse)


def test_a_read_made_ahead_counts_no_failed_read_in_its_thread_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``uncounted_reads``: a failed read of the calling thread inside the block leaves the count as it
    was (the reader that reports the file reads it again and counts then); after the block, and in any
    other thread meanwhile, a failed read counts as ever."""
    import threading

    target = tmp_path / "f.log"
    target.write_bytes(b"x" * 100)
    _fail_from(monkeypatch, target, 10)
    before = fsguard.failed_reads()
    with fsguard.uncounted_reads(), pytest.raises(ReadFailure):
        read_regular(target, what="a log")
    assert fsguard.failed_reads() == before

    def other() -> None:
        with pytest.raises(ReadFailure):
            read_regular(target, what="a log")

    with fsguard.uncounted_reads():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert fsguard.failed_reads() == before + 1  # the other thread's read counted
    with pytest.raises(ReadFailure):
        read_regular(target, what="a log")
    assert fsguard.failed_reads() == before + 2
