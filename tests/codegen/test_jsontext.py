"""``dumps_indent2`` writes exactly the text of ``json.dumps(obj, indent=2)`` (the manifests' format)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from skdbg.codegen.jsontext import dumps_indent2

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),  # non-ASCII and control characters are escaped as json does
)
DOCS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=4), inner, max_size=4),
        st.dictionaries(st.integers(), inner, min_size=1, max_size=2),  # non-string keys
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(DOCS)
def test_same_text_as_json_dumps_indent_2(doc: Any) -> None:
    assert dumps_indent2(doc) == json.dumps(doc, indent=2)


def test_nested_empty_containers_and_escapes() -> None:
    doc = {"a": [], "b": {}, "c": [{"d": 'é\n"q"'}, None, True, 3]}
    assert dumps_indent2(doc) == (
        '{\n  "a": [],\n  "b": {},\n  "c": [\n    {\n      "d": "\\u00e9\\n\\"q\\""\n    },\n'
        "    null,\n    true,\n    3\n  ]\n}"
    )
