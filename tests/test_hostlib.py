"""Entry ELF embedded in the host library (artifacts.md §4.1, row 75)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError
from skdbg.parsers.hostlib import extract_sk_entry_elfs
from skdbg.scenebuilder.elf import entry_elf, host_so, text_section, write_elf

E2201 = entry_elf()
E3510 = entry_elf(["sk_entry_aic", "sk_entry_aic_simt", "sk_entry_aiv"], size=0x204)  # 0x60C bytes of text


def _so(tmp_path: Path, **kw: object) -> Path:
    p = tmp_path / "libascendsk.so"
    p.write_bytes(host_so({"dav-2201": E2201, "dav-3510": E3510}, **kw))  # type: ignore[arg-type]
    return p


def test_row75_extract_by_symbol(tmp_path: Path) -> None:
    """Row 75: ``.sk.kernel`` + ``__aicore_file_buf_dav_2201`` → the exact entry ELF bytes."""
    res = extract_sk_entry_elfs(_so(tmp_path))
    assert [(e.arch, e.symbol, e.method) for e in res.entries] == [
        ("dav_2201", "__aicore_file_buf_dav_2201", "symbol"),
        ("dav_3510", "__aicore_file_buf_dav_3510", "symbol"),
    ]
    e = res.by_arch("dav-2201")
    assert e is not None and e.data == E2201 and e.size == len(E2201)
    assert res.by_arch("dav_3510").data == E3510  # type: ignore[union-attr]
    table = e.open().symbols
    assert table is not None and table.lookup(0x404).symbol.name == "sk_entry_aiv"  # type: ignore[union-attr]
    raw = (tmp_path / "libascendsk.so").read_bytes()
    assert raw[e.file_offset : e.file_offset + e.size] == E2201
    out = e.write(tmp_path / "out")
    assert out.name == "sk_entry_dav_2201.o" and out.read_bytes() == E2201
    assert res.gaps == []
    assert res.to_frame()["arch"].tolist() == ["dav_2201", "dav_3510"]


def test_row75_legacy_symbol(tmp_path: Path) -> None:
    p = tmp_path / "old.so"
    p.write_bytes(host_so({"dav-2201": E2201}, symbol_style="legacy"))
    (e,) = extract_sk_entry_elfs(p).entries
    assert (e.arch, e.symbol, e.data) == (None, "__aicore_file_buf__", E2201)


def test_row75_stripped_library_is_scanned(tmp_path: Path) -> None:
    """Row 75 fallback: no .symtab → scan ``.sk.kernel`` for ``\\x7fELF`` headers."""
    res = extract_sk_entry_elfs(_so(tmp_path, with_symtab=False, lead=b"\x7fELF junk " + b"\0" * 54))
    assert [(e.method, e.data) for e in res.entries] == [("scan", E2201), ("scan", E3510)]
    assert [g.kind for g in res.gaps] == ["no_symtab"]
    assert [u.context for u in res.unrecognized] == ["hostlib:scan"]


def test_row75_not_the_sk_library(tmp_path: Path) -> None:
    p = write_elf(tmp_path / "other.so", sections=[text_section(0x40)])
    res = extract_sk_entry_elfs(p)
    assert res.entries == [] and [g.kind for g in res.gaps] == ["no_sk_kernel"]


def test_row75_bad_inputs(tmp_path: Path) -> None:
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"nope")
    with pytest.raises(ParseError, match="junk.so"):
        extract_sk_entry_elfs(junk)
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    with pytest.raises(ParseError, match="empty file"):
        extract_sk_entry_elfs(empty)
    with pytest.raises(ParseError, match="a directory"):
        extract_sk_entry_elfs(tmp_path)
    with pytest.raises(ParseError, match="no such file"):
        extract_sk_entry_elfs(tmp_path / "absent.so")
