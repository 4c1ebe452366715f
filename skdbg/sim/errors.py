"""The emulator's one error type: bad model input, named by file and JSON path.

Why a ValueError with ``path`` and ``field``: the CLI and the process entry turn it into exit 3 with
"file: field: message" (the contract every bad input in skdbg follows), and tests assert on the field
instead of on message wording.
"""

from __future__ import annotations

from pathlib import Path


class SimError(ValueError):
    """A model, fault spec or marker file the emulator cannot run: ``path`` + JSON ``field`` + why."""

    def __init__(self, path: Path, field: str, message: str) -> None:
        self.path = Path(path)
        self.field = field
        self.message = message
        where = f"{self.path}: {field}: " if field else f"{self.path}: "
        super().__init__(where + message)
