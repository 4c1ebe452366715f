"""skdbg's regular expressions are compiled once, stored and served back unchanged (skdbg.regexcode).

Why these tests: the table stands in for ``re``'s parsing of skdbg's grammars on every start, so a
wrong entry would change what a parser matches. They check that a second start compiles nothing and
analyses the same, that every stored pattern equals ``re``'s own compile in a process without skdbg
(and warns of nothing), that str and bytes patterns of one text stay apart, that what must not be
stored is not, and that a damaged or foreign file is never used. The whole-process probes run with
``PYTHONPYCACHEPREFIX`` set, so they start without a table and never touch the checkout's
``__pycache__``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
import warnings
from pathlib import Path

import pytest
from pycache_probe import analyze_probe, run_probe

from skdbg import regexcode

REPO = Path(__file__).resolve().parents[1]
SCENE = REPO / "examples" / "scenes" / "aiv-fault-add-custom"

_PROBE = analyze_probe("regexcode")

#: run with -W error in a process that never imports skdbg: every stored entry against re's own compile
_FRESH = """
import json, marshal, re, sys, _sre
kind, magic, crc, body = marshal.loads(open(sys.argv[1], "rb").read())
entries = marshal.loads(body)
wrong = []
for (is_bytes, text, flags), args in entries.items():
    stored, fresh = _sre.compile(*args), re.compile(text, flags)
    if type(text) is not (bytes if is_bytes else str) or stored != fresh or stored.groupindex != fresh.groupindex:
        wrong.append(repr(text))
