"""The record classes' compiled code is stored once and served back unchanged (skdbg.classcode).

Why these tests: the table replaces ``dataclasses``' compile step on every start, so a wrong entry
would change every record class. They check that a second start compiles nothing and gives the same
analysis, that every stored code object equals a fresh compile of its text, that a damaged, foreign or
untrusted file is never used, and that other modules' classes and ``exec`` calls are left alone. The
whole-process probes run in fresh interpreters with ``PYTHONPYCACHEPREFIX`` set, so they start without
a table and never touch the checkout's ``__pycache__``.
"""

from __future__ import annotations
import __future__

import dataclasses
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skdbg import classcode

REPO = Path(__file__).resolve().parents[1]
SCENE = REPO / "examples" / "scenes" / "aiv-fault-add-custom"

_PROBE = """
import hashlib, json, sys
from click.testing import CliRunner
from skdbg import classcode
from skdbg.cli import main
result = CliRunner().invoke(main, ["analyze", sys.argv[1], "--format", "json", "--no-cache"])
print(json.dumps({"exit": result.exit_code, "stats": classcode.stats(), "path": str(classcode.cache_path()),
                  "output": hashlib.sha256(result.output.encode()).hexdigest()}))
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
    assert path.is_relative_to(tmp_path)  # PYTHONPYCACHEPREFIX is honoured, like the .pyc files
    stats = first["stats"]
    assert isinstance(stats, dict)
    assert stats["loaded"] == 0 and stats["compiled"] > 300  # ~180 classes, several methods each
    assert path.is_file()
    assert path.stat().st_mode & 0o077 == 0  # owner-only

    second = _run(tmp_path)
    again = second["stats"]
    assert isinstance(again, dict)
    assert again["compiled"] == 0
    assert again["loaded"] == stats["compiled"]
    assert again["hits"] == stats["compiled"] + stats["hits"]  # every class made, each from the table
    assert second["output"] == first["output"]


def test_stored_code_equals_a_fresh_compile(tmp_path: Path) -> None:
    path = Path(str(_run(tmp_path)["path"]))
    codes = classcode.load(path)
    assert len(codes) > 300
    for text, code in codes.items():
        assert code == compile(text, "<string>", "exec", dont_inherit=True), text
    # the generated __init__ keeps real annotations: this module's `from __future__ import annotations`
    # (which a plain compile() here inherits) is not in the stored code
    probe = next(t for t in codes if "def __init__(self," in t and ":_type_" in t)
    future = __future__.annotations.compiler_flag
    assert compile(probe, "<string>", "exec").co_flags & future
    assert not codes[probe].co_flags & future


def test_no_table_is_written_when_bytecode_writing_is_off(tmp_path: Path) -> None:
    doc = _run(tmp_path, write=False)
    stats = doc["stats"]
    assert isinstance(stats, dict) and stats["compiled"] > 300
    assert not Path(str(doc["path"])).exists()


@pytest.mark.parametrize(
    "content",
    [
        b"not a marshal stream",
        marshal.dumps((classcode.FILE_KIND, b"\0\0\r\n", {}))[:10],  # cut
        marshal.dumps((classcode.FILE_KIND, b"\0\0\r\n", {"x = 1": compile("x = 1", "<string>", "exec")})),
        marshal.dumps(("another-kind", b"", {})),
        marshal.dumps([1, 2, 3]),
    ],
    ids=["garbage", "cut", "other-python", "other-kind", "not-a-tuple"],
)
def test_an_unusable_table_is_replaced_not_used(tmp_path: Path, content: bytes) -> None:
    path = Path(str(_run(tmp_path, write=False)["path"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    path.chmod(0o600)
    assert classcode.load(path) == {}
    stats = _run(tmp_path)["stats"]
    assert isinstance(stats, dict)
    assert stats["loaded"] == 0 and stats["compiled"] > 300
    assert len(classcode.load(path)) == stats["compiled"]  # rewritten whole, and valid


def _table_file(tmp_path: Path) -> Path:
    path = tmp_path / "t.marshal"
    assert classcode.save(path, {"x = 1": compile("x = 1", "<string>", "exec", dont_inherit=True)})
    return path


def test_a_table_others_may_write_is_not_trusted(tmp_path: Path) -> None:
    path = _table_file(tmp_path)
    assert list(classcode.load(path)) == ["x = 1"]
    path.chmod(0o620)
    assert classcode.load(path) == {}
    path.chmod(0o602)
    assert classcode.load(path) == {}


def test_a_table_behind_a_symbolic_link_is_not_followed(tmp_path: Path) -> None:
    link = tmp_path / "link.marshal"
    link.symlink_to(_table_file(tmp_path))
    assert classcode.load(link) == {}


def test_a_table_that_cannot_be_written_is_left_alone(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert not classcode.save(blocker / "t.marshal", {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> classcode._Table:
    """A fresh table at a scratch path in place of this process's."""
    fresh = classcode._Table(tmp_path / "t.marshal")
    monkeypatch.setattr(classcode, "_table", fresh)
    return fresh


def test_only_skdbg_texts_are_served(table: classcode._Table) -> None:
    ns: dict[str, object] = {}
    classcode._exec("y = 2", {"__name__": "other.module"}, ns)
    classcode._exec("y = 2", {"__name__": "skdbgx"}, ns)  # a name that only starts alike
    assert ns == {"y": 2} and table.compiled == 0 and table.codes is None
    classcode._exec("y = 3", {"__name__": "skdbg.parsers.x"}, ns)
    classcode._exec("y = 3", {"__name__": "skdbg"}, ns)
    assert ns == {"y": 3} and (table.compiled, table.hits) == (1, 1)


def test_exec_without_namespaces_runs_in_the_callers(table: classcode._Table) -> None:
    here: dict[str, object] = {}
    classcode._exec("w = __name__", None, here)
    assert here == {"w": __name__}


def test_dataclasses_of_other_modules_are_not_stored(table: classcode._Table) -> None:
    @dataclasses.dataclass(frozen=True)
    class Local:
        a: int
        b: str = "b"

    assert Local(1) == Local(1, "b") and repr(Local(2)).endswith("Local(a=2, b='b')")
    assert table.compiled == 0 and table.codes is None


def test_a_grown_table_keeps_only_this_runs_texts(
    table: classcode._Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = {f"v = {i}": compile(f"v = {i}", "<string>", "exec", dont_inherit=True) for i in range(3)}
    assert table.path is not None and classcode.save(table.path, old)
    monkeypatch.setattr(classcode, "MAX_ENTRIES", 3)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    ns: dict[str, object] = {}
    classcode._exec("v = 0", {"__name__": "skdbg.x"}, ns)  # from the file
    classcode._exec("v = 9", {"__name__": "skdbg.x"}, ns)  # new: four texts now, over the bound
    classcode._store()
    assert sorted(classcode.load(table.path)) == ["v = 0", "v = 9"]


def test_nothing_is_written_when_nothing_was_compiled(
    table: classcode._Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert table.path is not None and classcode.save(table.path, {"v = 0": compile("v = 0", "<s>", "exec")})
    before = table.path.stat().st_mtime_ns
    classcode._exec("v = 0", {"__name__": "skdbg.x"}, {})
    classcode._store()
    assert table.path.stat().st_mtime_ns == before and table.hits == 1
