"""Issue 14 classes 7, 8, 9 and 10: huge numbers, non-UTF-8 names, deep nesting, odd ELF addresses.

Inputs are written by hand; each test names what the runtime would never print and asserts the
contract: a gap or unrecognized line with its file and line, or exit 3 naming the file, never exit 1.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skdbg.parsers.common import ParseError, oversized_number, parse_int
from skdbg.parsers.fused_nodes import parse_fused_nodes
from skdbg.parsers.plog import read_plog
from skdbg.parsers.run_identity import parse_source_sites
from skdbg.parsers.sk_prof import ProfReader
from skdbg.parsers.symbolize import symbolize
from skdbg.scenebuilder.elf import SymSpec, text_section, write_elf

ROOT = Path(__file__).resolve().parents[2]
BIG = "9" * 5000  # beyond Python's 4,300-digit int/str limit


def test_oversized_number_limits() -> None:
    assert oversized_number("nodeId:18446744073709551615") is None  # 2**64 - 1 fits
    assert oversized_number("nodeId:18446744073709551616") is not None
    assert oversized_number("pc 0xffffffffffffffff") is None
    assert oversized_number("pc 0x1ffffffffffffffff") is not None
    assert oversized_number("stamp 20260610140058123") is None
    with pytest.raises(ValueError):
        parse_int("0x1" + "0" * 16)


def test_huge_number_in_sk_meta_prefix_is_a_gap(tmp_path: Path) -> None:
    log = tmp_path / "sk_fused_nodes.log"
    log.write_text(
        f"2026-06-10 14:00:58.123 [{BIG}:1] [INFO] [sk.cpp:1] [PrintSKNodes] SK Function: x, scope id: 1, Node Count: 0\n"
        "SK Function: sk_2_s_start_a_end_b, scope id: 2, Node Count: 0\n"
    )
    res = parse_fused_nodes(log)
    assert [(g.kind, g.src.line) for g in res.gaps if g.src] == [("number_out_of_range", 1)]
    assert [b.scope_id for b in res.blocks] == [2]


def test_huge_number_in_a_plog_line_stays_unrecognized(tmp_path: Path) -> None:
    plog = tmp_path / "plog-7_20260610140058123.log"
    plog.write_text(f"[ERROR] RUNTIME({BIG},python):2026-06-10-14:00:58.123.456 [x.cc:1]7 f: boom\n")
    res = read_plog(plog)
    assert [u.src.line for u in res.unrecognized] == [1]


def test_huge_source_sites_key_and_sk_prof_value(tmp_path: Path) -> None:
    sites = tmp_path / "source_sites.json"
    sites.write_text(json.dumps({BIG: 3, "102": 7}))
    got = parse_source_sites(sites)
    assert [(s.node_id, s.line) for s in got.sites] == [(102, 7)]
    prof = tmp_path / "sk_prof_device_0.json"
    prof.write_text('[{"ph":"X","name":"a","ts":' + BIG + ',"dur":1,"tid":0}]')
    reader = ProfReader(prof)
    assert list(reader) == []  # the element with the huge number is not an event …
    assert [u.src.line for u in reader.unrecognized] == [1]  # … it is kept, with its line


def test_deep_nesting_is_a_parse_error_or_gap(tmp_path: Path) -> None:
    sites = tmp_path / "source_sites.json"
    sites.write_text("[" * 600 + "]" * 600)
    with pytest.raises(ParseError):
        parse_source_sites(sites)
    prof = tmp_path / "sk_prof_device_0.json"
    prof.write_text('[{"ph":"X","name":"a","ts":0,"dur":1,"tid":0,"args":' + "[" * 5000 + "]" * 5000 + "}]")
    reader = ProfReader(prof)
    assert list(reader) == [] and [u.src.line for u in reader.unrecognized] == [1]


def test_odd_text_address_symbolizes_without_crash(tmp_path: Path) -> None:
    """The file-layout cross-check once indexed an empty interval list (IndexError)."""
    elf = write_elf(tmp_path / "x.o", sections=[text_section(0x40, addr=1)], symbols=[SymSpec("f", 0, 1)])
    (res,) = symbolize(elf, [0], base=0)
    assert (res.symbol, res.offset_in_symbol) == ("f", 0)  # 0 lies in [0, 1) by the symbol table
    proc = subprocess.run(
        [sys.executable, "-m", "skdbg.cli", "symbolize", str(elf), "0x0", "--base", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses non-UTF-8 file names")
def test_non_utf8_file_names_are_printed_escaped_and_kept_raw(tmp_path: Path) -> None:
    scene = tmp_path / "scene"
    shutil.copytree(ROOT / "examples" / "scenes" / "high-single-stream", scene)
    plog_dir = os.fsencode(scene / "log" / "plog")
    with open(plog_dir + b"/\xff\xfe-note.log", "wb") as fh:
        fh.write(b"[ERROR] RUNTIME(48213,python):2026-06-10-14:00:58.123.456 [x.cc:1]7 f: extra\n")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    for args in (
        ["analyze", str(scene), "--format", "json"],
        ["inspect", str(scene)],
        ["analyze", str(scene)],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "skdbg.cli", *args], capture_output=True, env=env, timeout=120
        )
        assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
        proc.stdout.decode("utf-8")  # valid UTF-8: the odd bytes are escaped, not written raw
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "skdbg.cli", "report", str(scene), "-o", str(out)],
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    index = json.loads((out / "evidence_index.json").read_text(encoding="utf-8"))
    rows = index if isinstance(index, list) else next(v for v in index.values() if isinstance(v, list))
    raw = [r["relpath_bytes_hex"] for r in rows if isinstance(r, dict) and "relpath_bytes_hex" in r]
    assert raw == [os.fsencode("log/plog/").hex() + "fffe2d6e6f74652e6c6f67"]


def test_huge_numbers_glued_to_names_are_not_converted(tmp_path: Path) -> None:
    """``sk_<id>_…`` with a 4,301-digit id once raised in the name split; file names with huge pids too."""
    from skdbg.parsers.fused_nodes import split_sk_func_name
    from skdbg.parsers.plog import parse_plog_name

    name = split_sk_func_name("sk_" + "9" * 4301 + "_s_start_a_end_b")
    assert name.scope_id is None  # not an SK name: no id that fits 64 bits
    assert parse_plog_name(tmp_path / f"plog-{'9' * 5000}_20260610140058123.log") is None
