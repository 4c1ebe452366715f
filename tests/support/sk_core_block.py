"""The SK handler's block for one matched exception core, written by hand from the formats of
artifacts.md §1.4.2 (function tag, message text): core 30, an AIV core of model 48_1, scope 3, its PC
inside node 1's entry 0. Shared by the tests that need a faulting core in front of what they check
(a counter trace, the run-at-a-time parse)."""

from __future__ import annotations

CORE_30_MATCHED: list[tuple[str, str]] = [
    ("GetExceptionRegInfo", "Get error register information. coreNum=1"),
    ("ParseAndPrintSubKernelSymbols", "=== Sub-kernel running info on exception cores ==="),
    ("PrintMatchedNodeBasicInfo", "[Core 30] ModelIdIdx=0, ModelId=48_1, SkScopeId=3"),
    ("PrintMatchedNodeBasicInfo", "[Core 30] CoreType: AIV"),
    ("PrintMatchedNodeBasicInfo", "[Core 30] StartPC: 0x124080c01200"),
    ("PrintMatchedNodeBasicInfo", "[Core 30] CurrentPC: 0x124080c01258"),
    ("PrintMatchedNodeBasicInfo", "[Core 30] Found in node[1], entry[0]"),
]
