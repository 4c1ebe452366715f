"""Scene side files: ``run.json``, ``env/check_environment.json`` and ``source_sites.json``.

Why: the entry gate (triage.md §1.1) needs the run identity — command, rank, device, pid, start,
end (G1) and the source revision (G4) — and whether the failure phase belongs to this workflow
(G3); F8/F9 need the candidate's options. None of this is in the runtime artifacts, so it comes
from the run manifest written by the launcher or the user (scene-layout.md).

Every field is optional. A field of the wrong type is not fatal: it is recorded as a
:class:`Gap` (``invalid_field``, with its JSON path) and treated as missing, so the gate can
say exactly what it could not establish instead of refusing the whole manifest. Only unreadable
or syntactically broken JSON, or a root that is not an object, raises :class:`ParseError`.
"""

from __future__ import annotations

import enum
import json
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skdbg import regexcode
from skdbg.parsers.common import MAX_DECIMAL_RUN, MAX_U64, Gap, Source, Unrecognized
from skdbg.parsers.frames import Col, records_frame, rows_frame
from skdbg.parsers.jsonload import as_object, is_int, join, load_json, loads_json, read_json_text, show

if TYPE_CHECKING:
    import pandas as pd


class FailurePhase(str, enum.Enum):
    """``failure_phase`` values of scene-layout.md."""

    EXECUTION = "execution"
    CORRECTNESS = "correctness"
    TIMEOUT = "timeout"
    HANG = "hang"
    DEVICE_FAULT = "device_fault"
    COMPILE = "compile"
    UNKNOWN = "unknown"


#: Phases the isolation workflow handles (gate G3, triage.md §1.1).
WORKFLOW_PHASES = frozenset(
    {
        FailurePhase.EXECUTION,
        FailurePhase.CORRECTNESS,
        FailurePhase.TIMEOUT,
        FailurePhase.HANG,
        FailurePhase.DEVICE_FAULT,
    }
)

#: What G1 and G4 need from the manifest, in report order (triage.md §1.1).
GATE_FIELDS = ("command", "rank", "device", "pid", "start", "end", "source_revision")

_RUN_KEYS = {
    "experiment_id",
    "round_id",
    "attempt",
    "command",
    "cwd",
    "rank",
    "device",
    "pid",
    "start",
    "end",
    "exit",
    "failure_phase",
    "candidate",
    "env_probe",
    "source_sites",
    "cache_writers",
    "failing_path",
}
_CANDIDATE_KEYS = {
    "scope_names",
    "marker_file",
    "super_kernel_optimize_options",
    "super_kernel_debug_options",
    "source_revision",
    "config_fingerprint",
}

_TIME_RE = regexcode.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?$"
)


def parse_time(text: str) -> datetime | None:
    """ISO-8601 date-time with or without zone (``Z``, ``+08:00``, ``+0800``, ``+08``) and with any
    number of fraction digits (truncated to µs). Naive results are in the plog's clock
    (scene-layout.md). Returns None when the text is not such a time."""
    m = _TIME_RE.match(text.strip())
    if not m:
        return None
    year, month, day, hour, minute = (int(m.group(i)) for i in range(1, 6))
    second = int(m.group(6) or 0)
    frac = (m.group(7) or "0")[:6].ljust(6, "0")
    tz: timezone | None = None
    zone = m.group(8)
    if zone:
        if zone == "Z":
            tz = timezone.utc
        else:
            sign = -1 if zone[0] == "-" else 1
            digits = zone[1:].replace(":", "")
            hours, mins = int(digits[:2]), int(digits[2:4] or 0)
            if hours > 23 or mins > 59:
                return None
            tz = timezone(sign * timedelta(hours=hours, minutes=mins))
    try:
        return datetime(year, month, day, hour, minute, second, int(frac), tzinfo=tz)
    except ValueError:
        return None


def format_time(ts: datetime) -> str:
    """The run.json form of a plog-clock time: ISO-8601 with milliseconds, no zone (what
    :func:`parse_time` reads back to the millisecond)."""
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}"


@dataclass(frozen=True, slots=True)
class ExitInfo:
    """How the attempt's process ended (run.json ``exit``): its status, the signal that ended it, a
    timeout."""

    src: Source
    status: int | None
    signal: int | str | None  # number or name ("SIGSEGV")
    timeout: bool | None


