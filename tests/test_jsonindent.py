"""skdbg.jsonindent.dumps_indented against the standard library's ``json.dumps(indent=...)``: the same
text for any document, the same exceptions for what it refuses."""

from __future__ import annotations

import collections
import datetime
import enum
import json
import math
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg import jsonindent
from skdbg.jsonindent import dumps_indented

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
)
KEYS = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(KEYS, inner, max_size=5),
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(doc=DOCUMENTS, indent=st.sampled_from([0, 1, 2, 4]), ensure_ascii=st.booleans())
def test_the_text_is_the_standard_librarys(doc: Any, indent: int, ensure_ascii: bool) -> None:
    assert dumps_indented(doc, indent=indent, ensure_ascii=ensure_ascii) == json.dumps(
        doc, indent=indent, ensure_ascii=ensure_ascii
    )


def test_a_seeded_batch_of_deep_documents_matches() -> None:
    """Deeper and wider than the property test reaches: nesting to 7 levels, flat and mixed containers
    side by side, keys of every kind the standard library converts, strings it must escape."""
    rng = random.Random(20261205)
    texts = ["", "plain", 'quote " and \\ backslash', "line\nbreak\ttab", "é ü", "\U0001f600", "\x00\x1f"]
    keys: list[Any] = ["k", "ü", 7, -3, 2.5, math.nan, math.inf, True, False, None, ""]

    def make(depth: int) -> Any:
        r = rng.random()
        if depth > 6 or r < 0.35:
            return rng.choice([None, True, False, 0, -1, 2**70, 1.5, -0.0, math.nan, -math.inf, *texts])
        if r < 0.65:
            return [make(depth + 1) for _ in range(rng.randint(0, 5))]
        if r < 0.75:
            return tuple(make(depth + 1) for _ in range(rng.randint(0, 3)))
        return {rng.choice(keys): make(depth + 1) for _ in range(rng.randint(0, 5))}

    for _ in range(3000):
        doc = make(0)
        for indent in (1, 2):
            for ensure_ascii in (True, False):
                want = json.dumps(doc, indent=indent, ensure_ascii=ensure_ascii)
                assert dumps_indented(doc, indent=indent, ensure_ascii=ensure_ascii) == want


def test_an_analysis_and_an_adapt_manifest_match(tmp_path: Path) -> None:
    """The two documents it writes in the program, made by the program on bundled inputs."""
    from skdbg.codegen.adapt import AdaptOptions, adapt_asset
    from skdbg.triage.engine import analyze

    scenes = sorted(p for p in (Path(__file__).parents[1] / "examples" / "scenes").iterdir() if p.is_dir())
    assert scenes
    for scene in scenes:
        doc = analyze(scene).to_json()
        assert dumps_indented(doc, indent=2, ensure_ascii=False) == json.dumps(
            doc, indent=2, ensure_ascii=False
        )
    asset = tmp_path / "asset"
    asset.mkdir()
    for i in range(3):
        (asset / f"op_{i}.asc").write_text(
            '#include "kernel_operator.h"\n'
            f'extern "C" __global__ __aicore__ void op_{i}(GM_ADDR x, GM_ADDR y, uint32_t n{i}) {{\n'
            "    AscendC::TPipe pipe;\n}\n"
        )
    manifest = adapt_asset(asset, tmp_path / "out", AdaptOptions())
    assert manifest["per_file"], "the manifest lists the adapted files"
    written = (tmp_path / "out" / "operator-sk-adapted.json").read_text()
    assert written == json.dumps(manifest, indent=2) + "\n"


@pytest.mark.parametrize(
    ("doc", "error"),
    [
        ({1j: 1, "a": [1]}, TypeError),  # a key the standard library cannot convert, in a nested mapping
        ({"a": {2j: 1}}, TypeError),  # the same in a flat mapping
        # a class of a module: the C encoder names it datetime.date, the standard library date
        ({datetime.date(2020, 1, 1): 1}, TypeError),
        ({datetime.date(2020, 1, 1): [1]}, TypeError),
        ([object()], TypeError),
        ({"a": [{1, 2}], "b": [[]]}, TypeError),
        ([math.nan, [1]], None),  # accepted: compared as text below
    ],
)
def test_what_the_standard_library_refuses_is_refused_with_its_message(doc: Any, error: type | None) -> None:
    if error is None:
        assert dumps_indented(doc) == json.dumps(doc, indent=2)
        return
    with pytest.raises(error) as theirs:
        json.dumps(doc, indent=2)
    with pytest.raises(error) as ours:
        dumps_indented(doc, indent=2)
    assert str(ours.value) == str(theirs.value)


