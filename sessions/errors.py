"""Errors of the session ledger: one class per thing the user can act on.

Why separate classes: the CLI maps each to an exit code and a one-line message, the TUI shows them
in a dialog; none of them may surface as a raw ``sqlite3`` traceback (project rule: bad input gets a
clear error naming the file).
"""

from __future__ import annotations


class LedgerError(Exception):
    """The ledger cannot do what was asked; the message says why and names the file."""


class LedgerUnavailable(LedgerError):
    """The ledger file cannot be opened or written: read-only, disk full, corrupted, newer schema."""


class ForwardOnlyError(LedgerError):
    """A status would move backwards, or a recorded row would be rewritten or deleted (§6.3)."""


class StaleEvidenceError(LedgerError):
    """R7: evidence of another pid or of an older attempt offered for a new attempt."""


class TamperError(LedgerError):
    """A frozen file no longer has the SHA-256 recorded when it was frozen."""


class NotFound(LedgerError):
    """No such session, round, attempt or proposal."""


__all__ = [
    "ForwardOnlyError",
    "LedgerError",
    "LedgerUnavailable",
    "NotFound",
    "StaleEvidenceError",
    "TamperError",
]
