"""The failure-scene report folder (triage.md §6.1 nine-field record, §6.2 eight items, §2.3 index).

Why a folder, written atomically, outside the scene: the record is bound verbatim into the failed
experiment's own report and is never rewritten (§6.2 "seal first", §2.3 "never rewritten"), so it
must be complete or absent — a temp directory next to the target is filled and renamed in one step;
an existing report is never overwritten, and the scene (the sealed evidence) is never written to.
Excerpts only, with secrets redacted (§6.2): no log is copied.

Upstream reports are Chinese; ``lang="zh"`` renders the section labels in Chinese while field labels
inside code blocks stay English (§6.2).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from skdbg.atomic import ensure_fresh_dir, write_tree
from skdbg.glossary import titled
from skdbg.jsonindent import dumps_indented
from skdbg.parsers.common import ParseError
from skdbg.parsers.fsguard import real_path
from skdbg.parsers.plog_rows import time_spans
from skdbg.parsers.skmeta_lines import iter_meta_lines, last_stamp
from skdbg.show import show
from skdbg.triage.context import TriageContext
from skdbg.triage.engine import run_summary
from skdbg.triage.model import Analysis, EvidenceItem, GateCheck

if TYPE_CHECKING:
    import jinja2

REPORT_FILES = (
    "FAILURE_SCENE.md",
    "failure_isolation.json",
    "evidence_index.json",
    "analysis.json",
    "REPORT_INDEX.md",
)
NINE_FIELDS = (
    ("failed_attempt", "Failed attempt"),
    ("failure_phase", "Failure phase"),
    ("fault_evidence", "Fault evidence"),
    ("suspect_child", "Suspect child"),
    ("confidence", "Confidence"),
    ("exclusion_proposal", "Exclusion proposal"),
    ("safety_notes", "Safety notes"),
    ("verification", "Verification"),
    ("residual_risk", "Residual risk"),
)
#: roles every scene should have (§2.1); absent ones are indexed as missing(reason)
EXPECTED_ROLES = {
    "run_json": "run.json absent: command/rank/candidate unknown (G1); write it from the launcher",
    "env_probe": "no archived environment probe (G4); run check_environment and archive it",
    "plog": "no plog-<pid>_*.log; copy $ASCEND_PROCESS_LOG_PATH/*/plog of the failing pid",
    "fused_nodes": "no sk_fused_nodes.log; run with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1",
    "task_queue": "no sk_task_queue.json; run with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1",
    "device_args": "no sk_device_args.log (debug-level SK log); run with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1",
    "fail_reasons": "no sk_fusion_fail_reasons.log; run with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1",
    "scope_split": "no sk_scope_split.log; run with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1",
    "super_kernel_log": "no super_kernel.log; run with ASCEND_OP_COMPILE_SAVE_KERNEL_META=1",
}
_META_TS_LIMIT = 8 << 20  # metadata files above this size are not scanned for first/last timestamps
_SECRET_RE = re.compile(
    r"(?i)(?<![A-Za-z0-9])(token|passwd|password|pwd|secret|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|"
    r"authorization|credential)s?(\s*[:=]\s*|(?<=-token)\s+|(?<=-password)\s+|(?<=-key)\s+|(?<=-secret)\s+)((?:bearer\s+|basic\s+)?(?:\"[^\"]*\"|'[^']*'|\S+))"
)
_BEARER_RE = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]+")

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Failure scene",
        "record": "Failure-isolation record (nine fields)",
        "item1": "1. Identity and phase",
        "item2": "2. Frozen invocation",
        "item3": "3. Observable failure",
        "wait_for": "wait-for graph",
        "item4": "4. Scene artifacts",
        "item5": "5. Gate progress",
        "item6": "6. Preliminary judgement",
        "item7": "7. Control and rollback",
        "item8": "8. Next localisation entry",
        "index": "Evidence index",
        "proven": "Proven facts",
        "hypotheses": "Hypotheses to verify",
        "alternatives": "Alternative explanations",
        "missing": "Missing evidence",
        "next": "Next steps",
        "unknown": "unknown",
        "not_recorded": "not recorded by skdbg — the parent controller fills this in",
        "report_index": "Failure index",
        "pictures": "Pictures",
        "session": "Triage session",
        "round": "Round",
        "attempt": "Attempt",
        "status": "status",
        "derived_from": "derived from",
        "change": "single change vs the previous attempt",
        "history": "status history",
        "gates": "Revalidation gates",
        "failed_attempts": "Failed attempts are kept as negative evidence; later attempts only append.",
        "notes": "Notes",
        "no_failure": "no failed attempt",
    },
    "zh": {
        "title": "失败现场",
        "record": "失败隔离记录（九项）",
        "item1": "1. 身份与阶段",
        "item2": "2. 冻结的调用",
        "item3": "3. 可观测的失败",
        "wait_for": "等待图（wait-for graph）",
        "item4": "4. 现场产物",
        "item5": "5. 门禁进度",
        "item6": "6. 初步判断",
        "item7": "7. 控制与回滚",
        "item8": "8. 下一步定位入口",
        "index": "证据索引",
        "proven": "已证实的事实",
        "hypotheses": "待验证的假设",
        "alternatives": "其他可能的解释",
        "missing": "缺失的证据",
        "next": "下一步",
        "unknown": "未知",
        "not_recorded": "skdbg 未记录 —— 由上层控制器填写",
        "report_index": "失败索引",
        "pictures": "图示",
        "session": "定位会话",
        "round": "轮次",
        "attempt": "尝试",
        "status": "状态",
        "derived_from": "派生自",
        "change": "相对上一次尝试的唯一变更",
        "history": "状态历史",
        "gates": "复验门禁",
        "failed_attempts": "失败的尝试作为负面证据保留；后续尝试只追加。",
        "notes": "备注",
        "no_failure": "无失败的尝试",
    },
}


class ReportError(ValueError):
    """The report cannot be written as asked (an unknown report language)."""


def redact(text: str) -> str:
    """Remove tokens/passwords/keys from an excerpt (§6.2)."""
    text = _SECRET_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}<redacted>", text)
    return _BEARER_RE.sub("Bearer <redacted>", text)


def environment() -> jinja2.Environment:
    """The template environment: package templates, StrictUndefined (a missing field is an error).

    jinja2 loads here, not at import: ``analyze --format json`` never renders a template."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("skdbg.triage", "templates"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["redact"] = redact
    env.filters["cell"] = _cell
    env.filters["show"] = show  # never a Python repr in a report (None → —, {k: v} → k=v)
    env.filters["titled"] = titled  # "R5 split at the dependency boundary"
    return env