@dataclass(frozen=True, slots=True)
class Candidate:
    """The candidate the attempt ran (run.json ``candidate``): the SK scopes it names, the model source with
    the scope markers and the options it was built with."""

    src: Source
    scope_names: tuple[str, ...]
    marker_file: str | None
    optimize_options: dict[str, Any] | None
    debug_options: dict[str, Any] | None
    source_revision: str | None
    config_fingerprint: str | None

    @property
    def diagnostic(self) -> bool | None:
        """A non-empty debug-option map makes the attempt diagnostic (F9); None when not recorded."""
        return None if self.debug_options is None else bool(self.debug_options)


@dataclass(frozen=True, slots=True)
class RunIdentity:
    """``run.json``; any field may be None (missing or invalid — see the result's gaps)."""

    src: Source
    experiment_id: str | None
    round_id: str | None
    attempt: int | None
    command: str | None
    cwd: str | None
    rank: int | None
    device: int | None
    pid: int | None
    start: datetime | None
    end: datetime | None
    start_text: str | None
    end_text: str | None
    exit: ExitInfo | None
    failure_phase: str | None  # verbatim, also when not a known FailurePhase
    candidate: Candidate | None
    env_probe: str | None  # path relative to the scene root
    source_sites: str | None
    cache_writers: dict[int, tuple[int, ...]]
    failing_path: dict[str, Any] | None

    @property
    def phase(self) -> FailurePhase | None:
        """The failure phase as an enum member; None when absent or not a known value."""
        try:
            return FailurePhase(self.failure_phase) if self.failure_phase is not None else None
        except ValueError:
            return None

    @property
    def source_revision(self) -> str | None:
        return self.candidate.source_revision if self.candidate else None

    def missing_fields(self) -> list[str]:
        """Names from :data:`GATE_FIELDS` that are missing or invalid (G1, G4)."""
        have = {
            "command": self.command,
            "rank": self.rank,
            "device": self.device,
            "pid": self.pid,
            "start": self.start,
            "end": self.end,
            "source_revision": self.source_revision,
        }
        return [name for name in GATE_FIELDS if have[name] in (None, "")]


@dataclass(slots=True)
class RunFile:
    """A parsed run.json: the attempt's identity, and the entries and gaps it could not take."""

    file: str
    identity: RunIdentity
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    def missing_fields(self) -> list[str]:
        return self.identity.missing_fields()

    def resolve(self, relpath: str | None) -> Path | None:
        """A path named in run.json (``env_probe``, ``source_sites``, ``marker_file``), relative to
        the directory holding run.json (the scene root)."""
        if relpath is None:
            return None
        p = Path(relpath)
        return p if p.is_absolute() else Path(self.file).parent / p

    def to_frame(self) -> pd.DataFrame:
        """One row: file, line, json_path, and the identity fields flattened (times as datetimes)."""

        r = self.identity
        c = r.candidate
        e = r.exit
        row = {
            "file": self.file,
            "line": None,
            "json_path": None,
            "experiment_id": r.experiment_id,
            "round_id": r.round_id,
            "attempt": r.attempt,
            "command": r.command,
            "cwd": r.cwd,
            "rank": r.rank,
            "device": r.device,
            "pid": r.pid,
            "start": r.start,
            "end": r.end,
            "exit_status": e.status if e else None,
            "exit_signal": e.signal if e else None,
            "exit_timeout": e.timeout if e else None,
            "failure_phase": r.failure_phase,
            "scope_names": ",".join(c.scope_names) if c else None,
            "marker_file": c.marker_file if c else None,
            "source_revision": c.source_revision if c else None,
            "config_fingerprint": c.config_fingerprint if c else None,
            "diagnostic": c.diagnostic if c else None,
            "missing_fields": ",".join(self.missing_fields()),
        }
        frame: pd.DataFrame = rows_frame([row])
        return frame


