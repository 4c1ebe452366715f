"""``source_sites_from_json`` builds plain entries without the general checks; the oracle sends every
entry through those checks (``checked_site``), on hand-written and generated documents that mix plain
entries with every kind of entry the checks refuse or normalise (padded keys, non-ASCII digits, runs
too long for the runtime's integers, booleans, zero, floats, strings)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from skdbg.parsers.common import MAX_U64, Gap
from skdbg.parsers.jsonload import as_object
from skdbg.parsers.run_identity import SourceSite, _Fields, checked_site, source_sites_from_json

FILE = "source_sites.json"


def reference(doc: Any, file: str) -> tuple[list[SourceSite], list[Gap]]:
    """The general path: every entry through the key and value checks."""
    root = as_object(doc, file, "")
    gaps: list[Gap] = []
    f = _Fields(file, gaps, "source_sites.json")
    checked = (checked_site(f, file, key, value) for key, value in root.items())
    return [site for site in checked if site is not None], gaps


def same_as_reference(doc: Any) -> None:
    got = source_sites_from_json(doc, FILE)
    sites, gaps = reference(doc, FILE)
    assert got.sites == sites
    assert [type(s.src.json_path) for s in got.sites] == [str] * len(sites)
    assert got.gaps == gaps
    assert got.unrecognized == []


def test_the_format_example_and_its_bad_neighbours() -> None:
    text = (
        '{"120": 41, "121": 42, " 122": 43, "123 ": 0, "124": true, "125": 4.0, "126": "45",'
        ' "٣": 7, "": 3, "x1": 2, "99999999999999999999": 5, "18446744073709551615": 6,'
        ' "18446744073709551616": 6, "0001": 1, "7": -1, "8": 1e3}'
    )
    doc = json.loads(text)
    same_as_reference(doc)
    got = source_sites_from_json(doc, FILE)
    assert [(s.node_id, s.line) for s in got.sites] == [
        (120, 41),
        (121, 42),
        (122, 43),
        (18446744073709551615, 6),
        (1, 1),
    ]
    assert len(got.gaps) == len(doc) - 5


def test_a_document_that_is_not_an_object_is_refused_the_same_way() -> None:
    for doc in ([1, 2], "x", None):
        try:
            source_sites_from_json(doc, FILE)
        except Exception as e:  # the general path's own error, message included
            try:
                reference(doc, FILE)
            except Exception as r:
                assert (type(e), str(e)) == (type(r), str(r))
            else:
                raise AssertionError("the reference accepted what the function refused") from e
        else:
            raise AssertionError(f"{doc!r} was accepted")


KEYS = st.one_of(
    st.integers(min_value=0, max_value=10**22).map(str),
    st.integers(min_value=0, max_value=MAX_U64 + 10).map(lambda n: f" {n}"),
    st.sampled_from(["", " ", "00", "٣", "１２", "1_0", "+5", "-5", "5\n", "0x10"]),
    st.text(max_size=4),
)
VALUES = st.one_of(
    st.integers(min_value=-3, max_value=10**6),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=3),
    st.none(),
)


@given(st.dictionaries(KEYS, VALUES, max_size=25))
def test_generated_documents_match_the_general_path(doc: dict[str, Any]) -> None:
    same_as_reference(doc)