def test_a_circular_reference_is_a_value_error() -> None:
    inner: list[Any] = [1]
    doc = {"a": [inner, {"b": []}]}
    inner.append(doc)
    with pytest.raises(ValueError, match="Circular reference detected"):
        dumps_indented(doc)
    # the same object twice, side by side, is no cycle
    shared = {"x": [1, 2]}
    twice = [shared, shared, {"again": shared}]
    assert dumps_indented(twice) == json.dumps(twice, indent=2)


def test_without_the_c_encoder_the_standard_library_writes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonindent, "c_make_encoder", None)
    doc = {"a": [1, {"b": "é"}], "c": []}
    assert dumps_indented(doc, ensure_ascii=False) == json.dumps(doc, indent=2, ensure_ascii=False)


def test_indents_that_are_no_count_are_the_standard_librarys() -> None:
    doc = {"a": [1, {"b": 2}]}
    for indent in ("\t", None, True, 0, -1):
        assert dumps_indented(doc, indent=indent) == json.dumps(doc, indent=indent)  # type: ignore[arg-type]


def test_a_mapping_is_judged_flat_by_what_its_items_hold() -> None:
    class Odd(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            return [("a", [1])]

    doc = Odd(a=1)
    assert dumps_indented(doc) == json.dumps(doc, indent=2)


def test_nesting_deeper_than_the_walk_goes_is_the_standard_librarys() -> None:
    deep: Any = []
    for _ in range(sys.getrecursionlimit() + 50):
        deep = [deep]
    with pytest.raises(RecursionError):
        json.dumps(deep, indent=1)
    with pytest.raises(RecursionError):
        dumps_indented(deep, indent=1)


@pytest.mark.skipif(jsonindent._STDLIB_IN_C, reason="the standard library writes every document here")
def test_threads_rendering_at_once_each_get_their_own_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoders of each depth are made as a walk first reaches it and shared: threads that reach
    new depths together must not misplace them (every later text would be mis-indented). Making an
    encoder is slowed down here, so that the threads are inside it together."""
    make = jsonindent.c_make_encoder
    assert make is not None

    def slow_make(*args: Any) -> Any:
        time.sleep(0.001)
        return make(*args)

    monkeypatch.setattr(jsonindent, "c_make_encoder", slow_make)
    monkeypatch.setattr(jsonindent, "_CACHE", {})
    docs = []
    for depth in range(1, 12):
        doc: Any = [1, "x"]
        for i in range(depth):
            doc = {f"k{i}": doc, "n": i}
        docs.append(doc)
    want = [json.dumps(d, indent=3) for d in docs]
    got: list[list[str]] = [[] for _ in range(4)]
    start = threading.Barrier(4)

    def render(k: int) -> None:
        start.wait()
        for d in docs if k % 2 else reversed(docs):
            got[k].append(dumps_indented(d, indent=3))

    threads = [threading.Thread(target=render, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert got[k] == (want if k % 2 else want[::-1])
    assert [dumps_indented(d, indent=3) for d in docs] == want


@pytest.mark.skipif(jsonindent._STDLIB_IN_C, reason="the standard library writes every document here")
def test_the_walk_writes_plain_documents_without_the_standard_library(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The fallback must stay a fallback: a walk that gave up on every document would still give the
    right text, only slower than ``json.dumps``. Plain documents (the real ones, random ones) are
    written with ``json.dumps`` unavailable."""
    from skdbg.triage.engine import analyze

    rng = random.Random(7)

    def make(depth: int) -> Any:
        r = rng.random()
        if depth > 5 or r < 0.4:
            return rng.choice([None, True, False, 0, -5, 2**64, 0.5, math.inf, math.nan, "é", 'q"\\'])
        if r < 0.7:
            return [make(depth + 1) for _ in range(rng.randint(0, 4))]
        if r < 0.8:
            return tuple(make(depth + 1) for _ in range(rng.randint(0, 3)))
        return {rng.choice(["k", 3, 1.5, True, None]): make(depth + 1) for _ in range(rng.randint(0, 4))}

    docs: list[tuple[Any, bool]] = [(make(0), ea) for ea in (True, False) for _ in range(300)]
    scenes = sorted(p for p in (Path(__file__).parents[1] / "examples" / "scenes").iterdir() if p.is_dir())
    docs += [(analyze(scene).to_json(), False) for scene in scenes]
    want = [json.dumps(d, indent=2, ensure_ascii=ea) for d, ea in docs]

    def unavailable(*args: Any, **kwargs: Any) -> str:
        raise AssertionError("the walk gave the document to json.dumps")

    monkeypatch.setattr(jsonindent.json, "dumps", unavailable)
    assert [dumps_indented(d, indent=2, ensure_ascii=ea) for d, ea in docs] == want


class _Colour(enum.IntEnum):
    RED = 1


class _Name(str, enum.Enum):
    A = "a"


class _Lying(float):
    """A float whose comparisons lie: the standard library's Python encoder asks them, C does not."""

    def __ne__(self, other: object) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = float.__hash__


class _Elsewhere(dict):  # type: ignore[type-arg]
    """A mapping that keeps its items elsewhere: the C encoder looks at the dict itself."""

    def __len__(self) -> int:
        return 1

    def items(self) -> Any:
        return [("a", 1)]


class _Once(list):  # type: ignore[type-arg]
    """A list whose iteration works once."""

    def __init__(self, items: list[Any]) -> None:
        super().__init__(items)
        self.used = False

    def __iter__(self) -> Any:
        if self.used:
            return iter(())
        self.used = True
        return super().__iter__()


@pytest.mark.parametrize(
    "make",
    [
        lambda: {"colour": _Colour.RED, "names": [_Name.A, 1]},
        lambda: [collections.namedtuple("P", "x y")(1, [2])],
        lambda: collections.OrderedDict(a=[1], b=2),
        lambda: {"v": [_Lying(1.0)], "k": {_Lying(2.0): [1]}},
        lambda: {"v": [_Lying(1.0)]},  # in a flat list: the C encoder would write 1.0, json NaN
        lambda: [_Lying(1.0), [1]],  # beside a container
        lambda: {_Lying(2.0): 1},
        lambda: _Elsewhere(),
        lambda: [_Once([1, [2]])],
        lambda: [_Once([1, 2])],
        lambda: {_Colour.RED: [1]},
    ],
)
def test_subclasses_and_enums_are_the_standard_librarys(make: Any) -> None:
    """Only the exact JSON types are walked: a subclass may answer the two encoders differently, so
    anything else is written by ``json.dumps`` itself (each document is made afresh for each side:
    some answer once)."""
    try:
        want: Any = json.dumps(make(), indent=2)
    except Exception as exc:  # noqa: BLE001 - the standard library's refusal is the expectation
        want = (type(exc), str(exc))
    try:
        got: Any = dumps_indented(make(), indent=2)
    except Exception as exc:  # noqa: BLE001
        got = (type(exc), str(exc))
    assert got == want


def test_a_refusal_is_the_standard_librarys_own_exception() -> None:
    """Not chained to anything the walk raised first: the traceback a user sees is json's."""
    doc = {datetime.date(2020, 1, 1): 1}
    with pytest.raises(TypeError) as theirs:
        json.dumps(doc, indent=2)
    with pytest.raises(TypeError) as ours:
        dumps_indented(doc, indent=2)
    assert str(ours.value) == str(theirs.value)
    assert ours.value.__context__ is None and theirs.value.__context__ is None


def test_options_outside_their_types_are_the_standard_librarys() -> None:
    doc = {"a": [1, "é"]}
    for ensure_ascii in ([], 0, 1, "yes"):
        assert dumps_indented(doc, ensure_ascii=ensure_ascii) == json.dumps(  # type: ignore[arg-type]
            doc, indent=2, ensure_ascii=ensure_ascii
        )


def test_from_python_3_13_the_standard_library_writes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """3.13's json indents in C: the walk would only be slower there."""
    calls: list[Any] = []
    dumps = json.dumps

    def spy(*args: Any, **kwargs: Any) -> str:
        calls.append(args[0])
        return dumps(*args, **kwargs)

    monkeypatch.setattr(jsonindent, "_STDLIB_IN_C", True)
    monkeypatch.setattr(jsonindent.json, "dumps", spy)
    doc = {"a": [1]}
    assert dumps_indented(doc) == dumps(doc, indent=2)
    assert calls == [doc]


def test_a_default_is_asked_as_the_standard_library_asks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``default`` (the report's ``default=str``), a document of plain values is walked and one
    holding other objects goes whole to ``json.dumps``, which asks ``default``: the same text either way;
    a ``default`` that refuses raises the standard library's error."""
    plain = {"rows": [{"relpath": "log/plog.log", "size": 3, "sha256": None}], "n": [1, 2.5, True]}
    want = json.dumps(plain, indent=2, ensure_ascii=False, default=str)
    with monkeypatch.context() as m:  # written by the walk: the standard library is not asked
        m.setattr(jsonindent.json, "dumps", lambda *a, **k: pytest.fail("went to json.dumps"))
        if not jsonindent._STDLIB_IN_C:
            assert dumps_indented(plain, indent=2, ensure_ascii=False, default=str) == want
    odd = {"when": datetime.datetime(2026, 6, 10, 14, 3, 21), "where": [Path("sk_meta") / "x.log", "é"]}
    assert dumps_indented(odd, indent=2, ensure_ascii=False, default=str) == json.dumps(
        odd, indent=2, ensure_ascii=False, default=str
    )

    def refuse(o: Any) -> Any:
        raise TypeError(f"no {type(o).__name__}")

    with pytest.raises(TypeError, match="no datetime"):
        dumps_indented(odd, default=refuse)
