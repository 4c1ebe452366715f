"""Reading and validating a model directory: ``model.json`` (or ``model.toml``) + its marker file.

Why strict: the model stands in for a device run, so a typo must never silently become a different
graph. Every field is checked once here and every refusal names the file, the JSON path
(``ops[3].stream``, ``fault.op``) and what was expected (:class:`SimError`; exit 3 in the CLI).
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skdbg.parsers.common import ParseError
from skdbg.parsers.markers import scan_text
from skdbg.sim.errors import SimError
from skdbg.sim.ops import FAULT_KINDS, KERNEL_TYPES, KIND_NODE, WAIT_KINDS, FaultSpec, SimModel, SimOp
from skdbg.triage.skview import COLLECTIVE_MARKERS

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MODEL_ID = re.compile(r"[0-9]{1,9}_[0-9]{1,9}")
_MODEL_KEYS = {"schema", "name", "marker_file", "model_id", "device", "rank", "ops", "fault"}
_OP_KEYS = {
    "name",
    "op_type",
    "kind",
    "kernel_type",
    "block_dim",
    "stream",
    "event",
    "barrier",
    "collective",
    "line",
    "func_name",
}
_FAULT_KEYS = {"kind", "op", "ops", "probability"}
#: faults naming one op / a pair of ops
_ONE_OP = {"fused", "operator", "unmatched_wait", "wrong_result", "flaky", "syncall_mismatch"}
_TWO_OPS = {"interaction", "circular_wait"}
MAX_BLOCK_DIM = 4096
SCHEMA = "skdbg.sim.model/1"
MAX_STREAM = 1023


def _read_doc(path: Path) -> dict[str, Any]:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise SimError(path, "", f"cannot read ({e.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SimError(path, "", "not UTF-8 text") from None
    if path.suffix == ".toml":
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - exercised on Python 3.10 only
            import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

        try:
            doc: Any = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SimError(path, "", f"not valid TOML ({e})") from None
    else:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise SimError(path, "", f"line {e.lineno}: not valid JSON ({e.msg})") from None
    if not isinstance(doc, dict):
        raise SimError(path, "", f"expected an object at the top, got {type(doc).__name__}")
    return doc


def _int(path: Path, where: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SimError(path, where, f"expected an integer in {lo}..{hi}, got {value!r}")
    if not lo <= value <= hi:
        raise SimError(path, where, f"expected an integer in {lo}..{hi}, got {value}")
    return value


def _bool(path: Path, where: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise SimError(path, where, f"expected true or false, got {value!r}")
    return value


def _str(path: Path, where: str, value: Any, pattern: re.Pattern[str], what: str) -> str:
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise SimError(path, where, f"expected {what}, got {value!r}")
    return value


def _unknown(path: Path, where: str, doc: Mapping[str, Any], known: set[str]) -> None:
    extra = sorted(set(doc) - known)
    if extra:
        prefix = f"{where}." if where else ""
        raise SimError(path, prefix + extra[0], f"unknown field; known: {', '.join(sorted(known))}")


def statement_lines(text: str, file: str) -> dict[int, tuple[int, int]]:
    """Every line of a simple (body-less) statement → that statement's (first, last) line."""
    tree = ast.parse(text, filename=file)
    out: dict[int, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body"):
            first, last = node.lineno, node.end_lineno or node.lineno
            for ln in range(first, last + 1):
                out.setdefault(ln, (first, last))
    return out


def _op(path: Path, i: int, doc: Any, stmts: Mapping[int, tuple[int, int]], n_lines: int) -> SimOp:
    where = f"ops[{i}]"
    if not isinstance(doc, dict):
        raise SimError(path, where, f"expected an object, got {type(doc).__name__}")
    _unknown(path, where, doc, _OP_KEYS)
    if "name" not in doc:
        raise SimError(path, f"{where}.name", "missing (every op needs a unique name)")
    name = _str(path, f"{where}.name", doc["name"], _NAME, "a name of letters, digits, _ . -")
    kind = doc.get("kind", "kernel")
    if kind not in KIND_NODE:
        raise SimError(path, f"{where}.kind", f"expected one of {', '.join(KIND_NODE)}, got {kind!r}")
    if "line" not in doc:
        raise SimError(
            path, f"{where}.line", "missing (the 1-based line of the op's statement in the marker file)"
        )
    line = _int(path, f"{where}.line", doc["line"], 1, max(n_lines, 1))
    if line not in stmts:
        raise SimError(path, f"{where}.line", f"line {line} of the marker file is not an op statement "
                       "(blank, a comment, a compound statement or a scope marker)")  # fmt: skip
    stream = _int(path, f"{where}.stream", doc.get("stream", 0), 0, MAX_STREAM)
    if kind == "kernel":
        for key in ("event",):
            if key in doc:
                raise SimError(path, f"{where}.{key}", "only event ops (notify, wait, …) carry an event id")
        if "op_type" not in doc:
            raise SimError(path, f"{where}.op_type", "missing (a kernel needs its op type, e.g. MatMul)")
        op_type = _str(path, f"{where}.op_type", doc["op_type"], _IDENT, "an identifier (op type)")
        if "kernel_type" not in doc:
            raise SimError(
                path, f"{where}.kernel_type", f"missing; expected one of {', '.join(KERNEL_TYPES)}"
            )
        kt = doc["kernel_type"]
        if kt not in KERNEL_TYPES:
            raise SimError(
                path, f"{where}.kernel_type", f"expected one of {', '.join(KERNEL_TYPES)}, got {kt!r}"
            )
        ktype = KERNEL_TYPES[kt]
        default_dim = 48 if ktype == "AIV_ONLY" else 24
        block_dim = _int(path, f"{where}.block_dim", doc.get("block_dim", default_dim), 1, MAX_BLOCK_DIM)
        barrier = _bool(path, f"{where}.barrier", doc.get("barrier", False))
        comm = any(m in op_type.lower() for m in COLLECTIVE_MARKERS)
        collective = _bool(path, f"{where}.collective", doc.get("collective", comm))
        if collective != comm:  # the runtime (and triage) know a collective by its op type only
            raise SimError(path, f"{where}.collective", f"{collective} contradicts op_type {op_type!r} "
                           "(a communication kernel is AllReduce, ReduceScatter, AllGather, AlltoAll, an MC2 "
                           "or HCCL form)")  # fmt: skip
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        func = doc.get("func_name", f"{op_type}_{digest}")
        func = _str(path, f"{where}.func_name", func, _IDENT, "a C identifier (kernel function name)")
        return SimOp(i, name, kind, op_type, line, stream, ktype, block_dim, None, barrier, collective, func)
    for key in ("kernel_type", "block_dim", "barrier", "collective", "func_name"):
        if key in doc:
            raise SimError(path, f"{where}.{key}", f"a {kind} op has no {key} (only kernels do)")
    if "event" not in doc:
        raise SimError(path, f"{where}.event", f"missing (a {kind} op needs its event id)")
    event = _int(path, f"{where}.event", doc["event"], 0, 65535)
    op_type = _str(path, f"{where}.op_type", doc.get("op_type", kind.title().replace("_", "")), _IDENT,
                   "an identifier")  # fmt: skip
    return SimOp(i, name, kind, op_type, line, stream, None, 0, event)


def parse_fault(path: Path, doc: Any, ops: tuple[SimOp, ...], where: str = "fault") -> FaultSpec:
    """Validate a fault spec against the model's ops (an unknown op name is an error)."""
    if not isinstance(doc, dict):
        raise SimError(path, where, f"expected an object, got {type(doc).__name__}")
    _unknown(path, where, doc, _FAULT_KEYS)
    kind = doc.get("kind")
    if kind not in FAULT_KINDS:
        raise SimError(path, f"{where}.kind", f"expected one of {', '.join(FAULT_KINDS)}, got {kind!r}")
    by_name = {o.name: o for o in ops}
    names: tuple[str, ...] = ()
    if kind in _ONE_OP or (kind == "entry" and "op" in doc):
        if "op" not in doc:
            raise SimError(path, f"{where}.op", f"missing (a {kind} fault names the op it hits)")
        if not isinstance(doc["op"], str) or doc["op"] not in by_name:
            raise SimError(path, f"{where}.op", f"{doc['op']!r} is not an op of the model")
        names = (doc["op"],)
    elif kind in _TWO_OPS:
        pair = doc.get("ops")
        if not isinstance(pair, list) or len(pair) != 2:
            raise SimError(path, f"{where}.ops", f"expected a list of two op names, got {pair!r}")
        for j, n in enumerate(pair):
            if not isinstance(n, str) or n not in by_name:
                raise SimError(path, f"{where}.ops[{j}]", f"{n!r} is not an op of the model")
        if pair[0] == pair[1]:
            raise SimError(path, f"{where}.ops", "expected two different ops")
        names = (pair[0], pair[1])
    for key in ("op", "ops"):
        if key in doc and not names:
            raise SimError(path, f"{where}.{key}", f"a {kind} fault names no op")
    if kind not in _TWO_OPS and "ops" in doc:
        raise SimError(path, f"{where}.ops", f"a {kind} fault names one op (use 'op')")
    probability = 1.0
    if kind == "flaky":
        p = doc.get("probability")
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 < float(p) <= 1.0:
            raise SimError(path, f"{where}.probability", f"expected a number in (0, 1], got {p!r}")
        probability = float(p)
    elif "probability" in doc:
        raise SimError(path, f"{where}.probability", "only a flaky fault has a probability")
    _check_fault_ops(path, where, kind, [by_name[n] for n in names])
    return FaultSpec(kind, names, probability)


def _check_fault_ops(path: Path, where: str, kind: str, ops: list[SimOp]) -> None:
    if kind in ("fused", "operator", "flaky", "wrong_result", "interaction", "syncall_mismatch") and any(
        not o.is_kernel for o in ops
    ):
        bad = next(o for o in ops if not o.is_kernel)
        raise SimError(path, f"{where}.op" if len(ops) == 1 else f"{where}.ops", f"{bad.name} is a {bad.kind} op; "
                       f"a {kind} fault hits a kernel")  # fmt: skip
    if kind == "unmatched_wait" and ops[0].kind not in WAIT_KINDS:
        raise SimError(path, f"{where}.op", f"{ops[0].name} is a {ops[0].kind} op; expected a wait op")
    if kind == "circular_wait":
        a, b = ops
        if not (a.is_kernel and b.is_kernel and a.has_aic and b.has_aiv):
            raise SimError(path, f"{where}.ops", "expected [an AIC-capable kernel, an AIV-capable kernel] "
                           "(the cross-core waits that block each other)")  # fmt: skip


def _marker(path: Path, root: Path, rel: str) -> tuple[str, set[int]]:
    """The marker file's text and the lines its scope-marker statements occupy."""
    mp = root / rel
    try:
        text = mp.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SimError(path, "marker_file", f"cannot read {rel} ({e})") from None
    try:
        scan = scan_text(text, rel)
    except ParseError as e:
        raise SimError(mp, "", f"not Python: {e}") from None
    marker_lines = {ln for m in scan.markers if m.direct for ln in range(m.line, m.end_line + 1)}
    return text, marker_lines


def model_file(model_dir: Path) -> Path:
    for name in ("model.json", "model.toml"):
        if (model_dir / name).is_file():
            return model_dir / name
    raise SimError(model_dir / "model.json", "", "no model.json or model.toml in the model directory")


def load_model(
    model_dir: Path, *, fault: Mapping[str, Any] | None = None, fault_path: Path | None = None
) -> SimModel:
    """Read ``model_dir/model.json`` (or ``model.toml``) and its marker file; ``fault`` (or a
    ``fault.json`` next to the model) overrides the model's own fault spec (``fault_path``: the file
    ``fault`` came from, named in error messages)."""
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise SimError(model_dir, "", "not a directory (expected a model directory with model.json)")
    path = model_file(model_dir)
    doc = _read_doc(path)
    _unknown(path, "", doc, _MODEL_KEYS)
    if "schema" in doc and doc["schema"] != SCHEMA:
        raise SimError(path, "schema", f"expected {SCHEMA!r} (or no schema key), got {doc['schema']!r}")
    name = _str(path, "name", doc.get("name", model_dir.name or "model"), _NAME, "a name")
    rel = doc.get("marker_file", "src/model.py")
    if not isinstance(rel, str) or not rel or rel.startswith("/") or ".." in Path(rel).parts:
        raise SimError(path, "marker_file", f"expected a relative path inside the model dir, got {rel!r}")
    text, marker_lines = _marker(path, model_dir, rel)
    try:
        stmts = statement_lines(text, rel)
    except SyntaxError as e:  # pragma: no cover - scan_text already parsed it
        raise SimError(model_dir / rel, "", f"not Python: {e}") from None
    stmts = {ln: span for ln, span in stmts.items() if ln not in marker_lines}  # a marker emits no node
    model_id = _str(path, "model_id", doc.get("model_id", "48_1"), _MODEL_ID, "<rts id>_<count>, e.g. 48_1")
    device = _int(path, "device", doc.get("device", 0), 0, 63)
    rank = _int(path, "rank", doc.get("rank", 0), 0, 65535)
    raw_ops = doc.get("ops")
    if not isinstance(raw_ops, list) or not raw_ops:
        raise SimError(path, "ops", "expected a non-empty list of ops")
    n_lines = len(text.splitlines())
    ops = tuple(_op(path, i, o, stmts, n_lines) for i, o in enumerate(raw_ops))
    seen: dict[str, int] = {}
    for o in ops:
        if o.name in seen:
            raise SimError(path, f"ops[{o.index}].name", f"{o.name!r} repeats ops[{seen[o.name]}].name")
        seen[o.name] = o.index
    _check_events(path, ops)
    fault_doc: Any = doc.get("fault", {"kind": "none"})
    where = "fault"
    if fault is not None:
        fault_doc = dict(fault)
        if fault_path is not None:
            where = "$"
    elif (model_dir / "fault.json").is_file():
        fault_path, where = model_dir / "fault.json", "$"
        fault_doc = _read_doc(fault_path)
    spec = parse_fault(fault_path or path, fault_doc, ops, where)
    return SimModel(model_dir, path, name, rel, text, ops, spec, model_id, device, rank)


def _check_events(path: Path, ops: tuple[SimOp, ...]) -> None:
    """Every wait has a notify of the same event id somewhere (an external wait cannot be emulated)."""
    notified = {o.event for o in ops if o.kind in ("notify", "memory_write")}
    for o in ops:
        if o.kind in WAIT_KINDS and o.event not in notified:
            raise SimError(path, f"ops[{o.index}].event", f"no notify op publishes event {o.event}")
