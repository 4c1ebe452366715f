"""Which scope each op's statement lies in, read through the one marker module.

Why here: the runtime decides fusion from the scope markers around the statements that emit graph
nodes. The emulator gets the same facts from :mod:`skdbg.parsers.markers` (the reader triage and
codegen use), so an edited marker file changes fusion exactly the way the proposal predicted.
Edited files are tied back to the model's pristine lines with a line diff (marker edits only add,
remove or change marker lines; an op statement that vanished is an error).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from skdbg.codegen.fusion.plan_model import REASON_IN_UNFUSIBLE_SCOPE, REASON_NOT_IN_SCOPE
from skdbg.parsers.common import ParseError
from skdbg.parsers.markers import MarkerScan, scan_text
from skdbg.sim.errors import SimError
from skdbg.sim.ops import SimModel


@dataclass(frozen=True)
class OpScope:
    """The scope of one op: the named scope's name (None outside every named scope) and, when the op
    runs unfused because of its markers, the fail reason the runtime records."""

    name: str | None
    fail_reason: str | None


def map_lines(pristine: str, edited: str) -> dict[int, int]:
    """Pristine 1-based line → edited line, for the lines the edit kept unchanged."""
    a, b = pristine.splitlines(), edited.splitlines()
    out: dict[int, int] = {}
    sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, _j2 in sm.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                out[i1 + k + 1] = j1 + k + 1
    return out


def _scan(text: str, path: Path, rel: str) -> MarkerScan:
    try:
        scan = scan_text(text, rel)
    except ParseError as e:
        raise SimError(path, "", f"not Python: {e}") from None
    problem = scan.balance()
    if problem is not None:
        raise SimError(path, f"line {problem[0]}", problem[1])
    return scan


def op_scopes(model: SimModel, source: Path | None = None) -> tuple[list[OpScope], str]:
    """The scope of every op (model order) under the pristine marker file or an edited copy
    (``source``: a file, or a directory holding the model's marker file), and the text used."""
    text = model.marker_text
    path = model.marker_path
    lines = {o.line: o.line for o in model.ops}
    if source is not None:
        path = source / model.marker_file if source.is_dir() else source
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise SimError(path, "", f"cannot read the edited marker file ({e})") from None
        mapping = map_lines(model.marker_text, text)
        for o in model.ops:
            if o.line not in mapping:
                raise SimError(path, f"ops[{o.index}].line",
                               f"the statement of {o.name} (pristine line {o.line}) is not in the edited file")  # fmt: skip
            lines[o.line] = mapping[o.line]
    scan = _scan(text, path, model.marker_file)
    markers = [m for m in scan.markers if m.direct]
    ge = [(m.stmt.lineno, m.stmt.end_lineno or m.stmt.lineno, m.name) for m in scan.ge if m.stmt is not None]
    out: list[OpScope] = []
    for o in model.ops:
        at = lines[o.line]
        stack: list[str | None] = []
        for m in markers:
            if m.line >= at:
                break
            if m.kind == "begin":
                stack.append(None if m.is_none else m.name)
            elif stack:
                stack.pop()
        for first, last, name in ge:  # torchair form: the with-body is the scope
            if first < at <= last:
                stack.append(name)
        out.append(_scope_of(stack))
    return out, text


def _scope_of(stack: list[str | None]) -> OpScope:
    if not stack:
        return OpScope(None, REASON_NOT_IN_SCOPE)
    if stack[-1] is not None:
        return OpScope(stack[-1], None)
    named = [s for s in stack if s is not None]  # a None pair inside a named scope: unfusible there
    return OpScope(named[-1] if named else None, REASON_IN_UNFUSIBLE_SCOPE)
