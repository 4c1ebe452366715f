"""Every id `skdbg scan` can print has a glossary entry in the scan area (docs/scan.md)."""

from __future__ import annotations

from skdbg.fleet.patterns import FOLLOWER_PATTERNS
from skdbg.glossary import lookup


def test_statuses_pattern_ids_and_gate_values_are_explained() -> None:
    ids = [
        "first_failing",
        "own_fault",
        "follower",
        "clean",
        "no_evidence",
        "unreadable",
        "complete",
        "partial",
        "none",
        *(p.id for p in FOLLOWER_PATTERNS),
    ]
    missing = [i for i in ids if not any(e.area == "scan" for e in lookup(i))]
    assert missing == []


def test_the_pattern_table_covers_the_issues_wordings() -> None:
    codes = {p.code for p in FOLLOWER_PATTERNS}
    assert {"EI0002", "EI0006", "ERR02005", "107022"} <= codes
    assert all(len(p.marker) >= 4 for p in FOLLOWER_PATTERNS)  # the prefilter's anchor width
