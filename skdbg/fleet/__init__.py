"""skdbg.fleet — scan the ranks of a multi-rank job (``skdbg scan``; docs/scan.md).

Headless: discovery (:mod:`.discover`), the per-rank signature from the fast plog scan
(:mod:`.signature`), the follow-up wording table (:mod:`.patterns`), the parallel engines
(:mod:`.run`: a local process pool or Dask), the job-wide verdict (:mod:`.verdict`) and its outputs
(:mod:`.report`). Public API::

    from skdbg.fleet import discover, scan_all, decide, scan_doc
"""

from __future__ import annotations

from skdbg.fleet.discover import Discovery, RankSpec, discover
from skdbg.fleet.report import SCHEMA, csv_text, scan_doc, summary_lines
from skdbg.fleet.run import DaskFailed, DaskUnavailable, scan_all
from skdbg.fleet.signature import RankSignature, scan_rank
from skdbg.fleet.verdict import DEFAULT_SKEW_MS, Verdict, decide

__all__ = [
    "DEFAULT_SKEW_MS",
    "SCHEMA",
    "DaskFailed",
    "DaskUnavailable",
    "Discovery",
    "RankSignature",
    "RankSpec",
    "Verdict",
    "csv_text",
    "decide",
    "discover",
    "scan_all",
    "scan_doc",
    "scan_rank",
    "summary_lines",
]
