"""``lazy_regex`` gives the pattern ``re.compile`` would, once (issue 18: import CPU of analyze).

Why: patterns of rare line kinds are compiled on first use instead of at import; a lazily held pattern
must match exactly as the eager one did, and the first call's compile must be the only one.
"""

from __future__ import annotations

import re

from skdbg.parsers import runtime_faults
from skdbg.parsers.common import Source, lazy_regex
from skdbg.parsers.runtime_faults import classify_message, parse_error_manager_line


def test_lazy_regex_is_the_compiled_pattern_and_compiles_once() -> None:
    lazy = lazy_regex(r"(?:^|_)PC$", re.IGNORECASE)
    assert lazy.cache_info().currsize == 0
    first = lazy()
    assert first == re.compile(r"(?:^|_)PC$", re.IGNORECASE)
    assert first.flags & re.IGNORECASE
    assert lazy() is first
    assert lazy.cache_info().hits == 1
    assert first.search("start_pc") is not None and first.search("pcs") is None


def test_rare_runtime_lines_still_classify() -> None:
    """Hand-written lines in the documented layouts of three lazily compiled kinds."""
    dump = (
        "[Dump][Exception] coreId=3, coreType=1, startPC=12c0a000, currentPC=12c0a4f8, offset=4f8, "
        "symbol name=AddCustom_1234_mix_aiv, symbol size=1200, symbol offset=4f8."
    )
    src = Source("plog-1_2.log", 7)
    got = classify_message(dump, src)
    assert isinstance(got, runtime_faults.DumpException)
    assert (got.core_id, got.current_pc, got.symbol_name) == (3, 0x12C0A4F8, "AddCustom_1234_mix_aiv")
    tracking = "origin_op_name [Add_1], op_name [AddCustom_1], task_id 17, stream_id 2"
    et = classify_message(tracking, src)
    assert isinstance(et, runtime_faults.ErrorTracking)
    assert (et.origin_op_name, et.op_name) == ("Add_1", "AddCustom_1")
    em = parse_error_manager_line("EZ9999: Inner Error! [FUNC:Run][FILE:x.cc][LINE:12]", src)
    assert em is not None and (em.code, em.func, em.line_no) == ("EZ9999", "Run", 12)
    assert runtime_faults.DUMP_EXCEPTION_RE.cache_info().currsize == 1