def render_template(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)


def _cell(value: Any) -> str:
    """One markdown table cell: no pipes or newlines."""
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


# ------------------------------------------------------------------------------------------ index


class _ResolvedNames:
    """Each file name's resolved path as text (the key files are matched by), worked out once per
    distinct name, through one cache of resolved folders.

    Why: the index matched every scanned plog line to its file by resolving the line's file name, and
    every artifact twice: on the bench scene 18,000 plog lines and 2,000 ELFs made 22,000 full resolves
    (a system call per path component), ~0.5 s of a report; a scene's lines name a handful of files."""

    def __init__(self) -> None:
        self._dirs: dict[str, Path] = {}
        self._names: dict[str, str] = {}

    def __call__(self, path: str | os.PathLike[str]) -> str:
        name = os.fspath(path)
        key = self._names.get(name)
        if key is None:
            key = self._names[name] = str(real_path(name, self._dirs))
        return key


def evidence_index(ctx: TriageContext) -> list[dict[str, Any]]:
    """Every artifact of the scene (§2.3): relpath, role, size, sha256, first/last ts, status."""
    rows: list[dict[str, Any]] = []
    resolved = _ResolvedNames()
    plog_ts: dict[str, tuple[datetime | None, datetime | None]] = {}
    for pe in ctx.evidence.plogs:
        # per file: its first and last time in the process's lines (time order; two names of one file
        # in one process: the earliest and latest of both); a file an earlier process's lines held too
        # keeps the first time it had there and takes this process's last one
        spans: dict[str, tuple[datetime, datetime]] = {}
        for file, (lo, hi) in time_spans(pe).items():
            key = resolved(file)
            held = spans.get(key)
            spans[key] = (lo, hi) if held is None else (min(held[0], lo), max(held[1], hi))
        for key, (lo, hi) in spans.items():
            first, _ = plog_ts.get(key, (None, None))
            plog_ts[key] = (first or lo, hi)
    arts = ctx.input_artifacts  # the scene's files and the model source, as the analysis lists them
    present_roles = {a.kind for a in arts}
    for a in arts:
        rows.append(_row(a.kind, a.path, ctx, plog_ts, a.digest, resolved))  # one hash per file
    for role, reason in EXPECTED_ROLES.items():
        if role not in present_roles:
            rows.append(
                {
                    "role": role,
                    "relpath": None,
                    "size": None,
                    "sha256": None,
                    "first_ts": None,
                    "last_ts": None,
                    "producer_pid": None,
                    "status": f"missing({reason})",
                }
            )
    return rows