class _Fields:
    """Typed reads that turn a wrong type into an ``invalid_field`` gap instead of an exception."""

    def __init__(self, file: str, gaps: list[Gap], what: str) -> None:
        self.file = file
        self.gaps = gaps
        self.what = what

    def invalid(self, path: str, expected: str, value: Any) -> None:
        self.gaps.append(
            Gap(
                "invalid_field",
                f"{self.what} field {path}: expected {expected}, got {show(value)}; treated as missing",
                Source(self.file, json_path=path),
            )
        )

    def str_(self, obj: dict[str, Any], key: str, path: str) -> str | None:
        v = obj.get(key)
        if v is None:
            return None
        if isinstance(v, str):
            return v
        self.invalid(join(path, key), "a string", v)
        return None

    def int_(self, obj: dict[str, Any], key: str, path: str) -> int | None:
        v = obj.get(key)
        if v is None:
            return None
        if is_int(v):
            return int(v)
        self.invalid(join(path, key), "an integer", v)
        return None

    def bool_(self, obj: dict[str, Any], key: str, path: str) -> bool | None:
        v = obj.get(key)
        if v is None:
            return None
        if isinstance(v, bool):
            return v
        self.invalid(join(path, key), "true or false", v)
        return None

    def obj(self, obj: dict[str, Any], key: str, path: str) -> dict[str, Any] | None:
        v = obj.get(key)
        if v is None:
            return None
        if isinstance(v, dict):
            return v
        self.invalid(join(path, key), "an object", v)
        return None

    def time(self, obj: dict[str, Any], key: str) -> tuple[datetime | None, str | None]:
        text = self.str_(obj, key, "")
        if text is None:
            return None, None
        t = parse_time(text)
        if t is None:
            self.invalid(key, "an ISO-8601 time 'YYYY-MM-DDTHH:MM:SS[.fff][zone]'", text)
        return t, text


def parse_run_json(path: str | os.PathLike[str]) -> RunFile:
    """Parse ``run.json``. ParseError only for unreadable/malformed JSON or a non-object root."""
    what = "run.json (run identity manifest)"
    file, text = read_json_text(path, what=what)
    return run_from_json(loads_json(text, file=file, what=what), file, text)


def run_from_json(doc: Any, file: str, text: str | None = None) -> RunFile:
    """The run identity of a parsed run.json; ``text`` (the file's JSON text) lets gaps cite lines."""
    root = as_object(doc, file, "")
    gaps: list[Gap] = []
    unrec: list[Unrecognized] = []
    f = _Fields(file, gaps, "run.json")
    for key in root:
        if key not in _RUN_KEYS:
            unrec.append(Unrecognized(Source(file, json_path=key), f"{key}: {show(root[key])}", "run.json"))
    start, start_text = f.time(root, "start")
    end, end_text = f.time(root, "end")
    if start is not None and end is not None:
        if (start.tzinfo is None) != (end.tzinfo is None):
            gaps.append(
                Gap(
                    "invalid_field",
                    "start and end mix zoned and zone-less times; they cannot be compared",
                    Source(file, json_path="end"),
                )
            )
        elif end < start:
            gaps.append(Gap("invalid_field", f"end {end_text} is before start {start_text}", Source(file)))
    phase = f.str_(root, "failure_phase", "")
    if phase is not None and phase not in {p.value for p in FailurePhase}:
        # Kept verbatim (a newer launcher may know more phases) but the gate cannot use it (G3).
        gaps.append(
            Gap(
                "unknown_failure_phase",
                f"failure_phase {phase!r} is not one of {', '.join(p.value for p in FailurePhase)}",
                Source(file, json_path="failure_phase"),
            )
        )
    exit_info = None
    ex = f.obj(root, "exit", "")
    if ex is not None:
        sig = ex.get("signal")
        signal: int | str | None = None
        if is_int(sig) or isinstance(sig, str):
            signal = sig
        elif sig is not None:
            f.invalid("exit.signal", "a signal number or name", sig)
        exit_info = ExitInfo(
            Source(file, json_path="exit"),
            f.int_(ex, "status", "exit"),
            signal,
            f.bool_(ex, "timeout", "exit"),
        )
    candidate = None
    cand = f.obj(root, "candidate", "")
    if cand is not None:
        candidate = _candidate(cand, f, file, unrec)
    identity = RunIdentity(
        src=Source(file),
        experiment_id=f.str_(root, "experiment_id", ""),
        round_id=f.str_(root, "round_id", ""),
        attempt=f.int_(root, "attempt", ""),
        command=f.str_(root, "command", ""),
        cwd=f.str_(root, "cwd", ""),
        rank=f.int_(root, "rank", ""),
        device=f.int_(root, "device", ""),
        pid=f.int_(root, "pid", ""),
        start=start,
        end=end,
        start_text=start_text,
        end_text=end_text,
        exit=exit_info,
        failure_phase=phase,
        candidate=candidate,
        env_probe=f.str_(root, "env_probe", ""),
        source_sites=f.str_(root, "source_sites", ""),
        cache_writers=_cache_writers(root, f, text),
        failing_path=f.obj(root, "failing_path", ""),
    )
    return RunFile(file, identity, unrec, gaps)


