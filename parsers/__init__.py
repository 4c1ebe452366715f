"""Artifact parsers: failure-scene files -> typed records and pandas frames.

Pure and headless: nothing here imports textual, the triage engine or the CLI.
Every record carries a :class:`~skdbg.parsers.common.Source` (file + line or JSON path),
so every conclusion drawn from it can cite where it came from.
"""

from skdbg.parsers.common import Gap, ParseError, Source, Unrecognized

__all__ = ["Gap", "ParseError", "Source", "Unrecognized"]