def _row(
    role: str,
    path: Path,
    ctx: TriageContext,
    plog_ts: dict[str, tuple[datetime | None, datetime | None]],
    digest_of: Callable[[], tuple[int, str]],
    resolved: Callable[[str | os.PathLike[str]], str],
) -> dict[str, Any]:
    rel = ctx.relpath(path)
    try:
        size, sha = digest_of()
        digest: str | None = sha
        status = "present"
    except ParseError as exc:
        size, digest, status = 0, None, f"missing(unreadable: {exc.expected})"
    except OSError as exc:
        size, digest, status = 0, None, f"missing(unreadable: {exc.strerror})"
    first = last = None
    producer: int | None = None
    key = resolved(path)
    if key in plog_ts:
        first, last = plog_ts[key]
    elif path.suffix == ".log" and digest is not None and size <= _META_TS_LIMIT:
        first, last, producer = _stamp_span(path)
    raw_name: dict[str, str] = {}
    if not rel.isascii() and any("\udc80" <= ch <= "\udcff" for ch in rel):
        # a file name that is not UTF-8: the text shows escapes, the exact bytes are kept here
        raw_name = {"relpath_bytes_hex": os.fsencode(rel).hex()}
    return {
        "role": role,
        "relpath": rel,
        **raw_name,
        "size": size,
        "sha256": digest,
        "first_ts": first.isoformat() if first else None,
        "last_ts": last.isoformat() if last else None,
        "producer_pid": producer,
        "status": status,
    }


def _stamp_span(path: Path) -> tuple[datetime | None, datetime | None, int | None]:
    """``(first stamp, last stamp, producer pid)`` of an sk_meta file's lines: the first and last stamps
    its lines carry and the first non-zero writer pid among the stamped lines (0 when they are all 0).
    A forward read that fails keeps what came before it; the middle of the file, which neither read
    needs as a rule, is not read (the file was read whole for its hash already).

    Why not every line read forward: that made a line object of each of the ~30,000 lines of the bench
    model's sk_meta, per rank. The lines are read forward only until the first stamp and a non-zero pid
    are known (the first line, as a rule), and the last stamp is read from the file's end
    (:func:`~skdbg.parsers.skmeta_lines.last_stamp`); where that read fails, or finds none, the forward
    read goes on to the end, as it always did."""
    first: datetime | None = None
    last: datetime | None = None
    producer: int | None = None
    lines = iter_meta_lines(path)
    try:
        for ml in lines:
            if ml.ts is not None:
                first = first or ml.ts
                last = ml.ts
                producer = producer or ml.pid
                if producer:
                    break
        else:
            return first, last, producer
        with contextlib.suppress(ParseError, OSError):
            tail = last_stamp(path)
            if tail is not None:
                return first, tail, producer
        for ml in lines:
            if ml.ts is not None:
                last = ml.ts
    except (ParseError, OSError):
        pass
    finally:
        lines.close()
    return first, last, producer


_FAULT_LINES_MAX = 50


