"""The record classes' compiled code is stored once and served back unchanged (skdbg.classcode).

Why these tests: the table replaces ``dataclasses``' compile step on every start, so a wrong entry
would change every record class. They check that a second start compiles nothing and gives the same
analysis, that every stored code object equals a fresh compile of its text, that a foreign or untrusted
file, or a damaged one, is never used (a damaged entry: that text compiled, the others served), and that
other modules' classes and ``exec`` calls are left alone. The
whole-process probes run in fresh interpreters with ``PYTHONPYCACHEPREFIX`` set, so they start without
a table and never touch the checkout's ``__pycache__``.
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import importlib.util
import json
import marshal
import os
import random
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

import pytest
from pycache_probe import analyze_probe, run_probe

from skdbg import classcode, pycache_store

REPO = Path(__file__).resolve().parents[1]
SCENE = REPO / "examples" / "scenes" / "aiv-fault-add-custom"

_PROBE = analyze_probe("classcode")


def _run(prefix: Path, *, write: bool = True) -> dict[str, object]:
    doc = run_probe(_PROBE, [str(SCENE)], prefix, write=write)
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
    texts = classcode.load(path)
    assert sum(t.startswith(("def build(", "def resource(o, M, R):")) for t in texts) > 40  # the builders too
    umask = os.umask(0o022)
    os.umask(umask)
    source = (REPO / "skdbg" / "pycache_store.py").stat().st_mode & 0o644
    # as a .pyc: the source's read bits and the owner's write bit, less the umask; never group-writable
    assert path.stat().st_mode & 0o777 == (source | 0o200) & ~umask
    assert path.stat().st_mode & 0o022 == 0

    second = _run(tmp_path)
    again = second["stats"]
    assert isinstance(again, dict)
    assert again["compiled"] == 0
    assert again["loaded"] == stats["compiled"]
    assert again["hits"] == stats["compiled"] + stats["hits"]  # every class made, each from the table
    assert second["output"] == first["output"]


_ORACLE = """
import hashlib, importlib, json, marshal, pkgutil, sys, types
how = sys.argv[1]
if how == "builtin":  # skdbg without the table: dataclasses compiles with its own exec
    stub = types.ModuleType("skdbg.classcode")
    stub.install = lambda *a, **k: None
    stub.generated_code = lambda text: compile(text, "<string>", "exec", dont_inherit=True)
    sys.modules["skdbg.classcode"] = stub
import skdbg
for info in pkgutil.walk_packages(skdbg.__path__, "skdbg."):
    importlib.import_module(info.name)
codes = {}
for name, mod in list(sys.modules.items()):
    if name.partition(".")[0] != "skdbg" or mod is None:
        continue
    for cls in vars(mod).values():
        if isinstance(cls, type) and "__dataclass_fields__" in vars(cls) and cls.__module__ == name:
            for meth, fn in vars(cls).items():
                code = getattr(fn, "__code__", None)
                if code is not None and code.co_filename == "<string>":
                    codes[f"{name}.{cls.__qualname__}.{meth}"] = hashlib.sha256(marshal.dumps(code)).hexdigest()
