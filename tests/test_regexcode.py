"""Compiled regular expressions are stored once and served back unchanged (skdbg.regexcode).

Why these tests: the table stands in for ``re``'s compile step on every start, so a wrong entry would
change what a pattern matches. They check that a second start compiles nothing and analyses the same,
that every stored pattern equals a fresh compile in a process without skdbg, that what cannot or must
not be stored goes through untouched, and that a damaged file is never used. The whole-process probes
run with ``PYTHONPYCACHEPREFIX`` set, so they start without a table and never touch the checkout's
``__pycache__``.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import subprocess
import sys
import threading
import uuid
import zlib
from pathlib import Path

import pytest

from skdbg import regexcode

REPO = Path(__file__).resolve().parents[1]
SCENE = REPO / "examples" / "scenes" / "aiv-fault-add-custom"

_PROBE = """
import hashlib, json, sys
from click.testing import CliRunner
from skdbg import regexcode
from skdbg.cli import main
result = CliRunner().invoke(main, ["analyze", sys.argv[1], "--format", "json", "--no-cache"])
print(json.dumps({"exit": result.exit_code, "stats": regexcode.stats(), "path": str(regexcode.cache_path()),
                  "output": hashlib.sha256(result.output.encode()).hexdigest()}))
"""

#: run in a process that never imports skdbg: every stored entry against re's own compile
_FRESH = """
import json, marshal, re, sys, _sre
kind, magic, crc, body = marshal.loads(open(sys.argv[1], "rb").read())
entries = marshal.loads(body)
wrong = []
for (text, flags), args in entries.items():
    stored, fresh = _sre.compile(*args), re.compile(text, flags)
    if stored != fresh or stored.groupindex != fresh.groupindex or stored.groups != fresh.groups:
        wrong.append(repr(text))
print(json.dumps({"entries": len(entries), "wrong": wrong, "bytes": sum(type(t) is bytes for t, _ in entries)}))
"""


def _run(prefix: Path, *, write: bool = True) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(SCENE)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        check=True,
    )
    doc: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["exit"] == 0
    return doc


def test_second_start_compiles_nothing_and_analyses_the_same(tmp_path: Path) -> None:
    first = _run(tmp_path)
    path = Path(str(first["path"]))
    assert path.is_relative_to(tmp_path) and path.name.startswith("regex_code.")
    stats = first["stats"]
    assert isinstance(stats, dict)
    assert stats["loaded"] == 0 and stats["compiled"] > 100  # the line grammars, click's, json's
    second = _run(tmp_path)
    stats2 = second["stats"]
    assert isinstance(stats2, dict)
    assert stats2["compiled"] == 0 and stats2["hits"] == stats["compiled"]
    assert second["output"] == first["output"]

    checked = subprocess.run(
        [sys.executable, "-c", _FRESH, str(path)], capture_output=True, text=True, check=True
    )
    doc = json.loads(checked.stdout)
    assert doc["entries"] == stats["compiled"] and doc["wrong"] == []
    assert doc["bytes"] > 0  # the bytes grammars (super_kernel.log runs) are stored under bytes keys


def test_without_bytecode_writing_no_table_is_written(tmp_path: Path) -> None:
    doc = _run(tmp_path, write=False)
    assert not Path(str(doc["path"])).exists()


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> regexcode._Table:
    """A fresh table of this process (skdbg's import installed the hook; this swaps what it serves)."""
    fresh = regexcode._Table(tmp_path / "t.marshal")
    monkeypatch.setattr(regexcode, "_table", fresh)
    return fresh


def _unique(template: str) -> str:
    """A pattern text ``re`` has never compiled in this process (its in-memory cache would answer)."""
    return template.replace("ID", uuid.uuid4().hex)


def test_a_pattern_is_noted_then_served(table: regexcode._Table) -> None:
    word = uuid.uuid4().hex
    text = rf"(?P<name>{word})\s+(\d+)"
    first = re.compile(text, re.IGNORECASE)
    key = (text, int(re.IGNORECASE))
    assert key in table.fresh
    re.purge()  # re's in-memory cache forgets it: the next compile asks the table
    table.stored = {key: table.fresh.pop(key)}
    served = re.compile(text, re.IGNORECASE)
    assert served == first and served.groupindex == first.groupindex and table.hits == 1
    m = served.fullmatch(f"{word.upper()}  42")
    assert m is not None and m.group("name", 2) == (word.upper(), "42")


def test_what_must_not_be_stored_goes_through(
    table: regexcode._Table, capsys: pytest.CaptureFixture[str]
) -> None:
    """A re.DEBUG compile prints and is not stored; a bad pattern raises re's own error, nothing stored."""
    text = _unique("IDx+")
    re.compile(text, re.DEBUG)
    assert "MAX_REPEAT" in capsys.readouterr().out
    with pytest.raises(re.error):
        re.compile(_unique("ID("))
    assert table.fresh == {}


def test_an_entry_this_python_refuses_is_compiled_afresh(table: regexcode._Table) -> None:
    text = _unique("IDy")
    table.stored = {(text, 0): ("not", "the", "arguments")}
    assert re.compile(text).fullmatch(text)
    assert (text, 0) in table.fresh  # replaced at exit


def test_patterns_compiled_in_many_threads_are_each_stored_right(table: regexcode._Table) -> None:
    texts = [_unique(rf"ID{i}(a|b)+\d{{{i}}}") for i in range(1, 9)]
    compiled: dict[str, re.Pattern[str]] = {}

    def work(text: str) -> None:
        compiled[text] = re.compile(text)

    threads = [threading.Thread(target=work, args=(t,)) for t in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    import _sre

    for text in texts:
        assert _sre.compile(*table.fresh[(text, 0)]) == compiled[text]


def test_a_damaged_or_foreign_file_reads_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "t.marshal"
    good = {("a+", 0): ("a+", 32, [1, 2, 3], 0, {}, (None,))}
    assert regexcode.save(path, good)
    assert regexcode.load(path) == good
    whole = path.read_bytes()
    for damaged in (whole[:-7], b"", b"junk"):
        path.write_bytes(damaged)
        assert regexcode.load(path) == {}
    body = marshal.dumps({"not a key": ()})
    path.write_bytes(marshal.dumps((regexcode.FILE_KIND, _magic(), zlib.crc32(body), body)))
    assert regexcode.load(path) == {}
    body = marshal.dumps(good)
    path.write_bytes(marshal.dumps(("skdbg-dataclass-code-3", _magic(), zlib.crc32(body), body)))
    assert regexcode.load(path) == {}  # the other table's kind


def _magic() -> bytes:
    import importlib.util

    return importlib.util.MAGIC_NUMBER


def test_locate_names_the_table() -> None:
    from click.testing import CliRunner

    from skdbg.cli import main

    result = CliRunner().invoke(main, ["locate", "--format", "json"])
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["regex_code"] == str(regexcode.cache_path())
    assert Path(doc["regex_code"]).name.startswith("regex_code.") and doc["class_code"] != doc["regex_code"]
