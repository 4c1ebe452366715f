"""Reader and detect (codegen.md Part 3 items 1–8)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.cli import main
from skdbg.codegen.forms import NOTE_NO_GLOBAL, NOTE_PARTIAL, classify
from skdbg.codegen.reader import read_source

DATA = Path(__file__).resolve().parents[1] / "data" / "kernels"


def _form(src: str) -> dict[str, object]:
    return classify(read_source(src, "f.asc")).to_json()


def test_item1_clean_global_is_none() -> None:
    f = _form('extern "C" __global__ __vector__ void a(GM_ADDR x){}')
    assert f["form"] == "none" and f["notes"] == []
    assert not (f["has_sk_keyword"] or f["has_sk_bind"] or f["has_unsupported_sk_signal"])


def test_item2_current_and_partial() -> None:
    assert (
        _form("__global__ void a(){}\n__sk__ void b(){}\nSK_BIND(a, 4, b<0>);")["form"] == "current-sk-bind"
    )
    f = _form("__global__ void a(){}\n__sk__ void b(){}")
    assert f["form"] == "partial" and f["notes"] == [NOTE_PARTIAL]


def test_item3_no_global_is_unknown() -> None:
    f = _form("__sk__ void b(){}\nSK_BIND(a, 4, b<0>);")
    assert f["form"] == "unknown" and f["notes"] == [NOTE_NO_GLOBAL]


def test_item4_unsupported_signal_is_partial() -> None:
    for marker in ('const char s[] __attribute__((section(".ascend.meta"))) = "";', "__spk__ void z(){}"):
        f = _form("__global__ __vector__ void a(GM_ADDR x){}\n" + marker)
        assert f["form"] == "partial" and f["has_unsupported_sk_signal"] is True


def test_comment_mentioning_markers_does_not_change_the_form() -> None:
    assert _form("// SK_BIND( __sk__\n__global__ __vector__ void a(GM_ADDR x){}")["form"] == "none"


def test_item5_directory_mixed_and_ignored(tmp_path: Path) -> None:
    (tmp_path / "none.asc").write_text("__global__ __vector__ void a(GM_ADDR x){}\n")
    (tmp_path / "partial.asc").write_text("__global__ __vector__ void b(GM_ADDR x){}\n__sk__ void c(){}\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.asc").write_text("__global__ __vector__ void t(GM_ADDR x){}\n")
    (tmp_path / "helper.cpp").write_text("int helper() { return 1; }\n")
    res = CliRunner().invoke(main, ["codegen", "detect", str(tmp_path)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["overall_form"] == "mixed"
    assert doc["ignored_support_files"] == [
        {"file": "helper.cpp", "reason": "no_kernel_signal"},
        {"file": "tests/t.asc", "reason": "test_support_file"},
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    res = CliRunner().invoke(main, ["codegen", "detect", str(empty)])
    assert res.exit_code == 2 and "no kernel .asc or .cpp source files" in res.stderr


def test_item6_qualifiers_and_params() -> None:
    r = read_source("__global__ __aicore__ __mix__(1, 0) void k(GM_ADDR x, uint8_t f) {}")
    (e,) = r.entries
    assert e.qualifiers == "__global__ __aicore__ __mix__(1, 0)"
    assert [(p.name, p.c_type) for p in e.params] == [("x", "GM_ADDR"), ("f", "uint8_t")]


def test_item7_braces_in_comments_and_literals() -> None:
    text = (DATA / "tricky.asc").read_text()
    r = read_source(text, "tricky.asc")
    assert [e.name for e in r.entries] == ["tricky"]  # the commented-out kernel is not an entry
    e = r.entries[0]
    assert text[e.body_close] == "}" and text[e.body_close + 1 :] == "\n"
    assert 'const char *s = "}";' in e.body and "char c = '{';" in e.body


def test_item8_unreadable_entries_are_gaps_with_file_line() -> None:
    r = read_source((DATA / "unreadable.asc").read_text(), "unreadable.asc")
    assert r.entries == []
    msgs = [str(g) for g in r.gaps]
    assert any(m.startswith("unreadable.asc:3:") and "array parameter" in m for m in msgs)
    assert any(m.startswith("unreadable.asc:6:") and "#define" in m for m in msgs)


def test_void_list_and_defaults_are_understood() -> None:
    r = read_source("__global__ __vector__ void v(void) {}\n__global__ __vector__ void d(uint32_t n = 0) {}")
    assert [e.params for e in r.entries][0] == ()
    assert r.entries[1].params[0].default == "0" and r.entries[1].params[0].c_type == "uint32_t"


def test_attributes_templates_and_multiline_params() -> None:
    src = (
        "template <typename T, int MODE = 2>\n__global__ __attribute__((cce_kernel)) __aicore__ void t(\n"
        "    __gm__ T *x, /* the scale */ T alpha) __attribute__((noinline))\n{ }\n"
    )
    (e,) = read_source(src).entries
    assert [(t.decl, t.name) for t in e.template_params] == [("typename T", "T"), ("int MODE", "MODE")]
    assert [(p.name, p.c_type) for p in e.params] == [("x", "__gm__ T *"), ("alpha", "T")]
    assert len(e.attributes) == 2


def test_non_void_kernel_is_a_gap() -> None:
    r = read_source("__global__ __vector__ int bad(GM_ADDR x) { return 0; }", "b.asc")
    assert r.entries == [] and "return type must be void" in str(r.gaps[0])


_ALPHABET = st.sampled_from(
    list("{}()<>[];,=*&:\"'\\/#\n \t\ré€")
    + [
        "__global__",
        "__aicore__",
        "__mix__",
        "void",
        "k",
        "GM_ADDR",
        "x",
        "template",
        "extern",
        '"C"',
        "//",
        "/*",
        "*/",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=60).map(" ".join))
def test_reader_never_raises_and_locates_its_gaps(text: str) -> None:
    r = read_source(text, "fuzz.asc")
    lines = text.count("\n") + 1
    for g in r.gaps:
        assert g.file == "fuzz.asc" and 1 <= g.line <= lines
    for e in r.entries:
        assert text[e.body_open] == "{" and text[e.body_close] == "}" and e.body_open < e.body_close


def test_non_utf8_source_is_exit_3(tmp_path: Path) -> None:
    (tmp_path / "bad.asc").write_bytes(b"__global__ void k() { \xff\xfe }\n")
    res = CliRunner().invoke(main, ["codegen", "detect", str(tmp_path / "bad.asc")])
    assert res.exit_code == 3 and "bad.asc: not UTF-8 text (byte offset 22)" in res.stderr