def shape(code):  # a builder's code as data (marshal's bytes of nested code depend on reference counts)
    consts = [shape(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts]
    return [code.co_code.hex(), consts, code.co_names, code.co_varnames, code.co_flags, code.co_argcount]
from skdbg.parsers import sk_copies
builders = {**sk_copies._BUILDERS, **{f"R_{c.__name__}": f for c, f in sk_copies._RESOURCERS.items()}}
for key, fn in builders.items():
    code = getattr(fn, "__code__", None)
    if code is not None:
        codes[f"builder.{key}"] = hashlib.sha256(json.dumps(shape(code)).encode()).hexdigest()
from skdbg import classcode
print(json.dumps({"codes": codes, "stats": classcode.stats() if how == "table" else {},
                  "path": str(classcode.cache_path()) if how == "table" else ""}))
"""


def _generated_code(prefix: Path, how: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    out = subprocess.run(
        [sys.executable, "-c", _ORACLE, how], capture_output=True, text=True, env=env, cwd=REPO, check=True
    )
    doc: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return doc


def test_every_generated_method_is_what_dataclasses_compiles_itself(tmp_path: Path) -> None:
    """Every skdbg module imported: each generated method's code (marshalled: bytecode, constants,
    names, flags, positions) equals the one ``dataclasses`` makes with the builtin ``exec``, with the
    table empty (compiled and stored) and full (every class served from it); so does each record
    builder the parsers generate (``classcode.generated_code``)."""
    builtin = _generated_code(tmp_path, "builtin")["codes"]
    assert len(builtin) > 1000
    assert sum(key.startswith("builder.") for key in builtin) > 40  # the parsers' record builders too
    cold = _generated_code(tmp_path, "table")
    assert cold["codes"] == builtin and cold["stats"]["loaded"] == 0  # compiled, then stored
    warm = _generated_code(tmp_path, "table")
    assert warm["codes"] == builtin  # served from the table
    assert warm["stats"]["compiled"] == 0 and warm["stats"]["loaded"] == cold["stats"]["compiled"]


def test_no_table_is_written_when_bytecode_writing_is_off(tmp_path: Path) -> None:
    doc = _run(tmp_path, write=False)
    stats = doc["stats"]
    assert isinstance(stats, dict) and stats["compiled"] > 300
    assert not Path(str(doc["path"])).exists()


def _stored(kind: object, magic: object, payload: object, crc: int | None = None) -> bytes:
    """A file in the single-payload layout (:func:`pycache_store.write_payload`): the previous table's."""
    data = marshal.dumps(payload)
    return marshal.dumps((kind, magic, zlib.crc32(data) if crc is None else crc, data))


def _indexed(index: object, blob: bytes = b"", *, kind: object = classcode.FILE_KIND, magic: object = None,
             crc: int | None = None) -> bytes:  # fmt: skip
    """A file in the indexed layout (:func:`pycache_store.write_indexed`), written here by hand: an
    8-byte little-endian length, the marshalled ``(kind, magic, crc, marshalled index)``, the blob."""
    body = marshal.dumps(index)
    head = marshal.dumps(
        (kind, _MAGIC if magic is None else magic, zlib.crc32(body) if crc is None else crc, body)
    )
    return len(head).to_bytes(8, "little") + head + blob


def _u32(*values: int) -> bytes:
    return b"".join(v.to_bytes(4, "little") for v in values)


_CODE = {"x = 1": compile("x = 1", "<string>", "exec", dont_inherit=True)}
_ENTRIES = {"x = 1": marshal.dumps(_CODE["x = 1"])}  # as load() gives them
_MAGIC = importlib.util.MAGIC_NUMBER
_ENTRY = marshal.dumps(("x = 1", _ENTRIES["x = 1"]))  # one entry of the blob
_KEY = zlib.crc32(b"x = 1")
_CRC = zlib.crc32(_ENTRY)
_GOOD = (_u32(_KEY), _u32(len(_ENTRY)), _u32(_CRC))  # its index
_ENTRY_Y = marshal.dumps(("y = 2", marshal.dumps(compile("y = 2", "<string>", "exec", dont_inherit=True))))
_KEY_Y, _CRC_Y = zlib.crc32(b"y = 2"), zlib.crc32(_ENTRY_Y)
_ONE = marshal.dumps(1)


def test_a_table_written_by_hand_reads_back(tmp_path: Path) -> None:
    """The layout the cases below damage, written from the format's description, reads as its entry."""
    path = tmp_path / "t.marshal"
    path.write_bytes(_indexed(_GOOD, _ENTRY))
    path.chmod(0o600)
    index = classcode.read_index(path)
    assert index is not None and len(index) == 1 and index.marshalled("x = 1") == _ENTRIES["x = 1"]
    assert classcode.load(path) == _ENTRIES


