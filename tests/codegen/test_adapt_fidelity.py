"""Issue 13 items 1–6: adaptation fidelity on real-world kernel sources (one minimal input per item).

Expectations are hand-written from the codegen spec (§1.4–§1.6) and upstream's renderer facts: a
parameter's attributes stay where they were written and travel onto the Args field and the unpack
line (upstream keeps the text before the name as the field type); unknown identifiers before
``__global__`` are qualifier macros left in the original; a backslash plus blanks continues a
preprocessor line; a file defining no kernel is bad input (exit 3) and nothing is written; a CRLF file
keeps every original byte and gets CRLF generated lines; a kernel without parameters gets no blank
separator after ``{`` (only the body's own leading newline).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.cli import main
from skdbg.codegen.adapt import AdaptOptions, adapt_asset, adapt_text, line_ending
from skdbg.codegen.reader import read_source

INCLUDE = '#include "kernel_operator.h"\n'


def _adapt(src: str, rel: str = "k.asc") -> tuple[str, list[dict[str, object]]]:
    new, meta, escalations, _ = adapt_text(src, rel, AdaptOptions(), Path("."))
    assert escalations == [] and new is not None, escalations
    return new, meta


def _block(out: str, src: str) -> str:
    """The generated text after the (single) original kernel of ``src``."""
    (entry,) = read_source(src).entries
    assert out[: entry.body_close + 1] == src[: entry.body_close + 1]
    return out[entry.body_close + 1 :]


# --- item 1: attributes on parameters ------------------------------------------------------------


ATTR_SRC = (
    INCLUDE + 'extern "C" __global__ __aicore__ __vector__ void k(GM_ADDR x, [[maybe_unused]] uint32_t n,\n'
    "    uint8_t f __attribute__((unused)), __attribute__((unused)) bool b, int16_t s [[maybe_unused]])\n"
    "{\n    int a = 1;\n}\n"
)


def test_item1_parameter_attributes_travel_to_args_field_and_unpack_line() -> None:
    out, (meta,) = _adapt(ATTR_SRC)
    block = _block(out, ATTR_SRC)
    assert (
        "struct KArgs {\n"
        "    GM_ADDR x;\n"
        "    [[maybe_unused]] uint32_t n;\n"
        "    alignas(4) uint8_t f __attribute__((unused));\n"
        "    alignas(4) __attribute__((unused)) bool b;\n"
        "    alignas(4) int16_t s [[maybe_unused]];\n"
        "};\n"
    ) in block
    assert (
        "    GM_ADDR x = args->x;\n"
        "    [[maybe_unused]] uint32_t n = args->n;\n"
        "    uint8_t f __attribute__((unused)) = args->f;\n"
        "    __attribute__((unused)) bool b = args->b;\n"
        "    int16_t s [[maybe_unused]] = args->s;\n"
    ) in block
    # the metadata type is the C type alone (it feeds casts/sizeof in the package); attributes beside it
    assert meta["parameters"] == [
        {"name": "x", "c_type": "GM_ADDR"},
        {"name": "n", "c_type": "uint32_t", "attributes": ["[[maybe_unused]]"]},
        {"name": "f", "c_type": "uint8_t", "attributes": ["__attribute__((unused))"]},
        {"name": "b", "c_type": "bool", "attributes": ["__attribute__((unused))"]},
        {"name": "s", "c_type": "int16_t", "attributes": ["[[maybe_unused]]"]},
    ]


def test_item1_asset_with_attributes_completes(tmp_path: Path) -> None:
    (tmp_path / "k.asc").write_text(ATTR_SRC)
    m = adapt_asset(tmp_path / "k.asc", tmp_path / "o", AdaptOptions())
    assert m["status"] == "completed" and m["escalations"] == []
    assert (tmp_path / "o" / "operator-sk-adapted" / "k.asc").read_text().startswith(ATTR_SRC)


_STUBS = """#include <cstdint>
using GM_ADDR = uint8_t *;
#define __global__
#define __aicore__
#define __vector__
#define __sk__
#define SK_BIND(...)
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to check the generated C++")
def test_item1_generated_block_is_valid_cpp17(tmp_path: Path) -> None:
    """The adapted file, with the AscendC words stubbed, compiles as C++17 with attribute misuse an error."""
    out, _ = _adapt(ATTR_SRC)
    unit = tmp_path / "unit.cpp"
    unit.write_text(_STUBS + out.replace('extern "C" ', "").replace(INCLUDE, ""))
    res = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", "-pedantic-errors", "-Werror=attributes", str(unit)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr


def test_item1_attribute_list_with_commas_stays_one_parameter() -> None:
    (e,) = read_source(
        "__global__ __vector__ void k(GM_ADDR x, [[gnu::unused, maybe_unused]] int32_t n) {}"
    ).entries
    assert [(p.name, p.c_type, p.attributes) for p in e.params] == [
        ("x", "GM_ADDR", ()),
        ("n", "int32_t", ("[[gnu::unused, maybe_unused]]",)),
    ]


def test_item1_attribute_inside_the_type_stays_in_place() -> None:
    (e,) = read_source("__global__ __vector__ void k(__gm__ [[maybe_unused]] uint8_t *p) {}").entries
    (p,) = e.params
    assert (p.c_type, p.field_type, p.trailing) == (
        "__gm__ uint8_t *",
        "__gm__ [[maybe_unused]] uint8_t *",
        "",
    )


def test_item1_attribute_with_braces_is_a_gap() -> None:
    r = read_source("__global__ __vector__ void k(__attribute__((x({}))) uint32_t n) {}", "b.asc")
    assert (
        r.entries == [] and "holds ';' or braces" in str(r.gaps[0]) and str(r.gaps[0]).startswith("b.asc:1:")
    )


def test_item1_parentheses_outside_an_attribute_are_a_precise_gap() -> None:
    r = read_source("__global__ __vector__ void k(GM_ADDR x, void (*cb)(int)) {}", "f.asc")
    assert r.entries == [] and str(r.gaps[0]) == (
        "f.asc:1: kernel k: parameter 'void (*cb)(int)': parentheses outside an attribute "
        "(function pointer, macro call) cannot be unpacked from an Args struct"
    )


# --- item 2: macros before __global__ ------------------------------------------------------------


MACRO_SRC = (
    INCLUDE + '#define KERNEL_LINKAGE extern "C"\n#define UT_STATIC\n'
    "KERNEL_LINKAGE __global__ __aicore__ __vector__ void k(GM_ADDR x)\n{\n}\n"
    "UT_STATIC __global__ __aicore__ __cube__ void c()\n{\n}\n"
)


def test_item2_unknown_identifiers_before_global_are_carried_qualifier_macros(tmp_path: Path) -> None:
    (tmp_path / "m.asc").write_text(MACRO_SRC)
    m = adapt_asset(tmp_path / "m.asc", tmp_path / "o", AdaptOptions())
    assert m["status"] == "completed"
    k, c = m["per_file"][0]["entries"]
    assert (k["qualifier_macros"], c["qualifier_macros"]) == (["KERNEL_LINKAGE"], ["UT_STATIC"])
    assert "carried through" in k["notes"][0] and "KERNEL_LINKAGE" in k["notes"][0]
    assert (k["original_qualifiers"], k["sk_kernel_type"]) == (
        "__global__ __aicore__ __vector__",
        "__vector__",
    )
    out = (tmp_path / "o" / "operator-sk-adapted" / "m.asc").read_text()
    assert "KERNEL_LINKAGE __global__ __aicore__ __vector__ void k(GM_ADDR x)\n{\n}\n" in out
    assert "__sk__ __vector__ void k_sk(const KArgs *args)\n" in out  # the macro is not repeated
    assert "__sk__ __cube__ void c_sk()\n" in out


def test_item2_entries_without_macros_have_no_macro_fields() -> None:
    _, (meta,) = _adapt(INCLUDE + "__global__ __aicore__ __vector__ void k(GM_ADDR x) {}\n")
    assert "qualifier_macros" not in meta and "notes" not in meta