def _candidate(cand: dict[str, Any], f: _Fields, file: str, unrec: list[Unrecognized]) -> Candidate:
    for key in cand:
        if key not in _CANDIDATE_KEYS:
            unrec.append(
                Unrecognized(
                    Source(file, json_path=join("candidate", key)), f"{key}: {show(cand[key])}", "run.json"
                )
            )
    names: list[str] = []
    raw = cand.get("scope_names")
    if isinstance(raw, list):
        for i, n in enumerate(raw):
            if isinstance(n, str):
                names.append(n)
            else:
                f.invalid(f"candidate.scope_names[{i}]", "a string", n)
    elif isinstance(raw, str):
        names.append(raw)
    elif raw is not None:
        f.invalid("candidate.scope_names", "an array of strings", raw)
    return Candidate(
        src=Source(file, json_path="candidate"),
        scope_names=tuple(names),
        marker_file=f.str_(cand, "marker_file", "candidate"),
        optimize_options=f.obj(cand, "super_kernel_optimize_options", "candidate"),
        debug_options=f.obj(cand, "super_kernel_debug_options", "candidate"),
        source_revision=f.str_(cand, "source_revision", "candidate"),
        config_fingerprint=f.str_(cand, "config_fingerprint", "candidate"),
    )


def _is_decimal(text: str) -> bool:
    """A decimal id that fits the runtime's integers (longer digit runs are refused, not converted)."""
    t = text.strip()
    return t.isascii() and t.isdigit() and len(t) <= MAX_DECIMAL_RUN and int(t) <= MAX_U64


def _cache_writers(root: dict[str, Any], f: _Fields, text: str | None) -> dict[int, tuple[int, ...]]:
    """``{"<writer nodeId>": [reader nodeIds]}`` (safety rule "cache", §4.3).

    A malformed entry is never dropped silently: it becomes an ``invalid_field`` gap citing run.json's
    line (when the text is known) and JSON path, and the well-formed reader ids of the entry are kept —
    a declared cache dependency half-read still constrains the cut."""
    out: dict[int, tuple[int, ...]] = {}
    obj = root.get("cache_writers")
    if obj is None:
        return out
    if not isinstance(obj, dict):
        _cache_gap(f, text, "cache_writers", None, "an object {writer nodeId: [reader nodeIds]}", obj)
        return out
    for key, value in obj.items():
        path = join("cache_writers", key)
        if not _is_decimal(key):
            _cache_gap(f, text, path, key, "a decimal nodeId as key", key)
            continue
        readers = value if isinstance(value, list) else [value]
        ids = tuple(int(v) for v in readers if is_int(v) and v >= 0)
        if len(ids) != len(readers):
            _cache_gap(f, text, path, key, "a nodeId or an array of nodeIds", value)
        if ids or not readers:
            out[int(key)] = ids
    return out


def _cache_gap(f: _Fields, text: str | None, path: str, key: str | None, expected: str, value: Any) -> None:
    """An ``invalid_field`` gap for cache_writers with the line of the entry in run.json."""
    line = _json_key_line(text, "cache_writers", key)
    f.gaps.append(
        Gap(
            "invalid_field",
            f"run.json field {path}: expected {expected}, got {show(value)}; the cache writer→reader "
            "ordering of this entry is not checked (§4.3)",
            Source(f.file, line, path),
        )
    )


def _json_key_line(text: str | None, outer: str, key: str | None) -> int | None:
    """1-based line of ``"outer": {… "key":`` in JSON text (the outer key's line when key is None)."""
    if text is None:
        return None
    m = re.search(r'"' + re.escape(outer) + r'"\s*:', text)
    if m is None:
        return None
    pos = m.start()
    if key is not None:
        k = re.compile(r'"' + re.escape(json.dumps(key)[1:-1]) + r'"\s*:').search(text, m.end())
        if k is not None:
            pos = k.start()
    return text.count("\n", 0, pos) + 1


# ----------------------------------------------------------------------------------------------
# env/check_environment.json