@pytest.mark.parametrize(
    "content",
    [
        b"not a marshal stream",
        _indexed(_GOOD, _ENTRY)[:30],  # cut in its head
        _indexed(_GOOD, _ENTRY, magic=b"\0\0\r\n"),  # another Python's
        _indexed(_GOOD, _ENTRY, kind="skdbg-dataclass-code-3"),  # another layout's kind
        _stored("skdbg-dataclass-code-3", _MAGIC, _ENTRIES),  # the previous layout, as it was written
        _stored(classcode.FILE_KIND, _MAGIC, _ENTRIES),  # the previous layout under this kind
        _indexed(_GOOD, _ENTRY, crc=1),  # an index that does not match its CRC
        _indexed(_ENTRIES, _ENTRY),  # an index that is not three arrays
        _indexed(_GOOD[:2], _ENTRY),
        _indexed((_u32(_KEY), "not bytes", _GOOD[2]), _ENTRY),
        _indexed((_u32(_KEY), _u32(len(_ENTRY))[:3], _GOOD[2]), _ENTRY),  # not whole numbers
        _indexed((_u32(_KEY), _u32(len(_ENTRY), len(_ENTRY)), _GOOD[2]), _ENTRY),  # arrays of two lengths
        _indexed(  # two intact entries, their keys out of order (a lookup's search would miss one)
            (_u32(_KEY_Y, _KEY), _u32(len(_ENTRY_Y), len(_ENTRY_Y) + len(_ENTRY)), _u32(_CRC_Y, _CRC)),
            _ENTRY_Y + _ENTRY,
        )
        if _KEY_Y > _KEY
        else _indexed(
            (_u32(_KEY, _KEY_Y), _u32(len(_ENTRY), len(_ENTRY) + len(_ENTRY_Y)), _u32(_CRC, _CRC_Y)),
            _ENTRY + _ENTRY_Y,
        ),
        _indexed(  # an entry ending before the one before it: the second reads none of its bytes
            (_u32(*sorted((_KEY, _KEY_Y))), _u32(len(_ENTRY) + len(_ENTRY_Y), len(_ENTRY)), _u32(0, 0)),
            _ENTRY + _ENTRY_Y,
        ),
        _indexed(_GOOD, _ENTRY[:-1]),  # its only entry cut
        _indexed(_GOOD, _ENTRY[:-1] + b"!"),  # its only entry damaged (its CRC differs)
        _indexed((_u32(_KEY), _u32(len(_ONE)), _u32(zlib.crc32(_ONE))), _ONE),  # intact bytes, not an entry
        _indexed((_u32(_KEY + 1), _GOOD[1], _GOOD[2]), _ENTRY),  # an entry under another text's key
        marshal.dumps([1, 2, 3]),
    ],
    ids=[
        "garbage",
        "cut",
        "other-python",
        "other-kind",
        "previous-layout",
        "previous-layout-this-kind",
        "crc",
        "index-not-arrays",
        "index-two-arrays",
        "index-not-bytes",
        "index-not-whole-numbers",
        "index-lengths-differ",
        "keys-out-of-order",
        "ends-out-of-order",
        "entry-cut",
        "entry-damaged",
        "entry-not-a-pair",
        "entry-under-another-key",
        "list",
    ],  # fmt: skip
)
def test_an_unusable_table_is_replaced_not_used(tmp_path: Path, content: bytes) -> None:
    """A file no entry can be taken from reads as no table (:func:`classcode.load`: the whole table or
    nothing); the next run compiles every text and rewrites it whole."""
    bare = _run(tmp_path, write=False)  # no table: every text compiled
    path = Path(str(bare["path"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    path.chmod(0o600)
    assert classcode.load(path) == {}
    stats, none = _run(tmp_path)["stats"], bare["stats"]
    assert isinstance(stats, dict) and isinstance(none, dict)
    assert stats["compiled"] == none["compiled"] > 300 and stats["hits"] == none["hits"]
    assert len(classcode.load(path)) == stats["compiled"]  # rewritten whole, and valid


def test_a_damaged_table_never_raises(tmp_path: Path) -> None:
    """Random damage to a real table: the load gives the whole table or nothing, never an error and
    never a part of it; a run's lookups (the index, then one entry a text) give each text its stored
    code or nothing, never an error or another text's code. The CRCs are what catch damage (the head's,
    each entry's): marshal itself is not safe against any bytes (on some Pythons a damaged code object
    crashes it), which is why only a file of this user or root is read, as for ``.pyc`` files."""
    path = Path(str(_run(tmp_path)["path"]))
    good = path.read_bytes()
    whole = classcode.load(path)
    assert len(whole) > 300
    texts = sorted(whole)
    rng = random.Random(18)
    damaged = tmp_path / "damaged.marshal"
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        damaged.write_bytes(bytes(data))
        damaged.chmod(0o600)
        assert classcode.load(damaged) in ({}, whole)
        index = classcode.read_index(damaged)
        for text in rng.sample(texts, 40) if index is not None else ():
            assert index.marshalled(text) in (None, whole[text])


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


def test_a_table_of_another_user_is_not_trusted(tmp_path: Path) -> None:
    path = _table_file(tmp_path)
    try:
        os.chown(path, 54321, -1)
    except PermissionError:
        pytest.skip("only root can give a file to another user")
    assert classcode.load(path) == {}


def test_a_fifo_in_place_of_the_table_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "t.marshal"
    os.mkfifo(fifo)
    probe = (
        f"from pathlib import Path; from skdbg import classcode; print(classcode.load(Path({str(fifo)!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "{}"


def test_a_table_behind_a_symbolic_link_is_not_followed(tmp_path: Path) -> None:
    link = tmp_path / "link.marshal"
    link.symlink_to(_table_file(tmp_path))
    assert classcode.load(link) == {}


@pytest.mark.parametrize(
    ("source", "table"),
    [(0o644, 0o644), (0o664, 0o644), (0o666, 0o644), (0o440, 0o640), (0o600, 0o600), (0o400, 0o600)],
)
def test_the_table_is_readable_as_the_sources_and_writable_by_its_owner_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: int, table: int
) -> None:
    """A group-writable checkout (umask 002) must still give a table that later starts trust."""
    fake = tmp_path / "pycache_store.py"
    fake.write_text("")
    fake.chmod(source)
    monkeypatch.setattr(pycache_store, "__file__", str(fake))
    path = tmp_path / "t.marshal"
    old_umask = os.umask(0o002)
    try:
        assert classcode.save(path, _CODE)
    finally:
        os.umask(old_umask)
    assert path.stat().st_mode & 0o777 == table
    assert list(classcode.load(path)) == ["x = 1"]


def test_without_its_source_the_table_is_made_readable_by_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pycache_store, "__file__", str(tmp_path / "gone.py"))
    path = tmp_path / "t.marshal"
    old_umask = os.umask(0)
    try:
        assert classcode.save(path, _CODE)
    finally:
        os.umask(old_umask)
    assert path.stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_killed_writes_temporary_file_is_replaced(tmp_path: Path, kind: str) -> None:
    """A temporary file left by a killed process of the same pid, or a link planted there, is removed,
    never written through."""
    path = tmp_path / "t.marshal"
    stale = tmp_path / f"t.marshal.{os.getpid()}.tmp"
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    if kind == "file":
        stale.write_bytes(b"half a table")
    else:
        stale.symlink_to(victim)
    assert classcode.save(path, _CODE)
    assert list(classcode.load(path)) == ["x = 1"]
    assert not stale.exists() and not stale.is_symlink() and victim.read_bytes() == b"keep"


def test_a_table_that_cannot_be_written_is_left_alone(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert not classcode.save(blocker / "t.marshal", {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


#: ``classcode._exec`` called from code compiled without this module's ``from __future__`` flags, as
#: ``dataclasses`` calls it (a caller with flags gets its texts compiled for it, not the table's)
_as_dataclasses = eval(
    compile("lambda *a, **k: _exec(*a, **k)", "<dataclasses>", "eval", dont_inherit=True),
    {"_exec": classcode._exec},
)


@pytest.fixture
def table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> classcode._Table:
    """A fresh table at a scratch path in place of this process's."""
    fresh = classcode._Table(tmp_path / "t.marshal")
    monkeypatch.setattr(classcode, "_table", fresh)
    return fresh


def test_only_skdbg_texts_are_served(table: classcode._Table) -> None:
    ns: dict[str, object] = {}
    _as_dataclasses("y = 2", {"__name__": "other.module"}, ns)
    _as_dataclasses("y = 2", {"__name__": "skdbgx"}, ns)  # a name that only starts alike
    assert ns == {"y": 2} and table.compiled == 0 and table.stored is None
    _as_dataclasses("y = 3", {"__name__": "skdbg.parsers.x"}, ns)
    _as_dataclasses("y = 3", {"__name__": "skdbg"}, ns)
    assert ns == {"y": 3} and (table.compiled, table.hits) == (1, 1)


def test_dataclasses_of_other_modules_are_not_stored(table: classcode._Table) -> None:
    @dataclasses.dataclass(frozen=True)
    class Local:
        a: int
        b: str = "b"

    assert Local(1) == Local(1, "b") and repr(Local(2)).endswith("Local(a=2, b='b')")
    assert table.compiled == 0 and table.stored is None
    # as the builtin exec makes it: the field types (strings here, under this module's __future__
    # import), not the generated names the text uses, which this module's flags would have kept
    assert Local.__init__.__annotations__ == {"a": "int", "b": "str", "return": None}


def test_a_caller_with_future_flags_gets_them_as_from_the_builtin(table: classcode._Table) -> None:
    ns: dict[str, object] = {"__name__": "skdbg.x"}
    classcode._exec("def f(x: int) -> None: pass", ns)  # called from here: `annotations` is on
    f = ns["f"]
    assert callable(f) and f.__annotations__ == {"x": "int", "return": "None"}
    assert table.compiled == 0  # compiled for this caller, not stored


@pytest.mark.skipif(sys.version_info < (3, 11), reason="exec() takes closure= from Python 3.11")
def test_exec_keywords_are_passed_on(table: classcode._Table) -> None:
    def outer() -> Callable[[], int]:
        v = 7

        def inner() -> int:
            return v

        return inner

    inner = outer()
    ns: dict[str, object] = {"__builtins__": builtins}
    body = compile("result = v", "<string>", "exec")
    free = next(c for c in outer.__code__.co_consts if isinstance(c, CodeType))
    assert free.co_freevars == ("v",) and inner.__closure__ is not None
    classcode._exec(free, ns, None, closure=inner.__closure__)  # runs inner's body: returns 7
    with pytest.raises(TypeError):  # the keyword reached the builtin, which checks it
        classcode._exec(body, ns, None, closure=inner.__closure__)


def test_a_grown_table_keeps_only_this_runs_texts(
    table: classcode._Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = {f"v = {i}": compile(f"v = {i}", "<string>", "exec", dont_inherit=True) for i in range(3)}
    assert table.path is not None and classcode.save(table.path, old)
    monkeypatch.setattr(classcode, "MAX_ENTRIES", 3)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    ns: dict[str, object] = {}
    _as_dataclasses("v = 0", {"__name__": "skdbg.x"}, ns)  # from the file
    _as_dataclasses("v = 9", {"__name__": "skdbg.x"}, ns)  # new: four texts now, over the bound
    classcode._store()
    assert sorted(classcode.load(table.path)) == ["v = 0", "v = 9"]


def test_nothing_is_written_when_nothing_was_compiled(
    table: classcode._Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert table.path is not None and classcode.save(table.path, {"v = 0": compile("v = 0", "<s>", "exec")})
    before = table.path.stat().st_mtime_ns
    _as_dataclasses("v = 0", {"__name__": "skdbg.x"}, {})
    classcode._store()
    assert table.path.stat().st_mtime_ns == before and table.hits == 1


def test_entries_are_decoded_when_asked_for_and_a_bad_one_is_rewritten(
    table: classcode._Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the texts a run uses are unmarshalled; an entry that is not a code object (a file written
    wrong, its CRC intact) is compiled instead and the table rewritten with the good code."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    good = {f"v = {i}": compile(f"v = {i}", "<string>", "exec", dont_inherit=True) for i in range(3)}
    assert table.path is not None
    assert classcode.save(table.path, {**good, "w = 1": marshal.dumps(("not", "code"))})
    ns: dict[str, object] = {}
    _as_dataclasses("v = 1", {"__name__": "skdbg.x"}, ns)
    assert ns["v"] == 1 and list(table.codes) == ["v = 1"] and (table.hits, table.compiled) == (1, 0)
    _as_dataclasses("w = 1", {"__name__": "skdbg.x"}, ns)
    assert ns["w"] == 1 and (table.hits, table.compiled) == (1, 1)
    classcode._store()
    stored = classcode.load(table.path)
    assert sorted(stored) == ["v = 0", "v = 1", "v = 2", "w = 1"]
    assert marshal.loads(stored["w = 1"]) == compile("w = 1", "<string>", "exec", dont_inherit=True)


def _cell() -> object:
    v = 1

    def inner() -> int:
        return v

    assert inner.__closure__ is not None
    return inner.__closure__[0]


class _Locals(collections.UserDict[str, object]):
    """A mapping that is not a dict: the builtin accepts it as locals."""


#: ``exec`` calls other than ``dataclasses``' own, each made inside a function (its default namespaces
#: are that function's) and giving what can be observed afterwards: the namespaces' names and values,
#: or the error. Each runs once with the builtin and once with ``classcode._exec``.
_SHAPES: dict[str, Callable[[Callable[..., Any]], object]] = {}


def _shape(fn: Callable[[Callable[..., Any]], object]) -> Callable[[Callable[..., Any]], object]:
    _SHAPES[fn.__name__] = fn
    return fn


def _names(ns: Any) -> list[tuple[str, object]]:
    return sorted((k, v) for k, v in dict(ns).items() if k != "__builtins__")


@_shape
def no_namespaces(ex: Callable[..., Any]) -> object:
    a = 5
    seen: list[object] = []
    ex("seen.append(a); a = 9; b = 6")  # rebinds a local: a snapshot (3.13) or the frame's dict
    return a, seen, sorted(k for k in locals() if k in ("a", "b"))


@_shape
def none_namespaces(ex: Callable[..., Any]) -> object:
    a = 5
    seen: list[object] = []
    ex("seen.append(a); a = 9", None, None)
    return a, seen


@_shape
def globals_only(ex: Callable[..., Any]) -> object:
    g: dict[str, object] = {"k": 1}
    ex("r = k + 1", g)
    return _names(g)


@_shape
def globals_and_none(ex: Callable[..., Any]) -> object:
    g: dict[str, object] = {}
    ex("r = 2", g, None)
    return _names(g)


@_shape
def none_and_locals(ex: Callable[..., Any]) -> object:
    here: dict[str, object] = {}
    ex("w = __name__", None, here)
    return _names(here)


@_shape
def skdbg_namespaces(ex: Callable[..., Any]) -> object:
    g: dict[str, object] = {"__name__": "skdbg.x"}
    here: dict[str, object] = {}
    ex("w = __name__", g, here)
    return _names(here)


@_shape
def mapping_locals(ex: Callable[..., Any]) -> object:
    here = _Locals()
    ex("w = 3", {}, here)
    return _names(here.data)


@_shape
def dict_subclass_globals(ex: Callable[..., Any]) -> object:
    g = collections.OrderedDict({"__name__": "skdbg.x"})
    ex("w = 4", g)
    return _names(g)


@_shape
def code_object(ex: Callable[..., Any]) -> object:
    g: dict[str, object] = {}
    ex(compile("w = 5", "<s>", "exec"), g)
    return _names(g)


@_shape
def bytes_with_coding(ex: Callable[..., Any]) -> object:
    g: dict[str, object] = {}
    ex("# -*- coding: latin-1 -*-\nw = '\xe9'\n".encode("latin-1"), g)
    return _names(g)


@_shape
def annotations_of_the_caller(ex: Callable[..., Any]) -> object:
    g: dict[str, object] = {"__name__": "skdbg.x"}
    ex("def f(x: int) -> None: pass", g)
    f = g["f"]
    return getattr(f, "__annotations__", None)  # this module's `annotations` flag: strings


@_shape
def nothing(ex: Callable[..., Any]) -> object:
    return ex()


@_shape
def globals_not_a_dict(ex: Callable[..., Any]) -> object:
    return ex("this is not python", ["not", "a", "dict"])


@_shape
def locals_not_a_mapping(ex: Callable[..., Any]) -> object:
    return ex("this is not python", {"__name__": "skdbg.x"}, 42)


@_shape
def too_many_arguments(ex: Callable[..., Any]) -> object:
    return ex("w = 1", {}, {}, 4)


@_shape
def unknown_keyword(ex: Callable[..., Any]) -> object:
    return ex("this is not python", {"__name__": "skdbg.x"}, {}, bogus=1)


@_shape
def closure_with_text(ex: Callable[..., Any]) -> object:
    return ex("w = 1", {"__name__": "skdbg.x"}, {}, closure=(_cell(),))


@_shape
def closure_none(ex: Callable[..., Any]) -> object:
    here: dict[str, object] = {}
    ex("w = 1", {}, here, closure=None)
    return _names(here)


@_shape
def namespaces_by_keyword(ex: Callable[..., Any]) -> object:  # 3.13 takes them; earlier ones refuse
    g: dict[str, object] = {"__name__": "skdbg.x"}
    here: dict[str, object] = {}
    ex("w = 6", globals=g, locals=here)
    return _names(here)


@_shape
def globals_by_keyword_after_none(ex: Callable[..., Any]) -> object:
    g: dict[str, object] = {}
    ex("w = 7", None, globals=g)
    return _names(g)


@_shape
def globals_by_position_and_keyword(ex: Callable[..., Any]) -> object:
    g: dict[str, object] = {}
    return ex("w = 8", g, globals=g)


@_shape
def locals_by_keyword_after_none(ex: Callable[..., Any]) -> object:
    here: dict[str, object] = {}
    ex("w = 9", None, None, locals=here)
    return _names(here)


class _NoName:
    def __str__(self) -> str:
        raise ZeroDivisionError("not a name")


@_shape
def odd_module_name(ex: Callable[..., Any]) -> object:
    """As ``dataclasses`` calls it (no ``__future__`` flags), with a ``__name__`` that is not text."""
    here: dict[str, object] = {}
    call = eval(compile("lambda *a: ex(*a)", "<m>", "eval", dont_inherit=True), {"ex": ex})
    call("w = 10", {"__name__": _NoName()}, here)
    return _names(here)


@_shape
def module_level_comprehension(ex: Callable[..., Any]) -> object:
    """Called from a comprehension of module code (3.13 gives it a proxy of the module's locals)."""
    ns: dict[str, object] = {"ex": ex, "__name__": "skdbg.x"}
    module = (
        "y = 1\nr = [ex('y = 2; new = 3') for _ in [0]]\n"
        "after = [(y, locals().get('y'), locals().get('new')) for _ in [0]][0]\n"  # what a later one sees
    )
    builtins.exec(compile(module, "<m>", "exec", dont_inherit=True), ns)
    return ns["after"]


@_shape
def class_body(ex: Callable[..., Any]) -> object:
    ns: dict[str, object] = {"ex": ex}
    module = "class K:\n    y = 1\n    ex('y = 2')\nafter = K.y\n"
    builtins.exec(compile(module, "<m>", "exec", dont_inherit=True), ns)
    return ns["after"]


@_shape
def the_callers_builtins(ex: Callable[..., Any]) -> object:
    """A globals without ``__builtins__`` gets the caller's builtins."""
    ns: dict[str, object] = {"ex": ex, "__builtins__": {**vars(builtins), "len": lambda _x: 42}}
    module = "g = {}\nex('r = len([1, 2])', g)\nafter = g['r']\n"
    builtins.exec(compile(module, "<m>", "exec", dont_inherit=True), ns)
    return ns["after"]


@_shape
def no_python_caller(ex: Callable[..., Any]) -> object:
    """A thread started from C runs ``exec`` with no Python frame below it."""
    import _thread
    import time

    g: dict[str, object] = {}
    _thread.start_new_thread(ex, ("r = 11", g))
    deadline = time.monotonic() + 10
    while "r" not in g and time.monotonic() < deadline:
        time.sleep(0.001)
    return _names(g)


def _outcome(shape: Callable[[Callable[..., Any]], object], ex: Callable[..., Any]) -> tuple[str, object]:
    try:
        return "returned", shape(ex)
    except Exception as exc:  # the error is the outcome compared
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("name", sorted(_SHAPES))
def test_every_other_call_is_the_builtins_own(table: classcode._Table, name: str) -> None:
    """Whatever the call, ``_exec`` gives what the builtin gives: the same namespaces, or the same
    error raised before anything runs or is stored (only ``dataclasses``' own call uses the table)."""
    assert _outcome(_SHAPES[name], classcode._exec) == _outcome(_SHAPES[name], builtins.exec)
    assert table.stored is None and table.compiled == 0


def test_a_damaged_entry_is_compiled_and_the_table_rewritten(
    table: classcode._Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry whose bytes no longer match their CRC is never unmarshalled: its text is compiled, the
    other entries are still served, and the table is written again whole."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    good = {f"v = {i}": compile(f"v = {i}", "<string>", "exec", dont_inherit=True) for i in range(3)}
    assert table.path is not None and classcode.save(table.path, good)
    index = classcode.read_index(table.path)
    assert index is not None
    at = list(index.keys).index(zlib.crc32(b"v = 1"))
    size = len(table.path.read_bytes()) - index.ends[-1]  # the blob's offset in the file: head and length
    data = bytearray(table.path.read_bytes())
    data[size + index.ends[at] - 1] ^= 0xFF  # the last byte of v = 1's entry
    table.path.write_bytes(bytes(data))
    assert classcode.load(table.path) == {}  # the whole table or nothing
    ns: dict[str, object] = {}
    _as_dataclasses("v = 0", {"__name__": "skdbg.x"}, ns)
    _as_dataclasses("v = 1", {"__name__": "skdbg.x"}, ns)
    assert ns["v"] == 1 and (table.hits, table.compiled) == (1, 1) and table.loaded == 3
    classcode._store()
    assert sorted(classcode.load(table.path)) == ["v = 0", "v = 1", "v = 2"]


def test_texts_that_share_a_key_are_each_served(
    table: classcode._Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two texts of one CRC-32 (forced here: every key the same) are both stored and each served its
    own code, never the other's."""
    monkeypatch.setattr(classcode, "_key", lambda text: 7)
    codes = {f"v = {i}": compile(f"v = {i}", "<string>", "exec", dont_inherit=True) for i in range(3)}
    assert table.path is not None and classcode.save(table.path, codes)
    index = classcode.read_index(table.path)
    assert index is not None and list(index.keys) == [7, 7, 7]
    for i in (2, 0, 1):
        ns: dict[str, object] = {}
        _as_dataclasses(f"v = {i}", {"__name__": "skdbg.x"}, ns)
        assert ns["v"] == i
    assert (table.hits, table.compiled) == (3, 0)
    assert classcode.load(table.path) == {t: marshal.dumps(c) for t, c in codes.items()}


def test_a_run_reads_the_entries_it_asks_for_from_the_file_it_opened(table: classcode._Table) -> None:
    """The table's entries are read when asked for (not the whole file), from the file opened first:
    replaced afterwards (a rewrite renames a new file into place), they still come from the opened one."""
    codes = {f"v = {i}": compile(f"v = {i}", "<string>", "exec", dont_inherit=True) for i in range(4)}
    assert table.path is not None and classcode.save(table.path, codes)
    ns: dict[str, object] = {}
    _as_dataclasses("v = 0", {"__name__": "skdbg.x"}, ns)
    stored = table.stored
    assert stored is not None and stored._whole is None  # one entry read, not the whole blob
    other = table.path.with_name("other.marshal")
    assert classcode.save(other, {"v = 1": compile("v = 100", "<string>", "exec", dont_inherit=True)})
    os.replace(other, table.path)
    _as_dataclasses("v = 1", {"__name__": "skdbg.x"}, ns)
    assert ns["v"] == 1 and (table.hits, table.compiled) == (2, 0)


def test_the_entries_a_cut_file_lost_read_as_absent(tmp_path: Path) -> None:
    """A file cut after it was opened: the entry that lost bytes reads as absent (its text is then
    compiled), never as a part of itself; the others are served."""
    path = tmp_path / "t.marshal"
    codes = {f"v = {i}": compile(f"v = {i}", "<string>", "exec", dont_inherit=True) for i in range(4)}
    assert classcode.save(path, codes)
    index = classcode.read_index(path)
    assert index is not None
    os.truncate(path, path.stat().st_size - 1)
    last = max(codes, key=lambda t: zlib.crc32(t.encode()))  # entries lie in key order
    got = {t: index.marshalled(t) for t in codes}
    assert got.pop(last) is None
    assert {t: marshal.loads(raw) for t, raw in got.items() if raw is not None} == {
        t: c for t, c in codes.items() if t != last
    }


_IMPORTS = """
import importlib, json, sys
from skdbg import classcode
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps({"stats": classcode.stats(), "path": str(classcode.cache_path())}))
"""


def test_a_run_that_compiles_more_keeps_every_stored_entry(tmp_path: Path) -> None:
    """Whole processes, each ending as the interpreter ends: a second run that makes classes the table
    lacks rewrites it at exit with the first run's entries and its own (the stored entries are still
    read then: the file the run opened is not closed before the table's exit hook)."""
    first = run_probe(_IMPORTS, ["skdbg.parsers.common"], tmp_path)
    path = Path(str(first["path"]))
    before = classcode.load(path)
    assert len(before) > 5
    second = run_probe(_IMPORTS, ["skdbg.parsers.common", "skdbg.triage.model"], tmp_path)
    stats = second["stats"]
    assert isinstance(stats, dict) and stats["loaded"] == len(before) and stats["compiled"] > 10
    after = classcode.load(path)
    assert len(after) == len(before) + stats["compiled"] and before.items() <= after.items()


def test_entries_are_read_where_the_system_has_no_pread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without ``os.pread`` (not every system has it) the head and each entry are read by a seek and a
    read: the same entries come back."""
    path = tmp_path / "t.marshal"
    codes = {f"v = {i}": compile(f"v = {i}", "<string>", "exec", dont_inherit=True) for i in range(3)}
    assert classcode.save(path, codes)
    monkeypatch.setattr(pycache_store, "_PREAD", None)
    monkeypatch.delattr(os, "pread")  # (nothing reaches it either)
    index = classcode.read_index(path)
    assert index is not None
    got = {t: index.marshalled(t) for t in reversed(codes)}
    assert {t: marshal.loads(raw) for t, raw in got.items() if raw is not None} == codes
