"""The plog scan in a worker thread (Evidence.start_plog_scan) leaves the same evidence as a serial scan.

Why this matters: gaps and parse errors are listed in the order they were met, and both the analysis JSON
and the CLI's exit-3 message follow that order, so the concurrent scan must not reorder them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skdbg.parsers.background import BackgroundLoad
from skdbg.scene import evidence_for, open_scene

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "scenes" / "high-single-stream"


def _damaged_scene(tmp_path: Path) -> Path:
    """The bundled scene plus a binary rotated plog (a 'plog' error) and a binary sk_fused_nodes.log."""
    scene = tmp_path / "scene"
    shutil.copytree(EXAMPLE, scene)
    (scene / "log" / "plog" / "plog-48213_20260610140158123.log").write_bytes(b"\x00\x01\x02 not text\n")
    (scene / "sk_meta" / "48213" / "model_48_1" / "sk_fused_nodes.log").write_bytes(b"\x00" * 64)
    return scene


def _snapshot(ev: object) -> tuple[list[tuple[str, str]], list[tuple[str, list[str]]], int]:
    gaps = [(g.kind, g.detail) for g in ev.gaps]  # type: ignore[attr-defined]
    errors = [(role, [str(e) for e in errs]) for role, errs in ev.errors.items()]  # type: ignore[attr-defined]
    lines = sum(len(pe.lines) for pe in ev.plogs)  # type: ignore[attr-defined]
    return gaps, errors, lines


def test_background_scan_gives_the_serial_gaps_errors_and_lines(tmp_path: Path) -> None:
    scene = open_scene(_damaged_scene(tmp_path))

    serial = evidence_for(scene)
    _ = serial.plogs  # the order localisation used to read them in: plogs first, then sk_meta
    for me in serial.model_evidence:  # each model's files are parsed when asked for
        me.load_all()

    threaded = evidence_for(scene)
    threaded.start_plog_scan()
    for me in threaded.model_evidence:  # sk_meta parsed (and its gap recorded) while the worker scans
        me.load_all()
    _ = threaded.plogs

    gaps, errors, lines = _snapshot(threaded)
    assert (gaps, errors, lines) == _snapshot(serial)
    # written from the damage above: the plog's error comes first, as a serial scan meets it first
    assert [role for role, _ in errors] == ["plog", "fused_nodes"]
    unreadable = [detail for kind, detail in gaps if kind == "unreadable"]
    assert len(unreadable) == 2
    assert "plog-48213_20260610140158123.log" in unreadable[0]
    assert "sk_fused_nodes.log" in unreadable[1]
    assert lines > 0  # the readable plog's marker lines are still there


def test_a_load_error_reaches_the_caller_unchanged() -> None:
    boom = RuntimeError("scan failed")

    def load() -> int:
        raise boom

    bg = BackgroundLoad(load, name="test-load")
    with pytest.raises(RuntimeError) as got:
        bg.result()
    assert got.value is boom


def test_a_load_that_returns_none_is_a_value() -> None:
    assert BackgroundLoad(lambda: None, name="test-none").result() is None
    assert BackgroundLoad(lambda: 41 + 1, name="test-int").result() == 42


def test_the_plog_digest_comes_from_the_scan_and_the_hasher_skips_it(tmp_path: Path) -> None:
    import hashlib

    scene = open_scene(_damaged_scene(tmp_path))
    good = next(
        a for a in scene.artifacts if a.kind == "plog" and a.path.name.startswith("plog-48213_2026061014005")
    )

    # the hashing worker alone leaves a skipped file unhashed (it is the scan's to hand over)
    scene.start_hashing(skip=[str(good.path)]).join()
    assert good._sha256 is None

    ev = evidence_for(scene)
    handed = ev.start_plog_scan(on_digest=scene.adopt_digest)
    assert str(good.path) in handed
    _ = ev.plogs
    expected = hashlib.sha256(good.path.read_bytes()).hexdigest()
    assert good._sha256 == expected
    assert good.digest() == (good.path.stat().st_size, expected)


def test_collecting_twice_puts_the_gaps_back_once(tmp_path: Path) -> None:
    """Two readers of ``plogs`` (cached_property has no lock from Python 3.12) must not splice the
    scan's gaps and errors in twice."""
    scene = open_scene(_damaged_scene(tmp_path))
    ev = evidence_for(scene)
    ev.start_plog_scan()
    scan = ev._plog_scan
    assert scan is not None
    first = scan.collect()
    assert scan.collect() is first
    assert [g.kind for g in ev.gaps].count("unreadable") == 1  # only the plog's: sk_meta not parsed yet
    assert [role for role in ev.errors] == ["plog"] and len(ev.errors["plog"]) == 1


def test_the_value_does_not_wait_for_the_after_work_and_its_failure_is_dropped() -> None:
    import threading

    release = threading.Event()
    ran: list[str] = []

    def after() -> None:
        release.wait(30)
        ran.append("after")
        raise RuntimeError("the after-work failed")

    bg = BackgroundLoad(lambda: "value", name="test-after", after=after)
    assert bg.result() == "value"  # while ``after`` still waits
    assert ran == []
    release.set()
    bg._thread.join(30)
    assert ran == ["after"]
    assert bg.result() == "value"  # its failure reached no one