def evidence_record(
    ctx: TriageContext, analysis: Analysis, index: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The frozen §2.3 record: run, candidate, artifacts, fault lines, dialect, diagnostic mode."""
    run = _run_dict(ctx, analysis)
    fault_lines: list[dict[str, Any]] = []
    for pe in ctx.evidence.plogs:
        for rec in pe.faults:
            src = getattr(rec, "src", None)
            if src is None or src.line is None or len(fault_lines) >= _FAULT_LINES_MAX:
                continue
            text = ctx.line_text(src) or ""
            fault_lines.append(
                {"relpath": ctx.relpath(src.file), "line_no": src.line, "text": redact(text[:240])}
            )
    return {
        "schema": "skdbg.evidence_index/1",
        "run": {k: run[k] for k in ("command", "cwd", "rank", "device", "pid", "start", "end", "exit")},
        "candidate": {
            "experiment_id": run["experiment_id"],
            "round_id": run["round_id"],
            "attempt": run["attempt"],
            **(run["candidate"] or {}),
        },
        "artifacts": list(index),
        "fault_lines": fault_lines,
        "dialect": analysis.fault.dialect,
        "diagnostic_mode": diagnostic_mode(ctx, analysis),
    }


def diagnostic_mode(ctx: TriageContext, analysis: Analysis) -> dict[str, bool | None]:
    """§2.3 ``diagnostic_mode``: what changed fusion/timing in this attempt (F9), from every source."""
    run = ctx.run
    dbg = (run.candidate.debug_options if run is not None and run.candidate is not None else None) or {}
    bits = 0
    for me in ctx.evidence.model_evidence:
        if me.task_queue is not None:
            for sc in me.task_queue.scopes:
                for q in sc.queues:
                    for t in q.tasks:
                        bits |= t.debug_options or 0
    per_op = any(
        me.fail_reasons is not None and me.fail_reasons.per_op_max_core for me in ctx.evidence.model_evidence
    )
    return {
        "op_trace": bool(analysis.fault.op_trace) or bool(dbg.get("debug_op_exec_trace")),
        "sync_all": bool(bits & 0x2) or bool(dbg.get("debug_sync_all")),
        "cross_core_check": bool(bits & 0x10) or bool(dbg.get("debug_cross_core_sync_check")),
        "per_op_max_core": per_op or bool(dbg.get("debug_per_op_max_core_num")),
        "prof_sk_on": bool(ctx.scene.of_kind("sk_prof")),
    }


# ------------------------------------------------------------------------------------------ record


def _ev(e: EvidenceItem) -> dict[str, Any]:
    return {"where": e.where, "level": e.level, "excerpt": redact(e.excerpt), "rule": e.rule}


def _run_dict(ctx: TriageContext, analysis: Analysis) -> dict[str, Any]:
    run = ctx.run
    if run is None:
        return {
            "experiment_id": None,
            "round_id": None,
            "attempt": None,
            "command": None,
            "cwd": None,
            "rank": analysis.scene.rank,
            "device": analysis.scene.device,
            "pid": analysis.scene.pid,
            "start": None,
            "end": None,
            "exit": None,
            "failure_phase": None,
            "candidate": None,
            "failing_path": None,
        }
    out = run_summary(run)
    out["command"] = redact(run.command) if run.command else None
    out["device"] = run.device if run.device is not None else analysis.scene.device
    out["pid"] = run.pid if run.pid is not None else analysis.scene.pid
    return out


def failure_record(
    ctx: TriageContext,
    analysis: Analysis,
    index: Sequence[dict[str, Any]],
    verification: Sequence[GateCheck] | None = None,
) -> dict[str, Any]:
    """The §6.1 nine-field record with skdbg's JSON keys."""
    run = _run_dict(ctx, analysis)
    v, p = analysis.verdict, analysis.proposal
    fault_ev = list(analysis.fault.evidence) or [e for e in v.evidence if e.level in ("L1", "L2")]
    if verification:
        ver = [
            {"gate": g.gate, "result": g.result}
            | ({"reason": g.detail} if g.result != "passed" else {"artifact": g.detail})
            for g in verification
        ]
    else:
        ver = [
            {
                "gate": g,
                "result": "not_run",
                "reason": "revalidation not started: the exclusion is a new round",
            }
            for g in ("V1", "V2", "V3", "V4", "V5")
        ]
    risks = list(v.residual_risk)
    risks += [f"{g.id}: {g.detail} (collect: {g.collect})" for g in analysis.gate.gaps]
    risks += [f"missing: {m}" for m in v.missing]
    if not risks:
        risks = [
            "attribution is not a fix: only V1–V3 on a fresh process can show the exclusion works (§5.2)"
        ]
    return {
        "failed_attempt": {
            "rank": run["rank"],
            "device": run["device"],
            "pid": run["pid"],
            "command": run["command"],
            "timestamp": {"start": run["start"], "end": run["end"]},
            "experiment_id": run["experiment_id"],
            "round_id": run["round_id"],
            "attempt": run["attempt"],
            "artifact_paths": [r["relpath"] for r in index if r["relpath"]],
        },
        "failure_phase": analysis.fault.phase,
        "fault_evidence": [_ev(e) for e in fault_ev],
        "suspect_child": None if v.suspect is None else v.suspect.to_json(),
        "confidence": {"level": v.confidence, "rule": v.rule, "why": v.reason},
        "exclusion_proposal": p.to_json(),
        "safety_notes": [s.to_json() for s in p.safety],
        "verification": ver,
        "residual_risk": risks,
    }


def _summaries(record: dict[str, Any]) -> dict[str, str]:
    """One line per nine-field entry for the record table (the full JSON follows it verbatim)."""
    fa, sc, conf, prop = (
        record["failed_attempt"],
        record["suspect_child"],
        record["confidence"],
        record["exclusion_proposal"],
    )
    fe = record["fault_evidence"]
    return {
        "failed_attempt": f"rank {fa['rank']} / device {fa['device']} / pid {fa['pid']}, {fa['timestamp']['start']}",
        "failure_phase": str(record["failure_phase"]),
        "fault_evidence": f"{fe[0]['where']}: {fe[0]['excerpt']}" if fe else "none",
        "suspect_child": "none"
        if sc is None
        else f"{sc['symbol']} (GE-mode dump symbol only, X6)"
        if sc.get("task_index") is None and sc.get("symbol")
        else f"{sc['func_name']} task {sc['task_index']} nodeId {sc['node_id']} stream {sc['stream_id']} "
        f"scope {sc['scope_id']}",
        "confidence": f"{conf['level']} ({conf['rule']}): {conf['why']}",
        "exclusion_proposal": f"{prop['status']} {prop['mechanism'] or ''} excluded {prop['excluded']}".strip(),
        "safety_notes": "; ".join(f"{n['kind']}: {n['detail']}" for n in record["safety_notes"]) or "none",
        "verification": ", ".join(f"{v['gate']} {v['result']}" for v in record["verification"]),
        "residual_risk": f"{len(record['residual_risk'])} item(s)",
    }


def _alternatives(analysis: Analysis) -> list[str]:
    v = analysis.verdict
    out = []
    for c in v.candidates:
        if v.suspect is None or c.task_index != v.suspect.task_index:
            out.append(f"candidate {c.label()} (not excluded by the evidence)")
    if analysis.fault.kind == "sk":
        out.append(
            "the fault may be timing/synchronisation sensitive (an event/barrier edge or the SK entry) rather "
            "than a defect of one child — only a clean re-run of the exclusion round (V2/V3) separates them"
        )
    else:
        out.append("the failure may not involve SK fusion at all (compare with the incumbent without SK)")
    return out


def _context(
    ctx: TriageContext,
    analysis: Analysis,
    index: list[dict[str, Any]],
    record: dict[str, Any],
    lang: str,
    verification: Sequence[GateCheck] | None,
    record_json: Mapping[str, str],
) -> dict[str, Any]:
    run = _run_dict(ctx, analysis)
    v = analysis.verdict
    gate_rows = [{"id": k, "result": r} for k, r in analysis.gate.to_json()["checks"].items()]
    vrows = record["verification"]
    passed = [g["gate"] for g in vrows if g["result"] == "passed"]
    failed = next((g["gate"] for g in vrows if g["result"] == "failed"), None)
    marker = next((r for r in index if r["role"] == "marker_file" and r["sha256"]), None)
    return {
        "L": LABELS[lang],
        "probe_present": any(r["role"] == "env_probe" and r["status"] == "present" for r in index),
        "marker_sha256": marker["sha256"] if marker else None,
        "command_sha256": hashlib.sha256(run["command"].encode()).hexdigest() if run["command"] else None,
        "summary": _summaries(record),
        "lang": lang,
        "run": run,
        "analysis": analysis,
        "fault": analysis.fault,
        "verdict": v,
        "proposal": analysis.proposal,
        "wait_for": analysis.wait_for,
        "gate": analysis.gate,
        "gate_rows": gate_rows,
        "record": record,
        "fields": NINE_FIELDS,
        "record_json": record_json,
        "index": index,
        "verification": vrows,
        "last_passed": passed[-1] if passed else None,
        "failed_gate": failed,
        "proven": [_ev(e) for e in v.evidence if e.agrees is True],
        "first_fault": record["fault_evidence"][0] if record["fault_evidence"] else None,
        "alternatives": _alternatives(analysis),
        "missing": [f"{g.id}: {g.detail} — {g.collect}" for g in analysis.gate.gaps] + list(v.missing),
        "next_steps": analysis.next_steps,
        "routes": analysis.routes,
        "report_dir": None,
    }


# ------------------------------------------------------------------------------------------ writer


#: how the report folder is named in the refusal messages
REPORT_WHAT = "report folder"


def check_report_dir(scene_root: Path, out_dir: str | os.PathLike[str], *, force: bool = False) -> None:
    """Refuse (:class:`~skdbg.atomic.OutputNotEmptyError`) an ``out_dir`` inside the scene (the scene
    is sealed), an existing non-empty one without ``force``, and one that holds the scene. Called
    before the analysis too, so a refused folder costs nothing."""
    root = scene_root.resolve()
    ensure_fresh_dir(Path(out_dir), force=force, what=REPORT_WHAT, inputs=[root], sealed=[root])


def write_report(
    ctx: TriageContext,
    analysis: Analysis,
    out_dir: str | os.PathLike[str],
    *,
    lang: str = "en",
    verification: Sequence[GateCheck] | None = None,
    force: bool = False,
    pictures: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write the failure-scene report folder (§6.2) and return its files.

    ``pictures``: extra files (name → SVG text) drawn by a layer above triage (``skdbg.pictures``),
    written into the same atomic folder and linked from REPORT_INDEX.md.

    The output-folder convention of :mod:`skdbg.atomic` (see :func:`check_report_dir`): a sealed
    report is never overwritten unless ``force`` replaces it whole; everything is rendered into a
    temp dir beside ``out_dir`` and renamed, so on any error nothing is left behind.
    """
    _check_langs((lang,))
    out = Path(out_dir).resolve()
    scene_root = ctx.root.resolve()
    check_report_dir(scene_root, out, force=force)
    files = report_files(
        ctx, analysis, report_dir=out.name, langs=(lang,), verification=verification, pictures=pictures
    )[lang]
    write_tree(out, files, force=force, what=REPORT_WHAT, inputs=[scene_root], sealed=[scene_root])
    return [out / name for name in files]


def report_files(
    ctx: TriageContext,
    analysis: Analysis,
    *,
    report_dir: str,
    langs: Sequence[str] = ("en",),
    verification: Sequence[GateCheck] | None = None,
    pictures: Mapping[str, str] | None = None,
) -> dict[str, dict[str, str]]:
    """The failure-scene report's files (§6.2) in each of ``langs``: per language, name → text in
    :data:`REPORT_FILES` order, then the ``pictures`` by name (:func:`write_report` writes one
    language's as a folder; a session freezes every language's). ``report_dir`` is the folder name the
    index shows.

    What no language changes is made once, whatever the languages: the evidence index, the nine-field
    record and its fields' JSON, and the three JSON documents (the very same text in every language).
    Why: a session froze both languages by writing each report folder whole and reading it back, the
    index, the record and the documents made for each; on the bench scene (2,000 artifacts) the
    report's freeze took 0.23–0.27 s that way, 0.14–0.20 s now (templates compiled, in one process)."""
    _check_langs(langs)
    index = evidence_index(ctx)
    record = failure_record(ctx, analysis, index, verification)
    documents = {
        "failure_isolation.json": _dump(record),
        "evidence_index.json": _dump(evidence_record(ctx, analysis, index)),
        "analysis.json": _dump(analysis.to_json()),
    }
    record_json = {k: json.dumps(record[k], ensure_ascii=False, indent=2) for k, _ in NINE_FIELDS}
    env = environment()
    out: dict[str, dict[str, str]] = {}
    for lang in langs:
        context = _context(ctx, analysis, index, record, lang, verification, record_json)
        context["report_dir"] = report_dir
        context["pictures"] = sorted(pictures or {})
        text = {
            "FAILURE_SCENE.md": env.get_template("failure_scene.md.j2").render(**context),
            "REPORT_INDEX.md": env.get_template("report_index.md.j2").render(**context),
            **documents,
        }
        files = {name: text[name] for name in REPORT_FILES}
        files.update(sorted((pictures or {}).items()))
        out[lang] = files
    return out


def _check_langs(langs: Sequence[str]) -> None:
    for lang in langs:
        if lang not in LABELS:
            raise ReportError(f"unknown report language {lang!r} (en, zh)")


def _dump(doc: Any) -> str:
    """``json.dumps(doc, ensure_ascii=False, indent=2, default=str)`` and a newline, the text written by
    :func:`skdbg.jsonindent.dumps_indented` (the evidence index of 2,000 artifacts: ~9 ms in the
    standard library's indenting encoder, written in Python before 3.13, ~5 ms there)."""
    return dumps_indented(doc, indent=2, ensure_ascii=False, default=str) + "\n"


__all__ = [
    "LABELS",
    "NINE_FIELDS",
    "REPORT_FILES",
    "REPORT_WHAT",
    "ReportError",
    "check_report_dir",
    "environment",
    "diagnostic_mode",
    "evidence_index",
    "evidence_record",
    "failure_record",
    "redact",
    "render_template",
    "report_files",
    "write_report",
]
