"""skdbg's fuzz harness: mutated artifacts against every parser, mutated scenes against ``skdbg analyze``.

Run ``python -m fuzz --help`` from the repository root. The oracle is the project's error contract:
a parser may only raise :class:`skdbg.parsers.common.ParseError`, a command may only exit 0, 2 or 3,
no input file is changed, nothing is written outside the output folder, and every input finishes
within a time and memory bound. Failing inputs are saved under ``fuzz/crashers/<target>/`` and replayed
by ``tests/test_fuzz.py`` as regression tests.
"""