@dataclass(frozen=True, slots=True)
class OptionProbe:
    """One probed option: ``options.<kind>.<name>`` with its accepted/rejected values."""

    src: Source
    kind: str  # "debug_options" | "optimize_options" | other group name
    name: str
    accepted: bool | None
    accepted_values: tuple[Any, ...]  # lists frozen to tuples so they compare and hash
    rejected_values: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class EnvProbe:
    """The environment probe's answer (``check_environment.json``): whether the runtime is ready and which
    scope forms and options it accepts."""

    src: Source
    ready: bool | None
    runtime_loaded: bool | None
    option_probe_status: str | None
    explicit_none_exclusion_accepted: bool | None
    explicit_none_exclusion_status: str | None
    explicit_none_semantic_validation: str | None
    options: tuple[OptionProbe, ...]

    def option(self, name: str, kind: str | None = None) -> OptionProbe | None:
        for o in self.options:
            if o.name == name and (kind is None or o.kind == kind):
                return o
        return None

    def accepts(self, name: str, value: Any, kind: str | None = None) -> bool | None:
        """Whether the probe accepted ``value`` for option ``name``: True/False, or None when the
        option was not probed (the next step must then say what it assumed, scene-layout.md)."""
        o = self.option(name, kind)
        if o is None:
            return None
        v = _freeze(value)
        if v in o.accepted_values:
            return True
        if v in o.rejected_values or o.accepted is False:
            return False
        return False if o.accepted_values else None


@dataclass(slots=True)
class EnvProbeFile:
    """A parsed environment probe, with the entries and gaps it could not take."""

    file: str
    probe: EnvProbe
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """One row per probed option: file, line, json_path, kind, name, accepted, accepted_values,
        rejected_values (values rendered as JSON text)."""

        return records_frame((({}, o) for o in self.probe.options), PROBE_COLS)