def test_item2_macro_call_before_global_is_a_precise_gap() -> None:
    r = read_source("SOME_ATTR(3) __global__ __vector__ void k(GM_ADDR x) {}\n", "g.asc")
    assert r.entries == []
    assert str(r.gaps[0]) == (
        "g.asc:1: unexpected 'macro call SOME_ATTR(…)' before __global__ "
        "(expected qualifiers, attributes or macro names)"
    )


# --- item 3: continuation with trailing whitespace -------------------------------------------------


@pytest.mark.parametrize("blanks", [" ", "   ", "\t", " \t ", "\r"])
def test_item3_backslash_blanks_newline_continues_the_directive(blanks: str) -> None:
    src = (
        INCLUDE
        + f"#define HELPER(x) \\{blanks}\n    do {{ (x); }} while (0)\n"
        + "__global__ __aicore__ __vector__ void first(GM_ADDR x)\n{\n}\n"
        + f"#define CLOSE \\{blanks}\n    }}\n"
        + "__global__ __aicore__ __vector__ void second(GM_ADDR y)\n{\n}\n"
    )
    r = read_source(src, "c.asc")
    assert [e.name for e in r.entries] == ["first", "second"] and r.gaps == []
    directives = [t.text for t in r.tokens if t.kind == "preproc"]
    assert directives[1] == f"#define HELPER(x) \\{blanks}\n    do {{ (x); }} while (0)"
    assert directives[2] == f"#define CLOSE \\{blanks}\n    }}"
    out, meta = _adapt(src, "c.asc")
    assert [m["entry_name"] for m in meta] == ["first", "second"] and out.count("SK_BIND(") == 2


def test_item3_body_continuations_with_blanks_become_plain_newlines() -> None:
    (e,) = read_source("__global__ __vector__ void k() { int a = 1; \\  \n  int b = 2; \\\t\r\n }").entries
    assert e.body == " int a = 1; \n  int b = 2; \n "


# --- item 4: a file with no kernel definition ----------------------------------------------------


