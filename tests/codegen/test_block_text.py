"""The adaptation block assembled in Python is the text the jinja2 template it replaced rendered.

``data/sk_block.cpp.j2`` is that template, kept verbatim, rendered here with the package's former
environment settings (strict, trim/lstrip blocks, trailing newline kept, no escaping). Values are
random text, braces, jinja2 syntax and newlines included, so any difference in layout or escaping
shows up.
"""

from __future__ import annotations

from pathlib import Path

import jinja2
from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.codegen.block import block_text, needs_align4
from skdbg.codegen.reader import Param

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "data"),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    autoescape=False,
)

PIECES = list("ab_ {}<>*,\n\r\t%#") + ["{{", "}}", "{%", "%}", "uint8_t"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
PARAMS = st.lists(
    st.builds(Param, name=TEXT, c_type=TEXT, decl_type=TEXT, trailing=TEXT),
    max_size=4,
).map(tuple)


def reference(fields: tuple[Param, ...], **values: object) -> str:
    rows = [
        {"name": p.name, "decl": p.field_type, "trailing": p.trailing, "align4": needs_align4(p.c_type)}
        for p in fields
    ]
    return _ENV.get_template("sk_block.cpp.j2").render(fields=rows, **values)


@settings(max_examples=150, deadline=None)
@given(
    fields=PARAMS,
    struct_template=TEXT,
    body=TEXT,
    mask=st.integers(0, 7),
    bind_functions=st.lists(TEXT, min_size=1, max_size=4).map(tuple),
    words=st.lists(TEXT, min_size=6, max_size=6),
)
def test_block_text_matches_the_template(
    fields: tuple[Param, ...],
    struct_template: str,
    body: str,
    mask: int,
    bind_functions: tuple[str, ...],
    words: list[str],
) -> None:
    values = {
        "struct_template": struct_template,
        "args_struct": words[0],
        "fn_template": words[1],
        "sk_type": words[2],
        "sk_name": words[3],
        "sk_params": words[4],
        "body": body,
        "bind_symbol": words[5],
        "mask": mask,
        "bind_functions": bind_functions,
    }
    assert block_text(fields, **values) == reference(fields, **values)  # type: ignore[arg-type]


def test_a_plain_entry_block_reads_as_the_spec_lays_it_out() -> None:
    fields = (Param("x", "GM_ADDR"), Param("flag", "uint8_t"))
    text = block_text(
        fields,
        struct_template="",
        args_struct="MyOpArgs",
        fn_template="uint32_t splitidx",
        sk_type="__cube__",
        sk_name="my_op_sk",
        sk_params="const MyOpArgs *args",
        body="\n    run();",
        bind_symbol="my_op",
        mask=4,
        bind_functions=("my_op_sk<0>", "my_op_sk<1>"),
    )
    assert text == (
        "\n\n// ---- SK adaptation (auto-generated) ----\n"
        "struct MyOpArgs {\n    GM_ADDR x;\n    alignas(4) uint8_t flag;\n};\n\n"
        "template<uint32_t splitidx>\n__sk__ __cube__ void my_op_sk(const MyOpArgs *args)\n{\n"
        "    GM_ADDR x = args->x;\n    uint8_t flag = args->flag;\n\n"
        "\n    run();\n}\n\nSK_BIND(my_op, 4, my_op_sk<0>, my_op_sk<1>);\n// ---- end SK adaptation ----\n"
    )