print(json.dumps({"kind": kind, "entries": len(entries), "wrong": wrong}))
"""


def _run(prefix: Path, *, write: bool = True, python_flags: tuple[str, ...] = ()) -> dict[str, object]:
    doc = run_probe(_PROBE, [str(SCENE)], prefix, write=write, python_flags=python_flags)
    assert doc["exit"] == 0
    return doc


def test_second_start_compiles_nothing_and_analyses_the_same(tmp_path: Path) -> None:
    first = _run(tmp_path)
    path = Path(str(first["path"]))
    assert path.is_relative_to(tmp_path) and path.name.startswith("regex_code.")
    compiled = first["stats"]["compiled"]  # type: ignore[index]
    # every grammar passed to regexcode.compile is stored: none could make re warn
    assert first["stats"] == {"hits": 0, "compiled": compiled, "refused": 0}
    assert compiled > 100  # the sk_meta grammars
    second = _run(tmp_path, python_flags=("-bb",))
    assert second["stats"] == {"hits": compiled, "compiled": 0, "refused": 0}
    assert second["output"] == first["output"]

    checked = subprocess.run(
        [sys.executable, "-W", "error", "-c", _FRESH, str(path)], capture_output=True, text=True, check=True
    )
    doc = json.loads(checked.stdout)
    assert doc["entries"] == compiled and doc["wrong"] == []
    assert doc["kind"] == f"skdbg-regex-code-1 {sys.version}"  # a patch release's table is another's


def test_without_bytecode_writing_no_table_is_written(tmp_path: Path) -> None:
    doc = _run(tmp_path, write=False)
    assert doc["stats"] == {"hits": 0, "compiled": 0, "refused": 0}  # nothing worked out: never written
    assert not Path(str(doc["path"])).exists()


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> regexcode._Table:
    """A fresh, writable table of this process."""
    fresh = regexcode._Table(tmp_path / "t.marshal")
    fresh.stored = {}
    monkeypatch.setattr(regexcode, "_table", fresh)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return fresh


def test_a_pattern_is_noted_then_served(table: regexcode._Table) -> None:
    word = uuid.uuid4().hex
    text = rf"(?P<name>{word})\s+(\d+)"
    first = regexcode.compile(text, re.IGNORECASE)
    key = (False, text, int(re.IGNORECASE))
    assert key in table.fresh
    table.stored = {key: table.fresh.pop(key)}
    served = regexcode.compile(text, re.IGNORECASE)
    assert served == first and served.groupindex == first.groupindex and table.hits == 1
    m = served.fullmatch(f"{word.upper()}  42")
    assert m is not None and m.group("name", 2) == (word.upper(), "42")


_BYTES_PROBE = """
import sys
from skdbg import regexcode
text = r"[\\x80-\\xff]+q"
as_str, as_bytes = regexcode.compile(text), regexcode.compile(text.encode())
assert type(as_str.pattern) is str and type(as_bytes.pattern) is bytes
print(regexcode.stats()["hits"])
"""


def test_str_and_bytes_keys_are_never_compared_under_bb(tmp_path: Path) -> None:
    """A table holding a str and a bytes pattern of one text loads and serves both under python -bb
    (a str == bytes comparison would raise BytesWarning as an error)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path)
    runs = [
        subprocess.run([sys.executable, "-bb", "-c", _BYTES_PROBE], capture_output=True, text=True, env=env)
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[-1].stderr
    assert [r.stdout.strip() for r in runs] == ["0", "2"]


def test_str_and_bytes_of_one_text_stay_apart(table: regexcode._Table) -> None:
    text = r"[\x80-\xff]+" + uuid.uuid4().hex
    as_str, as_bytes = regexcode.compile(text), regexcode.compile(text.encode())
    assert {(False, text, 0), (True, text.encode(), 0)} <= set(table.fresh)
    table.stored, table.fresh = dict(table.fresh), {}
    assert regexcode.compile(text) == as_str and regexcode.compile(text.encode()) == as_bytes
    assert type(regexcode.compile(text.encode()).pattern) is bytes and table.hits == 3


@pytest.mark.parametrize("text", ["[[a]x", "[a&&b]", "[a-z--]", "(a)?(?(1)b|c)", "é+"])
def test_a_pattern_that_may_warn_is_never_stored(table: regexcode._Table, text: str) -> None:
    assert regexcode.may_warn(text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        regexcode.compile(text + uuid.uuid4().hex)
        regexcode.compile(text + "x" + uuid.uuid4().hex)
    assert table.fresh == {}
    if text.startswith("[["):
        assert [w.category for w in caught] == [FutureWarning, FutureWarning]  # warned each time


@pytest.mark.parametrize(
    ("text", "suspect"),
    [
        (r"\[[a]", False),  # a literal [ then a set
        ("[[a]x", True),  # a possible nested set
        ("[a&&b]", True),
        ("[a-z--]", True),
        ("x--y", False),  # outside a set
        ("[]-]", False),  # a ] first in a set is a literal
        (r"[\]-]", False),
        ("a||b", False),
        ("(a)?(?(1)b|c)", True),
        ("é+", True),
    ],
)
def test_which_texts_may_warn(text: str, suspect: bool) -> None:
    assert regexcode.may_warn(text) is suspect


def test_an_unwritable_table_costs_no_extra_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table that cannot be written (here its name is taken by a folder) works nothing out on a miss."""
    path = tmp_path / "t.marshal"
    path.mkdir()
    unwritable = regexcode._Table(path)
    unwritable.stored = {}
    monkeypatch.setattr(regexcode, "_table", unwritable)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(regexcode, "engine_arguments", lambda pattern, flags: pytest.fail("worked out"))
    assert regexcode.compile("v+" + uuid.uuid4().hex).pattern.startswith("v+")
    assert unwritable.fresh == {} and unwritable.refused == 0


def test_debug_and_refused_and_misread_patterns(
    table: regexcode._Table, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """re.DEBUG prints and is not stored; an entry the engine refuses is compiled afresh and replaced;
    engine arguments that make another pattern than re's are not stored."""
    text = "x+" + uuid.uuid4().hex
    regexcode.compile(text, re.DEBUG)
    assert "MAX_REPEAT" in capsys.readouterr().out and table.fresh == {}

    refused = "y+" + uuid.uuid4().hex
    table.stored = {(False, refused, 0): ("not", "the", "arguments")}
    assert regexcode.compile(refused).fullmatch("yy" + refused[2:])
    assert (False, refused, 0) in table.fresh

    other = regexcode.engine_arguments("zz", 0)
    monkeypatch.setattr(regexcode, "engine_arguments", lambda pattern, flags: other)
    misread = "w+" + uuid.uuid4().hex
    assert regexcode.compile(misread).pattern == misread
    assert (False, misread, 0) not in table.fresh


def test_a_table_past_its_bound_keeps_this_runs_patterns(table: regexcode._Table) -> None:
    args = regexcode.engine_arguments("a", 0)
    assert args is not None
    table.stored = {(False, f"old{i}", 0): args for i in range(regexcode.MAX_ENTRIES)}
    text = "new" + uuid.uuid4().hex
    regexcode.compile(text)
    regexcode._store()
    assert table.path is not None and list(regexcode.load(table.path)) == [(False, text, 0)]


def test_a_damaged_or_foreign_file_reads_as_empty(tmp_path: Path) -> None:
    import marshal
    import zlib

    from skdbg.pycache_store import magic

    path = tmp_path / "t.marshal"
    args = regexcode.engine_arguments("a+", 0)
    assert args is not None
    good = {(False, "a+", 0): args}
    assert regexcode.save(path, good)
    assert regexcode.load(path) == good
    whole = path.read_bytes()
    for damaged in (whole[:-7], b"", b"junk"):
        path.write_bytes(damaged)
        assert regexcode.load(path) == {}
    for entries, kind in (
        ({(True, "a+", 0): args}, regexcode.FILE_KIND),  # a str text under a bytes key
        ({(False, "b+", 0): args}, regexcode.FILE_KIND),  # the entry makes another pattern than its key
        ({("a+", 0): args}, regexcode.FILE_KIND),  # another layout
        (good, "skdbg-regex-code-1 3.11.0 (another release)"),
        (good, "skdbg-dataclass-code-3"),
    ):
        body = marshal.dumps(entries)
        path.write_bytes(marshal.dumps((kind, magic(), zlib.crc32(body), body)))
        assert regexcode.load(path) == {}


def test_locate_names_the_table() -> None:
    from click.testing import CliRunner

    from skdbg.cli import main

    result = CliRunner().invoke(main, ["locate", "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["regex_code"] == str(regexcode.cache_path()) and doc["class_code"] != doc["regex_code"]