def _freeze(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def _thaw(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


def parse_env_probe(path: str | os.PathLike[str]) -> EnvProbeFile:
    """Parse the wrapper capability probe (also the auto-tune fixture's ``environment.json``)."""
    file, doc = load_json(path, what="environment probe JSON")
    return env_probe_from_json(doc, file)


def env_probe_from_json(doc: Any, file: str) -> EnvProbeFile:
    root = as_object(doc, file, "")
    gaps: list[Gap] = []
    f = _Fields(file, gaps, "environment probe")
    rt = f.obj(root, "runtime_environment", "")
    caps = f.obj(root, "scope_capabilities", "")
    ene = f.obj(caps, "explicit_none_exclusion", "scope_capabilities") if caps else None
    ene_path = "scope_capabilities.explicit_none_exclusion"
    options: list[OptionProbe] = []
    groups = f.obj(root, "options", "")
    for kind, group in (groups or {}).items():
        gpath = join("options", kind)
        if not isinstance(group, dict):
            f.invalid(gpath, "an object of options", group)
            continue
        for name, entry in group.items():
            opath = join(gpath, name)
            if not isinstance(entry, dict):
                f.invalid(opath, "an object with accepted_values", entry)
                continue
            options.append(
                OptionProbe(
                    Source(file, json_path=opath),
                    kind,
                    name,
                    f.bool_(entry, "accepted", opath),
                    _values(entry, "accepted_values", opath, f),
                    _values(entry, "rejected_values", opath, f),
                )
            )
    probe = EnvProbe(
        src=Source(file),
        ready=f.bool_(root, "ready", ""),
        runtime_loaded=f.bool_(rt, "loaded", "runtime_environment") if rt else None,
        option_probe_status=f.str_(root, "option_probe_status", ""),
        explicit_none_exclusion_accepted=f.bool_(ene, "accepted", ene_path) if ene else None,
        explicit_none_exclusion_status=f.str_(ene, "status", ene_path) if ene else None,
        explicit_none_semantic_validation=f.str_(ene, "semantic_validation", ene_path) if ene else None,
        options=tuple(options),
    )
    return EnvProbeFile(file, probe, [], gaps)


def _values(entry: dict[str, Any], key: str, path: str, f: _Fields) -> tuple[Any, ...]:
    v = entry.get(key)
    if v is None:
        return ()
    if not isinstance(v, list):
        f.invalid(join(path, key), "an array", v)
        return ()
    return tuple(_freeze(x) for x in v)


# ----------------------------------------------------------------------------------------------
# source_sites.json


@dataclass(frozen=True, slots=True)
class SourceSite:
    """One ``source_sites.json`` entry: the marker-file line that emits graph node ``node_id``."""

    src: Source
    node_id: int
    line: int  # 1-based line in the marker file


@dataclass(slots=True)
class SourceSitesFile:
    """A parsed ``source_sites.json`` in document order; a bad entry is a gap, never a guessed line."""

    file: str
    sites: list[SourceSite]
    unrecognized: list[Unrecognized] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)

    @property
    def by_node(self) -> dict[int, int]:
        """graph nodeId → marker-file line."""
        return {s.node_id: s.line for s in self.sites}

    def to_frame(self) -> pd.DataFrame:
        """Columns: file, line (None: JSON), json_path, node_id, source_line."""

        return records_frame((({}, site) for site in self.sites), SITE_COLS)


def parse_source_sites(path: str | os.PathLike[str]) -> SourceSitesFile:
    """``{"120": 41, …}``: graph nodeId → 1-based line. Bad entries become gaps (that node then has
    no known source line) rather than guesses."""
    file, doc = load_json(path, what="source_sites.json (nodeId -> marker-file line)")
    return source_sites_from_json(doc, file)


def source_sites_from_json(doc: Any, file: str) -> SourceSitesFile:
    """The sites of a parsed ``source_sites.json``, in the document's order; bad entries become gaps.

    Why two paths: a plain entry (ASCII digits too short to pass ``MAX_U64`` → a JSON int ≥ 1) is what
    the general checks accept unchanged (its key strips to itself), and is built without them through
    :func:`frozen_builder` (2,500 entries: ~5 ms → ~1.5 ms); every other entry takes the general checks."""
    from skdbg.parsers.bulk import build_source, frozen_builder

    root = as_object(doc, file, "")
    gaps: list[Gap] = []
    f = _Fields(file, gaps, "source_sites.json")
    sites: list[SourceSite] = []
    new_site = frozen_builder(SourceSite)
    plain_len = len(str(MAX_U64))  # fewer digits than this cannot pass MAX_U64
    for key, value in root.items():
        if type(value) is int and value >= 1 and key.isascii() and key.isdigit() and len(key) < plain_len:
            sites.append(new_site(build_source(file, None, key), int(key), value))
            continue
        if (site := checked_site(f, file, key, value)) is not None:
            sites.append(site)
    return SourceSitesFile(file, sites, [], gaps)


def checked_site(f: _Fields, file: str, key: str, value: Any) -> SourceSite | None:
    """One ``source_sites.json`` entry through the key and value checks (the general path): its site,
    or None with the entry's gap recorded in ``f``."""
    t = key.strip()
    if not _is_decimal(t):
        f.invalid(key, "a decimal graph nodeId as key", key)
        return None
    if not is_int(value) or value < 1:
        f.invalid(key, "a 1-based line number", value)
        return None
    return SourceSite(Source(file, json_path=key), int(t), int(value))


# ----------------------------------------------------------------------------------------------
# failing_path (V2: "the previously failing path", same workload/input/step — triage.md §5.1)

#: the fields of ``failing_path`` that identify the path (scene-layout.md shows prompt_id and step;
#: §5.1 V2 names workload, input and step). Other keys are notes and never decide a match.
FAILING_PATH_FIELDS = ("workload", "input", "prompt_id", "step")


def failing_path_differences(declared: dict[str, Any], observed: dict[str, Any] | None) -> list[str]:
    """Why ``observed`` is not the ``declared`` failing path, compared by the contract fields the
    declaration carries (an extra key on either side is no mismatch). A declaration without any
    contract field is compared key by key — it is all the user said."""
    keys = [k for k in FAILING_PATH_FIELDS if k in declared] or sorted(declared)
    seen = observed or {}
    out: list[str] = []
    for k in keys:
        if k not in seen:
            out.append(f"{k} missing (declared {show(declared[k])})")
        elif seen[k] != declared[k] or type(seen[k]) is not type(declared[k]):
            out.append(f"{k} {show(seen[k])} ≠ declared {show(declared[k])}")
    return out


#: a JSON record's provenance columns: its file, no line, its JSON path
JSON_SRC_COLS = (
    Col("file", lambda r: r.src.file),
    Col("line", lambda r: None),
    Col("json_path", lambda r: r.src.json_path),
)
#: env/check_environment.json: one row per probed option (values rendered as JSON text)
PROBE_COLS = (
    *JSON_SRC_COLS,
    Col("kind"),
    Col("name"),
    Col("accepted"),
    Col("accepted_values", lambda o: show(_thaw(o.accepted_values))),
    Col("rejected_values", lambda o: show(_thaw(o.rejected_values))),
)
#: source_sites.json: nodeId -> marker-file line
SITE_COLS = (*JSON_SRC_COLS, Col("node_id"), Col("source_line", lambda site: site.line))