@pytest.mark.parametrize(
    ("src", "line", "why"),
    [
        (
            INCLUDE + 'extern "C" __global__ __aicore__ void k(GM_ADDR x);\n',
            2,
            "__global__ k is only declared",
        ),
        ("#ifdef __global__\n#endif\nint helper;\n", 1, "only on a preprocessor line"),
        ("#define KATTR __global__ __aicore__\nint helper;\n", 1, "only on a preprocessor line"),
    ],
)
def test_item4_no_kernel_definition_is_exit_3_and_writes_nothing(
    tmp_path: Path, src: str, line: int, why: str
) -> None:
    (tmp_path / "d.asc").write_text(src)
    res = CliRunner().invoke(main, ["codegen", "adapt", str(tmp_path / "d.asc"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 3
    assert f"d.asc:{line}: no kernel definition found: " in res.stderr and why in res.stderr
    assert not (tmp_path / "o").exists()
    assert (tmp_path / "d.asc").read_text() == src  # and no include was inserted anywhere


def test_item4_stub_definition_of_the_global_word_is_not_a_kernel() -> None:
    src = "#ifndef __global__\n#define __global__\n#endif\n__global__ __aicore__ __vector__ void k(GM_ADDR x) {}\n"
    r = read_source(src, "s.asc")
    assert [e.name for e in r.entries] == ["k"] and r.gaps == []
    assert [g.line for g in r.non_definitions] == [1, 2]


def test_item4_directory_of_declarations_only_is_exit_3(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "decl.cpp").write_text("__global__ __aicore__ void k(GM_ADDR x);\n")
    res = CliRunner().invoke(main, ["codegen", "adapt", str(tmp_path / "a"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 3 and "decl.cpp:1: no kernel definition found" in res.stderr
    assert not (tmp_path / "o").exists()


def test_item4_global_only_in_a_comment_stays_a_usage_error(tmp_path: Path) -> None:
    """A directory whose only mention of __global__ is a comment has no kernel source at all: exit 2."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "note.cpp").write_text("// a __global__ kernel lives elsewhere\nint x;\n")
    res = CliRunner().invoke(main, ["codegen", "adapt", str(tmp_path / "a"), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no kernel .asc or .cpp source files found" in res.stderr


def test_item4_declaration_file_beside_a_kernel_is_ignored_not_adapted(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "decl.cpp").write_text("__global__ __aicore__ void k(GM_ADDR x);\n")
    (tmp_path / "a" / "real.asc").write_text(
        INCLUDE + "__global__ __aicore__ __vector__ void r(GM_ADDR x) {}\n"
    )
    m = adapt_asset(tmp_path / "a", tmp_path / "o", AdaptOptions())
    assert m["status"] == "completed"
    assert [f["file"] for f in m["per_file"]] == ["real.asc"]
    assert {"file": "decl.cpp", "reason": "no_kernel_definition"} in m["ignored_support_files"]
    assert not (tmp_path / "o" / "operator-sk-adapted" / "decl.cpp").exists()


def test_item4_used_global_qualifier_macro_needs_a_human(tmp_path: Path) -> None:
    """A kernel whose __global__ comes from a macro exists but is unreadable: needs-human, not 'none'."""
    (tmp_path / "q.asc").write_text("#define KATTR __global__ __aicore__\nKATTR void k(GM_ADDR x) {}\n")
    m = adapt_asset(tmp_path / "q.asc", tmp_path / "o", AdaptOptions())
    assert m["status"] == "needs-human"
    (esc,) = m["escalations"]
    assert esc["message"].startswith("q.asc:2: kernel qualifiers come from macro KATTR (#define at line 1")


# --- item 5: CRLF ----------------------------------------------------------------------------------


CRLF_BODY = (
    '#include "kernel_operator.h"\n#define M(x) \\\n   (x)\n'
    'extern "C" __global__ __aicore__ __vector__ void k(GM_ADDR x, uint32_t n)\n{\n'
    "    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);\n    AscendC::TPipe pipe;\n"
    "    if (n) {\n        AscendC::TPipe inner;\n    }\n}\n"
)


def test_item5_crlf_file_keeps_its_bytes_and_gets_crlf_generated_lines(tmp_path: Path) -> None:
    lf_out, _ = _adapt(CRLF_BODY)
    crlf = CRLF_BODY.replace("\n", "\r\n")
    (tmp_path / "r.asc").write_bytes(crlf.encode())
    m = adapt_asset(tmp_path / "r.asc", tmp_path / "o", AdaptOptions())
    assert m["status"] == "completed"
    got = (tmp_path / "o" / "operator-sk-adapted" / "r.asc").read_bytes().decode()
    assert got == lf_out.replace("\n", "\r\n")  # same adaptation, every line CRLF
    assert got.startswith(crlf[: crlf.rindex("}") + 1])


def test_item5_crlf_include_is_added_with_crlf() -> None:
    src = '#include "other.h"\r\n__global__ __aicore__ __vector__ void k(GM_ADDR x)\r\n{\r\n}\r\n'
    out, _ = _adapt(src)
    assert out.startswith('#include "other.h"\r\n#include "kernel_operator.h"\r\n__global__')
    assert "\n" not in out.replace("\r\n", "")


def test_item5_mixed_file_uses_its_dominant_ending() -> None:
    assert (line_ending("a\r\nb\r\nc\n"), line_ending("a\r\nb\nc\n"), line_ending("a\r\nb\n")) == (
        "\r\n",
        "\n",
        "\n",
    )
    src = INCLUDE.replace("\n", "\r\n") + "__global__ __aicore__ __vector__ void k(GM_ADDR x)\r\n{\n}\r\n"
    out, _ = _adapt(src)
    (e,) = read_source(src).entries
    assert out.startswith(src[: e.body_close + 1])
    assert "\n" not in out[e.body_close + 1 :].replace("\r\n", "")


# --- item 6: zero-parameter kernels ----------------------------------------------------------------


def test_item6_zero_parameter_kernel_has_no_separator_blank_line() -> None:
    src = INCLUDE + "__global__ __aicore__ __vector__ void z()\n{\n    int a = 1;\n}\n"
    block = _block(_adapt(src)[0], src)
    assert "__sk__ __vector__ void z_sk()\n{\n\n    int a = 1;\n}\n" in block  # the body's own newline only
    empty = INCLUDE + "__global__ __aicore__ __vector__ void e()\n{\n}\n"
    assert "__sk__ __vector__ void e_sk()\n{\n\n}\n" in _block(_adapt(empty)[0], empty)
    with_param = INCLUDE + "__global__ __aicore__ __vector__ void p(GM_ADDR x)\n{\n    int a = 1;\n}\n"
    block = _block(_adapt(with_param)[0], with_param)
    assert "{\n    GM_ADDR x = args->x;\n\n\n    int a = 1;\n}\n" in block  # separator + body newline


# --- property: random signatures ------------------------------------------------------------------

_SCALARS = st.sampled_from(["uint32_t", "int16_t", "bool", "float", "half", "uint8_t", "int64_t"])
_ATTRS = st.sampled_from(
    [
        ("", ""),
        ("[[maybe_unused]] ", ""),
        ("__attribute__((unused)) ", ""),
        ("", " [[maybe_unused]]"),
        ("", " __attribute__((unused))"),
        ("[[gnu::unused, maybe_unused]] ", ""),
        ("__attribute__((unused, aligned(8))) ", ""),
    ]
)
_MACROS = st.lists(st.sampled_from(["KERNEL_LINKAGE", "UT_STATIC", "EXPORT_KERNEL"]), max_size=2, unique=True)
_BLANKS = st.sampled_from(["", " ", "\t", "  \t"])


@st.composite
def signatures(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, str, str]], list[str], str]:
    names = draw(st.lists(st.from_regex(r"p[a-z0-9]{0,5}", fullmatch=True), max_size=5, unique=True))
    fields = [("GM_ADDR", "x", "", "")]  # one tensor: no IO contract needed
    for n in names:
        before, after = draw(_ATTRS)
        fields.append((draw(_SCALARS), n, before, after))
    macros = draw(_MACROS)
    params = ", ".join(f"{before}{t} {n}{after}" for t, n, before, after in fields)
    lead = "".join(f"{m} " for m in macros)
    blank = draw(_BLANKS)
    src = (
        INCLUDE
        + f"#define HELPER(v) \\{blank}\n    ((v) + 1)\n"
        + f"{lead}__global__ __aicore__ __vector__ void kern({params})\n{{\n    int a = HELPER(1);\n}}\n"
        + f"#define TAIL \\{blank}\n    }}\n"
        + "__global__ __aicore__ __cube__ void after(GM_ADDR y)\n{\n}\n"
    )
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    return src.replace("\n", eol), fields, macros, eol


@settings(max_examples=60, deadline=None)
@given(signatures())
def test_property_original_kept_and_args_fields_equal_parameters(
    case: tuple[str, list[tuple[str, str, str, str]], list[str], str],
) -> None:
    src, fields, macros, eol = case
    out, meta = _adapt(src)
    reading = read_source(src)
    assert [e.name for e in reading.entries] == ["kern", "after"]  # nothing lost behind a continuation
    first = reading.entries[0]
    assert out[: first.body_close + 1] == src[: first.body_close + 1]  # original function byte for byte
    struct = out.split(f"struct KernArgs {{{eol}", 1)[1].split(f"}};{eol}", 1)[0]
    got = [ln.strip().removeprefix("alignas(4) ").removesuffix(";") for ln in struct.split(eol) if ln.strip()]
    assert got == [f"{before}{t} {n}{after}" for t, n, before, after in fields]
    assert [(p["name"], p["c_type"]) for p in meta[0]["parameters"]] == [(n, t) for t, n, _, _ in fields]
    assert meta[0].get("qualifier_macros", []) == macros
    assert "\n" not in out.replace(eol, "") if eol == "\r\n" else "\r" not in out


def test_macros_and_attributes_together_in_one_file(tmp_path: Path) -> None:
    (tmp_path / "k.asc").write_text(MACRO_SRC + ATTR_SRC.replace(INCLUDE, "").replace("void k(", "void k2("))
    adapt_asset(tmp_path / "k.asc", tmp_path / "o", AdaptOptions())
    doc = json.loads((tmp_path / "o" / "operator-sk-adapted.json").read_text())
    assert [e["entry_name"] for e in doc["per_file"][0]["entries"]] == ["k", "c", "k2"]
