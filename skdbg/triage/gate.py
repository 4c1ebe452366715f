"""Entry gate G1–G5 with the freshness predicates F1–F9 (triage.md §1, §2.1–§2.3, §7 R1/X1/X2/X6/X7).

Why decidable predicates: the gate decides whether any child may be blamed at all. Every id is a
function of the scene that either holds, fails (blocking: the verdict becomes C0 and the failure scene
lists the gap), or cannot be decided (``unknown``: a soft gap that says what was assumed). Each failed
predicate carries a :class:`GateGap` naming the file/line that failed and what to collect next time.

Decisions this module makes where the spec leaves room ([SKDBG], documented here and in the gaps):

* G1 — ``command``, ``rank``, ``start``, ``end`` must come from run.json; ``device`` (runtime
  ``device_id=``) and ``pid`` (the plog) may be auto-filled: that is a soft gap, not a failure.
* F4 — applies to the file-logger metadata logs (``*.log`` of the model dir). The JSON dumps
  (``sk_task_queue.json``, ``sk_graph_*.json``) carry no timestamp and are written by the same build
  step; their mtime is not a build time once a scene was copied or checked out, so they are not
  timed. Tf falls back to the run end (+grace) when no fault line exists (hang without DFX).
* F5/F6 — a definite contradiction fails (the ModelId names a dir that is absent, the scope id has no
  SK record, Node Count ≠ nodeCnt); an ambiguity is a soft gap so that confidence rule C1 (low) can
  apply. Not run for non-SK (X3) and GE (X6) faults.
* F7 — every file-logger prefix pid of P's metadata logs equals P; with no prefix at all the producer is
  unknown (soft gap, hand-written fixtures).
* F8 — candidate fingerprint: fails when (a) a ``--run`` manifest disagrees with the scene's own run.json
  on pid / scope names / source revision / config fingerprint, (b) the marker file exists but opens no
  scope of a candidate scope name — read by :mod:`skdbg.parsers.markers`, so ``begin("<name>")`` in any
  import spelling and GE ``torchair.scope.super_kernel("<name>")`` count, comments, strings and wrappers
  do not (a computed name or an unparsable file is a soft gap) — or (c) the faulting SK's scope
  is none of the candidate's scope names; passes when source_revision is recorded and nothing
  contradicts; unknown when the manifest has no candidate block.
* F9 — diagnostic evidence: debug-option map, entry suffix, ``op_trace=true``, task debugOptions
  0x2/0x10, ``DEBUG_PER_OP_MAX_CORE``, ``sk_prof`` files. The mode is decided from this evidence, so
  F9 passes and ``diagnostic`` labels the attempt; a run.json with an empty debug-option map while the
  evidence shows exec trace / sync-all / cross-core / per-op-max-core is a reported gap, not a failure.
* G3 — compile → fail (X1); shallow/no fusion for an AOT SK run → fail (X2); phase unknown/missing →
  passes on a device fault line or handler output (said so), else fails.
* G4 — missing source_revision fails; a missing or unready probe and an unknown dialect are soft gaps
  (C1 caps the verdict at low).
* X6 — a GE-mode SK fails G2 whatever else holds (no ``sk_meta/<pid>`` exists for that family).
* X7 — the attempt never started: no plog and no sk_meta in the scene, and (the probe says not ready /
  runtime not loaded, or run.json has no pid). Then G1–G5 are ``not_run`` except G3 (failed, X7) and
  the result's ``route_hints`` holds ``X7``.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from skdbg.parsers.common import ParseError
from skdbg.parsers.discovery import MODEL_FILES
from skdbg.parsers.markers import read_markers
from skdbg.parsers.plog import PLOG_NAME_RE
from skdbg.parsers.plog_line import PlogLine
from skdbg.parsers.plog_rows import first_outside
from skdbg.parsers.run_identity import Candidate, RunIdentity
from skdbg.show import show
from skdbg.triage.context import TriageContext
from skdbg.triage.localize import diagnostic_entry, dialect_recognised, models_of, plogs_of
from skdbg.triage.model import EvidenceItem, GateGap, GateResult
from skdbg.triage.skview import instances_of
from skdbg.triage.stages import Localization

if TYPE_CHECKING:
    from skdbg.parsers.evidence import ModelEvidence, PlogEvidence

GATE_IDS = ("G1", "G2", "G3", "G4", "G5")
FRESH_IDS = ("F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9")
WORKFLOW = ("execution", "correctness", "timeout", "hang", "device_fault")
FUSED_NODES_FILE = MODEL_FILES["fused_nodes"]
#: what the gate says of an sk_fused_nodes.log that is there but could not be used, and the fix
UNUSABLE = "is there but could not be used (`skdbg inspect SCENE --table gaps` says why)"
COLLECT_USABLE = (
    f"copy a readable {FUSED_NODES_FILE} into the scene (a regular file, not a link or a special file) "
    "and analyse again"
)

COLLECT_META = (
    "rerun with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 and copy sk_meta/<P>/ of the failing process "
    "(its cwd) into the scene"
)
COLLECT_PLOG = (
    "copy plog-<P>_*.log of the failing process ($ASCEND_PROCESS_LOG_PATH or ~/ascend/log/"
    "{run,debug}/plog/) into the scene's log/plog/"
)
#: debugOptions bits that make an attempt diagnostic (§3.3): 0x2 debug_sync_all, 0x10 cross-core check
_DIAG_BITS = {0x2: "debug_sync_all (debugOptions 0x2)", 0x10: "cross-core check (debugOptions 0x10)"}


@dataclass
class _Gate:
    """Accumulates checks/gaps while the predicates run."""

    checks: dict[str, str] = field(default_factory=dict)
    gaps: list[GateGap] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    evidence: list[EvidenceItem] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)

    def copy(self) -> _Gate:
        """Another accumulator holding the same so far (a draft's checks go on in each copy apart)."""
        return _Gate(
            dict(self.checks), list(self.gaps), list(self.failed), list(self.evidence), list(self.hints)
        )

    def ok(self, gid: str) -> None:
        self.checks.setdefault(gid, "passed")

    def fail(
        self, gid: str, detail: str, collect: str, file: str | None = None, line: int | None = None
    ) -> None:
        self.checks[gid] = "failed"
        if gid not in self.failed:
            self.failed.append(gid)
        self.gaps.append(GateGap(gid, detail, collect, file, line))

    def soft(
        self,
        gid: str,
        detail: str,
        collect: str,
        file: str | None = None,
        line: int | None = None,
        *,
        status: str = "unknown",
    ) -> None:
        """A non-blocking finding; ``status`` only applies when nothing failed the id yet."""
        if self.checks.get(gid) != "failed":
            self.checks[gid] = status
        self.gaps.append(GateGap(gid, detail, collect, file, line))


# ------------------------------------------------------------------------------------------ entry


def run_gate(ctx: TriageContext, loc: Localization) -> GateResult:
    """Evaluate G1–G5 and F1–F9 for the process ``loc.pid`` (see module docstring)."""
    return draft_gate(ctx, loc).finish()


@dataclass(frozen=True, slots=True)
class GateDraft:
    """The gate of one localisation with every check evaluated but G5, which reads each artifact's
    SHA-256 (:func:`draft_gate`). :meth:`finish` evaluates G5 and gives :func:`run_gate`'s result;
    :meth:`assuming_readable` gives the result G5 leads to when every artifact can be read.

    Why split: the digests G5 reads are the last work of a forked plog scan's child (after its scan),
    and the stages after the gate do not depend on them. The engine runs those stages on the gate as
    it is when every artifact reads, meanwhile the child hashes, and checks G5 after them; when an
    artifact cannot be read, it runs them again on the real gate (:func:`~skdbg.triage.engine.analyze_staged`),
    and what they raised on the assumed one is dropped (a failed gate's verdict may not read what raised,
    a model source, say). Either way the analysis, or the error it ends with, is the one the stages give
    on the real gate. On the bench scene G5 waited
    ~12 ms for the child's digests when this process did not hash the artifacts itself meanwhile, and
    hashing them here slowed the filing of the plog's last lines by more."""

    ctx: TriageContext
    loc: Localization
    #: the checks so far (None: the attempt never started, X7: :attr:`early` is the whole result)
    state: _Gate | None
    diagnostic: bool = False
    reasons: tuple[str, ...] = ()
    early: GateResult | None = None

    def assuming_readable(self) -> GateResult:
        """The gate :meth:`finish` gives when every artifact can be read (no read is made here)."""
        if self.state is None:
            assert self.early is not None
            return self.early
        g = self.state.copy()
        g.ok("G5")
        return self._result(g)

    def finish(self) -> GateResult:
        """The gate with G5 evaluated: each artifact's SHA-256 is read (it waits for a digest being
        computed)."""
        if self.state is None:
            assert self.early is not None
            return self.early
        g = self.state.copy()
        _g5(self.ctx, g)
        return self._result(g)

    def _result(self, g: _Gate) -> GateResult:
        for gid in (*GATE_IDS, *FRESH_IDS):
            g.checks.setdefault(gid, "unknown")
        if self.loc.fault.kind == "non_sk":
            g.hints.append("X3")
        failed = tuple(x for x in (*GATE_IDS, *FRESH_IDS) if x in g.failed)
        if "G2" in failed and self.loc.fault.kind != "ge_sk":
            g.hints.append("R1")  # no fresh plog / sk_meta of this attempt: stop, report the evidence gap
        return GateResult(
            passed=not failed,
            failed=failed,
            gaps=tuple(g.gaps),
            checks=tuple((k, g.checks[k]) for k in (*GATE_IDS, *FRESH_IDS)),
            diagnostic=self.diagnostic,
            diagnostic_reasons=self.reasons,
            evidence=tuple(g.evidence),
            route_hints=tuple(dict.fromkeys(g.hints)),
        )


def draft_gate(ctx: TriageContext, loc: Localization) -> GateDraft:
    """G1–G4 and F1–F9 for the process ``loc.pid``; G5 is the draft's (see :class:`GateDraft`)."""
    g = _Gate()
    run = ctx.run
    if _not_started(ctx, run):
        return GateDraft(ctx, loc, None, early=_x7(ctx, run))
    window = _window(ctx, run, g)
    _g1(ctx, loc, run, g)
    _f1(ctx, loc, g)
    _f2(ctx, loc, window, g)
    _f3(ctx, loc, g)
    _f4_f7(ctx, loc, window, g)
    _f5_f6(ctx, loc, g)
    _f8(ctx, loc, run, g)
    diag, reasons = _f9(ctx, loc, run, g)
    # G2 = F1..F9
    blocking = [f for f in FRESH_IDS if g.checks.get(f) == "failed"]
    if loc.fault.kind == "ge_sk":
        g.fail(
            "G2",
            "X6: GE-mode SK (te_superkernel_*) writes no sk_meta/<pid> or task queue; the AOT freshness "
            "gate cannot pass for it",
            "for child attribution rerun under npugraph_ex/aclgraph with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1; "
            "GE exclusion form is torchair.scope.super_kernel(None)",
        )
        g.hints.append("X6")
    elif blocking:
        g.fail(
            "G2",
            "freshness predicates failed: " + ", ".join(blocking),
            "collect fresh plog and sk_meta/<P>/ of the failing attempt (see the F gaps)",
        )
    else:
        g.ok("G2")
    _g3(ctx, loc, run, g)
    if "X1" in g.hints:
        _x1_not_this_workflow(g)
    _g4(ctx, loc, run, g)
    return GateDraft(ctx, loc, g, diag, tuple(reasons))


# ------------------------------------------------------------------------------------------ X7


def _not_started(ctx: TriageContext, run: RunIdentity | None) -> bool:
    """X7: no plog, no sk_meta, and the environment says not ready (or no process pid was recorded)."""
    if ctx.scene.plogs or ctx.evidence.models or run is None:
        return False
    probe = ctx.probe
    env_down = probe is not None and (probe.ready is False or probe.runtime_loaded is False)
    return env_down or run.pid is None


def _x7(ctx: TriageContext, run: RunIdentity | None) -> GateResult:
    probe = ctx.probe
    why = []
    if probe is not None and probe.ready is False:
        why.append("env probe ready=false")
    if probe is not None and probe.runtime_loaded is False:
        why.append("runtime_environment.loaded=false")
    if run is not None and run.pid is None:
        why.append("run.json records no process pid")
    gap = GateGap(
        "G3",
        "X7: environment failure before the attempt started (no plog, no sk_meta; " + ", ".join(why) + ")",
        "fix the environment (load CANN / torch_npu, rerun the probe) and launch the attempt; record it "
        "as not_run, not failed",
    )
    checks = {gid: "not_run" for gid in (*GATE_IDS, *FRESH_IDS)}
    checks["G3"] = "failed"
    return GateResult(
        passed=False,
        failed=("G3",),
        gaps=(gap,),
        checks=tuple(checks.items()),
        route_hints=("X7",),
    )


# ------------------------------------------------------------------------------------------ G1


def _naive(t: datetime) -> datetime:
    return t.replace(tzinfo=None) if t.tzinfo is not None else t


@dataclass(frozen=True, slots=True)
class _Window:
    """The attempt's time window: run.json's start and end, widened by the skew and the grace (F2)."""

    start: datetime | None  # T0 − skew
    end: datetime | None  # T1 + grace
    t0: datetime | None
    t1: datetime | None


def _window(ctx: TriageContext, run: RunIdentity | None, g: _Gate) -> _Window:
    if run is None or run.start is None or run.end is None:
        return _Window(None, None, None, None)
    t0, t1 = _naive(run.start), _naive(run.end)
    if run.start.tzinfo is not None:
        g.gaps.append(
            GateGap(
                "F2",
                "run.json start/end carry a time zone; compared with the zone-less plog times as wall-clock "
                "times of the same clock (assumption)",
                "record run.json times without a zone, in the plog's clock (scene-layout.md)",
            )
        )
    return _Window(ctx.options.earliest(t0), ctx.options.latest(t1), t0, t1)


def _g1(ctx: TriageContext, loc: Localization, run: RunIdentity | None, g: _Gate) -> None:
    run_file = ctx.run_file
    rel = ctx.relpath(run_file.file) if run_file is not None else "run.json"
    if run is None:
        g.fail(
            "G1",
            "no run.json: the failed attempt's command, rank, start and end are unknown",
            "record run.json with command, rank, device, pid, start, end (launcher env RANK / torchrun "
            "--node_rank; the exact argv)",
        )
        return
    missing = []
    if not run.command:
        missing.append("command")
    if run.rank is None:
        missing.append("rank")
    if run.start is None:
        missing.append("start")
    if run.end is None:
        missing.append("end")
    if missing:
        what = []
        if "command" in missing or "rank" in missing:
            what.append(
                "record the launch command and rank in run.json (launcher env RANK / torchrun --node_rank)"
            )
        if "start" in missing or "end" in missing:
            what.append("record the attempt's start and end times in run.json (plog clock)")
        g.fail("G1", f"{rel} lacks {', '.join(missing)} (must come from the manifest)", "; ".join(what), rel)
    if run.pid is None:
        if loc.pid is not None:
            g.soft(
                "G1",
                f"pid {loc.pid} auto-filled from the plog (run.json has no pid)",
                "record pid in run.json",
                rel,
                status="passed",
            )
        else:
            g.fail("G1", "process id unknown (no run.json pid, no plog pid)", "record pid in run.json", rel)
    if run.device is None:
        dev = loc.fault.device_id
        if dev is not None:
            g.soft(
                "G1",
                f"device {dev} auto-filled from the runtime fault line device_id (run.json has no device)",
                "record device in run.json",
                rel,
                status="passed",
            )
        else:
            g.fail(
                "G1",
                "device unknown (no run.json device, no runtime device_id)",
                "record device in run.json",
                rel,
            )
    elif loc.fault.device_id is not None and loc.fault.device_id != run.device:
        g.gaps.append(
            GateGap(
                "G1",
                f"run.json device {run.device} differs from the runtime fault line device_id="
                f"{loc.fault.device_id} (logical vs physical numbering?)",
                "check ASCEND_RT_VISIBLE_DEVICES of the launch",
                rel,
            )
        )
    g.ok("G1")


# ------------------------------------------------------------------------------------------ F1–F3


def _f1(ctx: TriageContext, loc: Localization, g: _Gate) -> None:
    """Plog naming ``plog-<P>_<stamp>.log`` / ``device-<P>_<stamp>.log`` and header pid = P on every used line."""
    pid = loc.pid
    own = [pf for pf in ctx.scene.plogs if pid is not None and pf.pid == pid]
    if pid is None or not own:
        others = sorted({pf.pid for pf in ctx.scene.plogs})
        detail = f"no plog of process {pid}" if pid is not None else "no process pid"
        if others:
            detail += f"; plogs of pid(s) {', '.join(map(str, others))} are foreign and not used"
        g.fail("F1", detail, COLLECT_PLOG.replace("<P>", str(pid) if pid is not None else "<pid>"))
        return
    first_foreign = _first_foreign_lines(plogs_of(ctx, pid))
    for pf in own:
        # cited only when it fails: a thousand rotated plogs each made a relpath (a stat) for nothing
        m = PLOG_NAME_RE.match(_file_name(pf.path))
        if m is None or int(m.group("pid")) != pid:
            rel = ctx.relpath(pf.path)
            g.fail(
                "F1",
                f"{rel} is not named plog-{pid}_<stamp>.log / device-{pid}_<stamp>.log (content-identified copy)",
                f"copy the original plog-{pid}_*.log file (not an excerpt) into the scene",
                rel,
            )
            continue
        foreign = first_foreign.get(pf.path)
        if foreign is not None:
            rel = ctx.relpath(pf.path)
            g.fail(
                "F1",
                f"{rel}:{foreign.src.line} carries pid {foreign.pid} in its header, not {pid}",
                f"copy the plog written by process {pid} itself; do not merge other processes' logs",
                rel,
                foreign.src.line,
            )
    g.ok("F1")


def _file_name(path: str) -> str:
    """``Path(path).name``, without parsing the whole path where the text after the last separator
    is the name already (a thousand rotated plogs, each checked by F1).

    Why equal: ``pathlib`` drops empty and ``.`` components and keeps every other one as written, so
    its last component is the text after the last ``/`` unless that text is empty or ``.``; those
    (and any other separator convention) go through ``Path``."""
    if os.sep == "/" and os.altsep is None:
        name = os.path.basename(path)  # the text after the last "/"
        if name not in ("", "."):
            return name
    return Path(path).name


def _first_foreign_lines(plogs: list[PlogEvidence]) -> dict[str, PlogLine | None]:
    """Per file of ``plogs``: its first marker line whose header names another pid (recorded by the
    evidence scan), None when it has none; a file is answered by the first process evidence that
    lists it, and its lowest line number wins (the first such in ``foreign`` order on a tie).

    Why one pass: asked file by file, each file searched every evidence's file list and foreign
    lines, quadratic in a process of a thousand rotated plogs."""
    out: dict[str, PlogLine | None] = {}
    for pe in plogs:
        firsts: dict[str, PlogLine] = {}
        for line in pe.foreign:
            file = line.src.file
            held = firsts.get(file)
            if held is None or (line.src.line or 0) < (held.src.line or 0):
                firsts[file] = line
        for file in pe.files:
            if file not in out:
                out[file] = firsts.get(file)
    return out


def _f2(ctx: TriageContext, loc: Localization, w: _Window, g: _Gate) -> None:
    plogs = plogs_of(ctx, loc.pid)
    if not plogs:
        g.checks.setdefault("F2", "not_run")
        return
    if w.start is None or w.end is None:
        g.soft(
            "F2",
            "run.json start/end missing: plog line times cannot be checked against the attempt",
            "record start and end in run.json",
        )
        return
    opts = ctx.options
    for pe in plogs:
        line = first_outside(pe, w.start, w.end)  # the first in time order (pe.lines), its rows as they are
        if line is None:
            continue
        rel = ctx.relpath(line.src.file)
        g.fail(
            "F2",
            f"{rel}:{line.src.line} time {line.ts_text} lies outside the attempt "
            f"[start−{opts.skew.total_seconds():g}s, end+{opts.grace.total_seconds():g}s] "
            "(pid reuse or a log from another run)",
            "copy the plog of this attempt only (match the run.json start/end); fix run.json times "
            "if they are wrong",
            rel,
            line.src.line,
        )
        return
    g.ok("F2")


def _f3(ctx: TriageContext, loc: Localization, g: _Gate) -> None:
    pid = loc.pid
    mes = models_of(ctx, pid)
    collect = COLLECT_META.replace("<P>", str(pid) if pid is not None else "<pid>")
    if not mes:
        others = sorted({m.pid_label for m in ctx.evidence.models})
        detail = f"no sk_meta/{pid if pid is not None else '<pid>'}/ model directory"
        if others:
            detail += f"; sk_meta/{', '.join(others)} belongs to another process and is never substituted"
        g.fail("F3", detail, "use sk_meta/<P>/ of the failing process; " + collect)
        return
    for me in mes:
        parent = me.model.path.parent
        if parent.name != str(pid) or parent.parent.name != "sk_meta":
            rel = ctx.relpath(str(me.model.path))
            g.fail(
                "F3",
                f"{rel} is not under sk_meta/{pid}/",
                "keep the runtime layout sk_meta/<pid>/model_<m>/ when copying",
                rel,
            )
    g.ok("F3")


# ------------------------------------------------------------------------------------------ F4 / F7


def _f4_f7(ctx: TriageContext, loc: Localization, w: _Window, g: _Gate) -> None:
    """F4 first timestamped line (pid P, in [T0−skew, Tf]); F7 every prefix pid = P (process-owned)."""
    pid = loc.pid
    mes = models_of(ctx, pid)
    if not mes:
        g.checks.setdefault("F4", "not_run")
        g.checks.setdefault("F7", "not_run")
        return
    upper = loc.fault_time
    upper_label = "Tf (first fault line)"
    if upper is None and w.end is not None:
        upper, upper_label = w.end, "end+grace (no fault line)"
    any_prefix = False
    for me in mes:
        for role, path in sorted(me.model.files.items(), key=lambda item: item[1]):
            if path.suffix != ".log":
                continue
            parsed = me.provenance(role)
            if parsed is None:
                continue  # unreadable: G5's concern
            rel = ctx.relpath(str(path))
            first_ts: datetime | None = None
            first_pid: int | None = None
            first_line: int | None = None
            foreign: tuple[int, int | None] | None = None
            if parsed.first_prefix is not None:
                any_prefix = True
                first_ts, first_pid, first_line = parsed.first_prefix
                others = [(line or 0, p) for p, line in parsed.pid_first_line.items() if p != pid]
                if others:
                    line, other = min(others)
                    foreign = (other, line)
            if foreign is not None:
                g.fail(
                    "F7",
                    f"{rel}:{foreign[1]} was written by pid {foreign[0]}, not the failing process {pid} "
                    "(compat/verify/profile metadata never substitutes, eval 10)",
                    "use sk_meta/<P>/ written by the failing process itself",
                    rel,
                    foreign[1],
                )
            if first_line is not None:
                if first_pid != pid:
                    g.fail(
                        "F4",
                        f"{rel}:{first_line} first timestamped line has pid {first_pid}, not {pid}",
                        "use sk_meta/<P>/ of the failing process; " + COLLECT_META.replace("<P>", str(pid)),
                        rel,
                        first_line,
                    )
                elif (
                    first_ts is not None
                    and w.start is not None
                    and upper is not None
                    and not (w.start <= first_ts <= upper)
                ):
                    g.fail(
                        "F4",
                        f"{rel}:{first_line} built at {first_ts:%Y-%m-%d %H:%M:%S.%f}, outside "
                        f"[start−skew, {upper_label}]: stale metadata",
                        "rerun with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 and copy the fresh sk_meta/<P>/",
                        rel,
                        first_line,
                    )
            else:
                mtime = datetime.fromtimestamp(path.stat().st_mtime)
                if w.start is not None and upper is not None and not (w.start <= mtime <= upper):
                    g.fail(
                        "F4",
                        f"{rel} has no file-logger prefix and its mtime {mtime:%Y-%m-%d %H:%M:%S} lies outside "
                        f"[start−skew, {upper_label}]",
                        "copy sk_meta/<P>/ preserving mtimes (cp -p / rsync -t), or rerun with "
                        "ASCEND_OP_COMPILE_SAVE_KERNEL_META=1",
                        rel,
                    )
    if w.start is None or upper is None:
        g.soft("F4", "run.json start missing: metadata build times not checked", "record start in run.json")
    else:
        g.ok("F4")
    if not any_prefix:
        g.soft(
            "F7",
            "metadata logs carry no file-logger prefix: producer pid unknown (hand-written copy?)",
            "copy the runtime-written sk_meta/<P>/ (file-logger prefix [<pid>:<tid>])",
        )
    else:
        g.ok("F7")


# ------------------------------------------------------------------------------------------ F5 / F6


def _f5_f6(ctx: TriageContext, loc: Localization, g: _Gate) -> None:
    kind = loc.fault.kind
    if kind in ("non_sk", "ge_sk"):
        g.checks["F5"] = "not_run"
        g.checks["F6"] = "not_run"
        return
    collect = "rerun with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1 and use sk_meta/<P>/ of the failing process"
    notes = " ".join(n for n in loc.notes if n.startswith(("F5", "F6", "F3", "C1")))
    if loc.instance is not None:
        g.ok("F5")
        inst = loc.instance
        n, cnt = inst.node_count, loc.fault.node_cnt
        if n is not None and cnt is not None and n != cnt:
            file = inst.block.src.file if inst.block is not None else None
            g.fail(
                "F6",
                f"{inst.model_label} scope {inst.scope_id}: Node Count {n} ≠ DFX nodeCnt {cnt} "
                "(metadata of a different compilation)",
                collect,
                file,
                inst.block.src.line if inst.block is not None else None,
            )
        elif inst.block is None:
            unusable = _unusable_fused_nodes(ctx, inst.model)
            if unusable is not None:
                g.soft(
                    "F6",
                    f"{inst.model_label} scope {inst.scope_id}: {FUSED_NODES_FILE} {UNUSABLE}: no SK Function "
                    "record to compare",
                    COLLECT_USABLE,
                    _cited(ctx, unusable),
                )
            else:
                g.soft(
                    "F6",
                    f"{inst.model_label} scope {inst.scope_id}: no SK Function record in sk_fused_nodes.log",
                    collect,
                )
        elif cnt is None:
            g.soft(
                "F6",
                "no DFX/header nodeCnt printed: Node Count not compared",
                "keep the handler output (plog INFO level)",
                status="passed",
            )
        else:
            g.ok("F6")
        return
    if loc.instance_rule == "ambiguous":
        detail = notes or f"{len(loc.instance_candidates)} SK instances fit the fault"
        g.soft(
            "F5",
            detail + " (C1: verdict capped at low)",
            "rerun at a dialect printing ModelId/SkScopeId (D5) or narrow the scope (N1)",
        )
        g.checks["F6"] = "unknown"
        return
    if kind == "none":
        g.soft(
            "F5",
            "no fault line names an SK instance (hang/timeout without DFX)",
            "rerun with debug_op_exec_trace (D1/D2) to get the handler output",
        )
        g.checks["F6"] = "unknown"
        return
    # kind sk, nothing resolved
    if any(n.startswith("F6") for n in loc.notes):
        g.ok("F5")
        g.fail("F6", notes or "the SK named by the fault is not in the metadata", collect)
        return
    if (
        loc.fault.model is None
        and loc.fault.scope_id is None
        and not any(n.startswith(("F5", "F3")) for n in loc.notes)
    ):
        g.soft("F5", "the fault names no model/scope and no metadata SK could be tied to it", collect)
        g.checks["F6"] = "unknown"
        return
    g.fail("F5", notes or "the model directory named by the fault is not in sk_meta/<P>/", collect)
    g.checks["F6"] = "not_run"


# ------------------------------------------------------------------------------------------ F8


def _unusable_fused_nodes(ctx: TriageContext, me: ModelEvidence) -> Path | None:
    """The ``sk_fused_nodes.log`` of ``me`` when it is there but could not be used: its parse failed
    (unreadable, binary), or the layout refused it (a link out of the scene, a special file). None
    when it is absent or was parsed. Why: "missing, rerun with the metadata switch on" is the wrong
    advice for a file the user did collect."""
    if me.fused_nodes is not None:
        return None
    path = me.model.files.get("fused_nodes")
    if path is not None:
        return path
    path = me.model.path / FUSED_NODES_FILE
    return path if path in ctx.scene.layout.refused else None


def _cited(ctx: TriageContext, path: Path) -> str:
    """``path`` relative to the scene as it is named there: a refused link is cited where it lies,
    not where it points (``relpath`` follows links)."""
    try:
        return path.relative_to(ctx.root).as_posix()
    except ValueError:
        return ctx.relpath(path)


def _scope_matches(scope_name: str, wanted: str) -> bool:
    """Nested names print joined with ``_`` (sk_scope_split.log); a candidate name may be one part."""
    return (
        scope_name == wanted
        or scope_name.startswith(wanted + "_")
        or scope_name.endswith("_" + wanted)
        or ("_" + wanted + "_") in scope_name
    )


def _f8_reads_source(cand: Candidate | None) -> bool:
    """F8 (b) scans the model source for the candidate's scope markers only when the candidate names
    scopes; F8 and :func:`read_f8_markers_ahead` both ask this."""
    return cand is not None and bool(cand.scope_names)


def f8_reads_source(ctx: TriageContext) -> bool:
    """Gate F8 scans the model source of this analysis (:func:`_f8_reads_source` of its run.json's
    candidate): what the steps made before the plogs are in (:func:`skdbg.triage.engine.prepare_late_stages`)
    may read of that file early, since F8 reads it anyway."""
    run = ctx.run
    return _f8_reads_source(run.candidate if run is not None else None)


def read_f8_markers_ahead(ctx: TriageContext) -> None:
    """Make F8's marker scan now, under the name F8 gives it, into the scan cache F8 then reads it from
    (:func:`skdbg.triage.engine.prepare_late_stages`); nothing when F8 will scan no source. Whatever the
    scan raises is left as it is: F8 scans again (a failed scan is not kept), meets it and reports it."""
    if not f8_reads_source(ctx):
        return
    marker = ctx.marker_file()
    if marker is not None:
        with contextlib.suppress(Exception):  # F8's to meet again
            read_markers(marker, ctx.relpath(str(marker)))


def _f8_markers(ctx: TriageContext, marker: Path, names: tuple[str, ...], g: _Gate) -> None:
    """F8 (b): the marker file opens every candidate scope name — read by the one marker model
    (:mod:`skdbg.parsers.markers`): direct npugraph_ex calls (aliases resolved) and GE-mode
    ``torchair.scope.super_kernel("name")`` scopes count; commented-out calls, markers inside string
    literals and wrappers never do."""
    rel = ctx.relpath(str(marker))
    try:
        scan = read_markers(marker, rel)
    except ParseError as exc:
        g.soft(
            "F8",
            f"{exc}: the scope markers of the candidate could not be read",
            "keep the marker file of the failed attempt (a Python source) in the scene or under --source-root",
            rel,
            exc.line,
        )
        return
    found = scan.begun_names()
    lost = [n for n in names if n not in found]
    if not lost:
        return
    computed = scan.computed()
    if computed:
        m = computed[0]
        g.soft(
            "F8",
            f"{rel} has no literal scope marker for {', '.join(map(repr, lost))}; line {m.line} opens a scope "
            f"with a computed name ({m.label}) that may be it: not decidable from the source",
            "record candidate.scope_names exactly as the run named them, or pass the names as string literals",
            rel,
            m.line,
        )
        return
    why = ""
    if scan.ignored:
        i = scan.ignored[0]
        why = f" (line {i.line}: {i.reason}, §4.5.1)"
    g.fail(
        "F8",
        f"{rel} has no scope marker opening {', '.join(map(repr, lost))}{why}: the source is not the candidate "
        "that ran (commented-out or string-literal markers never count)",
        "check out the source revision of the failed attempt (candidate.source_revision)",
        rel,
    )


def _f8(ctx: TriageContext, loc: Localization, run: RunIdentity | None, g: _Gate) -> None:
    cand = run.candidate if run is not None else None
    if run is None or cand is None:
        g.soft(
            "F8",
            "run.json has no candidate block: the attempt's candidate fingerprint is unknown",
            "record candidate{scope_names, marker_file, options, source_revision, config_fingerprint} in run.json",
        )
        return
    rel = ctx.relpath(ctx.run_file.file) if ctx.run_file is not None else "run.json"
    # (a) --run override vs the scene's own run.json
    own = ctx.evidence.run
    if ctx.run_override is not None and own is not None:
        mine, theirs = own.identity, run
        diffs = []
        if mine.pid is not None and theirs.pid is not None and mine.pid != theirs.pid:
            diffs.append(f"pid {theirs.pid} ≠ {mine.pid}")
        mc, tc = mine.candidate, theirs.candidate
        if mc is not None and tc is not None:
            for label, a, b in (
                ("scope_names", tc.scope_names, mc.scope_names),
                ("source_revision", tc.source_revision, mc.source_revision),
                ("config_fingerprint", tc.config_fingerprint, mc.config_fingerprint),
            ):
                if a and b and a != b:
                    diffs.append(f"{label} {a!r} ≠ {b!r}")
        if diffs:
            g.fail(
                "F8",
                "the --run manifest describes another candidate than the scene's run.json: "
                + "; ".join(diffs),
                "pass the manifest of this attempt (or none: the scene's run.json is used)",
                ctx.relpath(own.file),
            )
    # (b) marker file holds the candidate's scope markers
    marker = ctx.marker_file()
    if cand.marker_file and marker is None:
        g.gaps.append(
            GateGap(
                "F8",
                f"marker file {cand.marker_file} not found: marker hash not checked",
                "give --source-root or keep src/ in the scene",
            )
        )
    if marker is not None and _f8_reads_source(cand):
        _f8_markers(ctx, marker, cand.scope_names, g)
    # (c) the faulting SK belongs to the candidate's scopes
    inst = loc.instance
    if (
        inst is not None
        and cand.scope_names
        and inst.scope_name
        and not any(_scope_matches(inst.scope_name, n) for n in cand.scope_names)
    ):
        g.fail(
            "F8",
            f"the faulting SK's scope {inst.scope_name!r} is none of the candidate scopes "
            f"{list(cand.scope_names)}",
            "record the scope names of this attempt in run.json candidate.scope_names",
            rel,
        )
    if not cand.source_revision:
        g.soft(
            "F8",
            "candidate.source_revision not recorded: fingerprint incomplete",
            "record candidate.source_revision (git rev-parse HEAD)",
        )
        return
    g.ok("F8")


# ------------------------------------------------------------------------------------------ F9


def _f9(ctx: TriageContext, loc: Localization, run: RunIdentity | None, g: _Gate) -> tuple[bool, list[str]]:
    reasons: list[str] = []
    strong: list[str] = []  # evidence that the debug options were on (contradicts an empty map)
    cand = run.candidate if run is not None else None
    if cand is not None and cand.debug_options:
        reasons.append(f"run.json super_kernel_debug_options: {show(cand.debug_options)}")
    entry = loc.fault.entry if loc.fault.kind == "sk" else None
    suffix = diagnostic_entry(entry)
    if suffix is not None:
        r = f"SK entry {entry} has the {suffix} suffix"
        reasons.append(r)
        strong.append(r)
    if loc.incident is not None and loc.incident.op_trace:
        r = "handler printed op_trace=true"
        if suffix is None:
            reasons.append(r)
            strong.append(r)
    insts = [loc.instance] if loc.instance is not None else []
    if not insts:
        insts = [i for me in models_of(ctx, loc.pid) for i in instances_of(me)]
    for inst in insts:
        for bit, label in _DIAG_BITS.items():
            hit = next((t for t in inst.tasks if t.debug_options is not None and t.debug_options & bit), None)
            if hit is not None:
                r = f"{label} on task {hit.index} of scope {inst.scope_id}"
                reasons.append(r)
                strong.append(r)
                g.evidence.append(ctx.cite("F9", hit.origin, hit.src, rule="F9"))
    for me in models_of(ctx, loc.pid):
        fr = me.fail_reasons
        per_op = fr is not None and fr.per_op_max_core is True
        if fr is not None and not per_op:
            per_op = any(
                fs.break_info is not None and fs.break_info.break_reason == "DEBUG_PER_OP_MAX_CORE"
                for fs in fr.fused_scopes
            )
        if not per_op and me.scope_split is not None:
            per_op = any(
                sc.break_info is not None and sc.break_info.break_reason == "DEBUG_PER_OP_MAX_CORE"
                for snap in me.scope_split.snapshots
                for sc in snap.scopes
            )
        if per_op:
            r = f"DEBUG_PER_OP_MAX_CORE in {me.model.label}"
            reasons.append(r)
            strong.append(r)
    if ctx.evidence.layout.prof_files:
        reasons.append("sk_prof_device_*.json present (ASCEND_PROF_SK_ON profiling)")
    diagnostic = bool(reasons)
    reasons = list(dict.fromkeys(reasons))
    if cand is not None and cand.debug_options is not None and not cand.debug_options and strong:
        # The mode is still recorded — from the runtime's own evidence (triage.md §2.1: diagnostic mode is
        # auto-discoverable) — so the evidence is labelled diagnostic and the gate goes on; the manifest
        # gap is reported. (spec/analysis-json.md's own example pairs an _op_trace entry with an empty
        # debug-option map and a passed gate.)
        g.soft(
            "F9",
            "run.json records no debug options but the run was diagnostic: "
            + "; ".join(dict.fromkeys(strong))
            + " — evidence labelled diagnostic from the runtime's own output",
            "record the attempt's super_kernel_debug_options in run.json",
            ctx.relpath(ctx.run_file.file) if ctx.run_file is not None else None,
            status="passed",
        )
    elif cand is None or cand.debug_options is None:
        g.soft(
            "F9",
            "run.json does not record super_kernel_debug_options; diagnostic mode decided from the evidence"
            + (" (diagnostic)" if diagnostic else " (clean)"),
            "record candidate.super_kernel_debug_options in run.json ({} for a clean run)",
            status="passed",
        )
    else:
        g.ok("F9")
    return diagnostic, reasons


# ------------------------------------------------------------------------------------------ G3–G5


def _g3(ctx: TriageContext, loc: Localization, run: RunIdentity | None, g: _Gate) -> None:
    raw = run.failure_phase if run is not None else None
    phase = loc.fault.phase
    rel = ctx.relpath(ctx.run_file.file) if ctx.run_file is not None else None
    if phase == "compile":
        g.fail(
            "G3",
            "X1: compile-only failure: not the isolation workflow (parent adaptation/debugging; static-compile "
            "safety applies; a failure scene with phase compile is still written)",
            "debug the compile failure; rerun once it compiles",
            rel,
        )
        g.hints.append("X1")
        return
    if phase in WORKFLOW:
        if raw != phase:
            g.gaps.append(
                GateGap(
                    "G3",
                    f"failure_phase not recorded in run.json; '{phase}' decided from the device fault line",
                    "record failure_phase in run.json",
                )
            )
    elif loc.runtime_fault is not None or loc.incident is not None:
        g.gaps.append(
            GateGap(
                "G3",
                "failure_phase unknown; the device fault evidence (runtime fault line / SK handler output) "
                "places it in this workflow",
                "record failure_phase in run.json",
            )
        )
    else:
        g.fail(
            "G3",
            "failure phase unknown and no device fault evidence: cannot tell a run-time failure from a "
            "compile/environment failure",
            "record failure_phase in run.json (execution | correctness | timeout | hang | device_fault)",
            rel,
        )
        return
    # X2: shallow/no fusion (AOT path only)
    if loc.fault.kind in ("sk", "none"):
        mes = models_of(ctx, loc.pid)
        if mes:
            if not any(me.fused_nodes is not None for me in mes):
                unread = [p for p in (_unusable_fused_nodes(ctx, me) for me in mes) if p is not None]
                if unread:  # the file is there but was refused (its gap says why): not X2
                    g.fail(
                        "G3",
                        f"{FUSED_NODES_FILE} of this process {UNUSABLE}: fusion cannot be checked",
                        COLLECT_USABLE,
                        _cited(ctx, unread[0]),
                    )
                    return
                g.fail(
                    "G3",
                    "X2: no sk_fused_nodes.log for this process: fusion not proven (parent fusion diagnosis)",
                    COLLECT_META.replace("<P>", str(loc.pid)),
                )
                g.hints.append("X2")
                return
            blocks = [b for me in mes if me.fused_nodes is not None for b in me.fused_nodes.latest()]
            if not blocks:
                g.fail(
                    "G3",
                    "X2: sk_fused_nodes.log holds no SK Function: the scope produced no SK",
                    "diagnose fusion (analyze_sk_meta-style) before isolating a child",
                )
                g.hints.append("X2")
                return
            cand = run.candidate if run is not None else None
            if cand is not None and cand.scope_names:
                names = [b.name.scope_name or "" for b in blocks]
                if not any(_scope_matches(n, s) for n in names for s in cand.scope_names):
                    g.fail(
                        "G3",
                        f"X2: none of the candidate scopes {list(cand.scope_names)} produced an SK in "
                        "sk_fused_nodes.log",
                        "diagnose fusion (sk_fusion_fail_reasons.log / sk_scope_split.log) before isolating",
                    )
                    g.hints.append("X2")
                    return
    g.ok("G3")


def _x1_not_this_workflow(g: _Gate) -> None:
    """X1 (G3, §6.2): a compile-phase failure is not this workflow. G2 and F1–F9 ask whether the
    evidence can attribute a child; for a compile failure they are not run, and their "re-collect
    sk_meta / rerun with the trace" advice (R1) would send the user the wrong way."""
    moot = {"G2", *FRESH_IDS}
    g.failed = [x for x in g.failed if x not in moot]
    g.gaps = [x for x in g.gaps if x.id not in moot]
    for x in moot:
        g.checks[x] = "not_run"


def _g4(ctx: TriageContext, loc: Localization, run: RunIdentity | None, g: _Gate) -> None:
    rel = ctx.relpath(ctx.run_file.file) if ctx.run_file is not None else None
    if run is None or not run.source_revision:
        g.fail(
            "G4",
            "source revision not recorded: diagnostic fields and the scope API cannot be interpreted",
            "record candidate.source_revision in run.json (git rev-parse HEAD of the model source)",
            rel,
        )
    probe = ctx.probe
    if probe is None:
        g.gaps.append(
            GateGap(
                "G4",
                "no archived environment probe: wrapper assumed to support close/reopen scope markers; no "
                "debug-option value is proven accepted",
                "archive env/check_environment.json from the same setup (check_environment.py)",
            )
        )
    elif probe.ready is not True:
        g.gaps.append(
            GateGap(
                "G4",
                f"environment probe ready={probe.ready}: wrapper capabilities not proven (close/reopen assumed)",
                "rerun the environment probe in the inference setup until ready=true",
                ctx.relpath(probe.src.file),
            )
        )
    if loc.fault.kind == "sk":
        if loc.fault.dialect is None:
            g.gaps.append(
                GateGap(
                    "G4",
                    "no SK handler output: plog dialect not detectable (C1/C6: low at most)",
                    "keep the plog at INFO/ERROR level so the SK exception handler block is present",
                )
            )
        elif not loc.dialect_known:
            cands = loc.incident.dialect_candidates if loc.incident is not None else ()
            if dialect_recognised(cands):
                detail = (
                    f"plog dialect narrowed to {cands[0]}–{cands[-1]} only (the printed fields read the same "
                    "in each; G4 holds)"
                )
            else:
                detail = "plog dialect not recognised (C1: verdict capped at low)"
            g.gaps.append(GateGap("G4", detail, "record the CANN / graph-autofusion revision of the run"))
    g.ok("G4")


def _g5(ctx: TriageContext, g: _Gate) -> None:
    for art in ctx.input_artifacts:
        try:
            _ = art.sha256
        except (OSError, ParseError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            g.fail(
                "G5",
                f"{art.relpath} cannot be read to freeze its SHA-256 ({why})",
                "fix the file permissions / copy the artifact again before any rerun",
                art.relpath,
            )
    g.ok("G5")


__all__ = ["FRESH_IDS", "GATE_IDS", "GateDraft", "draft_gate", "run_gate"]
