"""``adapt``: add the SK adaptation block after every ``__global__`` of an asset (spec §1.5, §1.8, §1.10).

A file is adapted only when every entry in it is understood and passes the IO-contract checks;
otherwise it is ``needs-human`` and nothing is written for it. The output directory is assembled in
a temporary sibling and renamed into place (:mod:`skdbg.atomic`), so a failed run never leaves a
half-written directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skdbg.atomic import TreeWriter, ensure_fresh_dir, streamed_tree
from skdbg.codegen.block import AdaptError, check_options, parse_bind_target, plan_block, specialise
from skdbg.codegen.canonical import AdaptedFile, SupportConflictError, build_canonical, safe_identifier
from skdbg.codegen.contract import Contract, check_entry, escalation
from skdbg.codegen.forms import (
    Candidate,
    Listing,
    SortedSource,
    Sorting,
    classify_text,
    list_sources,
    no_definition_error,
    sort_source,
)
from skdbg.codegen.kerneltype import KernelTypeError
from skdbg.codegen.reader import KernelEntry, SourceReading, read_source
from skdbg.forkmap import OrderedMap, process_count
from skdbg.jsonindent import dumps_indented

ADAPTED_DIR = "operator-sk-adapted"
MANIFEST = "operator-sk-adapted.json"
LEGACY_NAMES = {"skBlockNum": "skNumBlocks", "SkGetBlockNum": "SkGetNumBlocks"}
KERNEL_INCLUDE = '#include "kernel_operator.h"'


#: how the adapt output folder is named in the refusal messages (upstream: "adapted output already exists")
ADAPT_WHAT = "adapted output"


def inline_clean(text: str, rel: str) -> tuple[str, list[dict[str, Any]]]:
    """Rename the historic SkSystemArgs names before adapting, recording each as an applied finding."""
    rounds: list[dict[str, Any]] = []
    findings, results = [], []
    for legacy, modern in LEGACY_NAMES.items():
        pattern = re.compile(rf"\b{legacy}\b")
        if not pattern.search(text):
            continue
        fid = f"codegen.inline-sys-args-api-current:{rel}:{legacy}"
        findings.append(
            {
                "finding_id": fid,
                "rule_id": "codegen.inline-sys-args-api-current",
                "severity": "blocker",
                "category": "spec",
                "actionable_by": ["codegen.apply-remediation"],
                "remediation_hint": {
                    "kind": "rename-symbol",
                    "target_file": rel,
                    "old_value": legacy,
                    "new_value": modern,
                },
                "evidence": [legacy],
                "message": f"legacy SkSystemArgs API '{legacy}'; rename to '{modern}'.",
            }
        )
        before = len(text)
        text = pattern.sub(modern, text)
        results.append(
            {
                "finding_id": fid,
                "status": "applied",
                "reason": "rename-symbol",
                "diff_summary": f"size {before} -> {len(text)}",
            }
        )
    if findings:
        rounds.append({"round": 1, "findings": findings, "results": results})
    return text, rounds


def line_ending(text: str) -> str:
    """The file's dominant line ending: ``\\r\\n`` when CRLF lines outnumber bare-LF lines, else ``\\n``.

    Generated lines (the block, the added ``#include``) use it, so a CRLF file stays CRLF; in a mixed
    file the majority wins and a tie goes to LF. The original text is never re-ended.
    """
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def add_kernel_include(text: str, eol: str = "\n") -> str:
    if KERNEL_INCLUDE in text:
        return text
    lines = text.splitlines(keepends=True)
    last = max((i for i, ln in enumerate(lines) if ln.startswith("#include")), default=-1)
    if last < 0:
        return KERNEL_INCLUDE + eol + text
    if not lines[last].endswith("\n"):
        lines[last] += eol
    lines.insert(last + 1, KERNEL_INCLUDE + eol)
    return "".join(lines)


@dataclass(frozen=True)
class AdaptOptions:
    mask: int = 4
    num_splits: int = 4
    with_sys_args: str = "auto"
    contract: Contract | None = None
    package_name: str = "op_extension"
    package_version: str = "0.1.0"


def adapt_text(
    text: str, rel: str, options: AdaptOptions, asset_root: Path, reading: SourceReading | None = None
) -> tuple[str | None, list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Adapt one ``none``-form file: (new text or None, entry metadata, escalations, inline remediations).

    ``reading`` is the reader's result for ``text`` when the caller has it (saves a second tokenize).
    """
    text, rounds = inline_clean(text, rel)
    if reading is None or rounds or reading.text != text:
        reading = read_source(text, rel)
    if not reading.entries and not reading.gaps:
        raise no_definition_error(reading)
    escalations: list[dict[str, Any]] = []
    for gap in reading.gaps:
        escalations.append(
            escalation("codegen.entry-not-understood", f"{gap}; the entry is not adapted.", [str(gap)])
        )
    entries_meta: list[dict[str, Any]] = []
    pieces: list[tuple[int, str]] = []
    for entry in reading.entries:
        check = check_entry(_specialised(entry, options.contract), options.contract, asset_root)
        escalations.extend(check.escalations)
        bind_target = check.matched.bind_target if check.matched else None
        if entry.template_params and not bind_target:
            escalations.append(
                escalation(
                    "codegen.template-bind-target-required",
                    f"templated kernel {entry.name} needs entries.{entry.name}.bind_target in the IO contract.",
                    [f"entry={entry.name}", f"template_parameters={[t.decl for t in entry.template_params]}"],
                )
            )
            continue
        if check.escalations:
            continue
        try:
            plan = plan_block(
                entry,
                mask=options.mask,
                num_splits=options.num_splits,
                with_sys_args=options.with_sys_args,
                bind_target=bind_target if entry.template_params else None,
            )
        except KernelTypeError as exc:
            escalations.append(
                escalation("codegen.kernel-type-unmapped", f"{rel}:{entry.line}: {exc}", [entry.qualifiers])
            )
            continue
        bargs = parse_bind_target(bind_target, entry.name) if entry.template_params and bind_target else []
        meta: dict[str, Any] = {
            "entry_name": entry.name,
            "line": entry.line,
            "sk_kernel_type": plan.sk_type,
            "args_struct_name": plan.args_struct,
            "uses_sys_args": plan.uses_sys_args,
            "param_count": len(entry.params),
            "parameters": [
                {"name": p.name, "c_type": specialise(p.c_type, entry, bargs)} for p in entry.params
            ],
            "original_qualifiers": entry.qualifiers,
            "bind_target": plan.bind_symbol,
            "bind_functions": list(plan.bind_functions),
            "pybind_return_source": check.return_source,
        }
        if any(p.attributes for p in entry.params):
            for pm, p in zip(meta["parameters"], entry.params, strict=True):
                if p.attributes:
                    pm["attributes"] = list(p.attributes)
        if entry.qualifier_macros:
            meta["qualifier_macros"] = list(entry.qualifier_macros)
            meta["notes"] = [
                f"unknown identifier(s) {', '.join(entry.qualifier_macros)} before __global__ read as "
                "qualifier macro(s) and carried through: the original declaration keeps them; the __sk__ "
                'function does not repeat them (a linkage macro such as extern "C" is not valid on a template)'
            ]
        if check.return_tensor:
            meta["pybind_return_tensor"] = check.return_tensor
        if check.matched and options.contract:
            meta["io_contract"] = check.matched.to_json(options.contract.path)
            if check.matched.runtime_wrapper:
                source = (asset_root / check.matched.runtime_wrapper["source"]).resolve()
                meta["runtime_wrapper"] = {**check.matched.runtime_wrapper, "source_path": str(source)}
        entries_meta.append(meta)
        pieces.append((entry.body_close + 1, plan.text))
    if escalations:
        return None, [], escalations, rounds
    eol = line_ending(text)
    out = text
    for pos, block in sorted(pieces, reverse=True):
        out = out[:pos] + block.replace("\n", eol) + out[pos:]
    return add_kernel_include(out, eol), entries_meta, [], rounds


def _specialised(entry: KernelEntry, contract: Contract | None) -> KernelEntry:
    """For the kind checks a templated entry's parameter types are read with the bind target's arguments."""
    ec = contract.lookup(entry.name) if contract else None
    if not entry.template_params or ec is None or not ec.bind_target:
        return entry
    bargs = parse_bind_target(ec.bind_target, entry.name)  # AdaptError: the file needs a human
    params = tuple(replace(p, c_type=specialise(p.c_type, entry, bargs)) for p in entry.params)
    return replace(entry, params=params)


#: the fewest kernel files per process when ``jobs`` is automatic: below it, starting a worker costs
#: more than the files it takes over (about a millisecond of work each)
MIN_FILES_PER_PROCESS = 32
#: the most kernel files a worker adapts before handing them over: the writer starts on the first
#: files soon, which matters where creating files is slow (a file every millisecond on some disks)
CHUNK_FILES = 8
#: files waiting for the writing thread past which this process stops adapting files itself (it
#: still hands out the workers' results): the disk, not the adapting, is then what the run waits for
WRITER_BACKLOG = 8


def adapt_asset(
    asset: Path, out_dir: Path, options: AdaptOptions, *, force: bool = False, jobs: int = 1
) -> dict[str, Any]:
    """Adapt every candidate file of ``asset`` into ``out_dir``; returns the manifest written there.

    ``out_dir`` follows the output-folder convention of :mod:`skdbg.atomic` (absent or empty, or
    replaced whole with ``force``); it is checked before any work. ``jobs`` processes, this one included,
    read and adapt the files (0: one per available CPU for a large asset; see :mod:`skdbg.forkmap` for
    when this process does it alone); the output is the same whatever their number.
    """
    check_options(options.mask, options.num_splits, options.with_sys_args)
    ensure_fresh_dir(out_dir, force=force, what=ADAPT_WHAT, inputs=[asset])
    listing = list_sources(asset)  # before the output folder's staging sibling (and its parents) are made
    job = _Job(options, listing.asset.parent if listing.single else listing.asset, listing.single)
    processes = process_count(jobs, len(listing.sources), min_items_per_process=MIN_FILES_PER_PROCESS)
    # the workers are forked first, before the writer's thread starts; each file is handed to the
    # writer as soon as its result is in: it is created while the next ones are read and adapted
    with (
        OrderedMap(
            _adapt_source, job, listing.sources, processes=processes, chunk_items=CHUNK_FILES
        ) as results,
        streamed_tree(out_dir, force=force, what=ADAPT_WHAT, inputs=[asset]) as out,
    ):
        # where creating files is the slow part, this process leaves the adapting to the workers: its
        # own would only take the interpreter from the writing thread
        results.may_compute = lambda: out.backlog() < WRITER_BACKLOG
        adapter = _AssetAdapter(listing, options, out)
        for result in results:
            adapter.add(result)
        adapter.sorting.close()
        return adapter.manifest(out_dir)


@dataclass(frozen=True)
class _Job:
    """What adapting one file needs besides the file: the same for every file of a run."""

    options: AdaptOptions
    asset_root: Path
    single: bool


@dataclass
class _Adapted:
    """One listed source, read, sorted and (when a candidate) adapted: what the run keeps of it.

    Why not the :class:`Candidate`: this crosses from a worker process, and the reading (every token
    of the file) is not needed after the file is adapted."""

    source: SortedSource
    record: dict[str, Any] | None = None  # the manifest's per-file record, for a candidate
    text: str | None = None  # the output file, when one is written
    escalations: list[dict[str, Any]] = field(default_factory=list)


def _adapt_source(job: _Job, source: tuple[str, Path]) -> _Adapted:
    rel, path = source
    result = sort_source(rel, path, single=job.single)
    cand = result.candidate
    if cand is None:
        return _Adapted(result)
    result.candidate = None  # its reading stays here
    files: dict[str, str] = {}
    escalations: list[dict[str, Any]] = []
    record = _adapt_candidate(cand, job.options, job.asset_root, files, escalations)
    return _Adapted(result, record, files.get(rel), escalations)


class _AssetAdapter:
    """The state of one ``adapt_asset`` run: the per-file records, the texts and the escalations so far."""

    def __init__(self, listing: Listing, options: AdaptOptions, out: TreeWriter) -> None:
        self.sorting = Sorting(listing)
        self.options = options
        self.out = out
        self.per_file: list[dict[str, Any]] = []
        self.files: dict[str, str] = {}
        self.escalations: list[dict[str, Any]] = []

    def add(self, adapted: _Adapted) -> None:
        """Take one source's result, in the listing's order, and queue its output file (if it has one)."""
        self.sorting.add(adapted.source)
        if adapted.record is None:
            return
        self.per_file.append(adapted.record)
        self.escalations.extend(adapted.escalations)
        if adapted.text is not None:
            rel = adapted.source.rel
            self.files[rel] = adapted.text
            self.out.put(f"{ADAPTED_DIR}/{rel}", adapted.text)

    def manifest(self, out_dir: Path) -> dict[str, Any]:
        """The checks across files, the canonical tree (when complete) and the manifest, all queued;
        returns the manifest."""
        _check_contract_use(self.options.contract, self.per_file, self.escalations)
        _check_duplicate_entries(self.per_file, self.escalations)
        status = "needs-human" if self.escalations else "completed"
        adapted = [
            AdaptedFile(r["file"], self.files[r["file"]], path, r["entries"])
            for r, path in zip(self.per_file, self.sorting.paths, strict=True)
            if r["status"] == "adapted" and r["entries"]
        ]
        layout: dict[str, Any] = {
            "pybind_layout": None,
            "pybind_module": None,
            "package_name": self.options.package_name,
            "package_version": self.options.package_version,
            "python_package": safe_identifier(self.options.package_name),
            "canonical_written_files": [],
        }
        if status == "completed" and adapted:
            try:
                canonical, layout = build_canonical(
                    adapted, self.options.package_name, self.options.package_version
                )
            except SupportConflictError as exc:
                self.escalations.append(escalation("codegen.support-file-conflict", str(exc), [str(exc)]))
                status = "needs-human"
            else:
                for rel, text in canonical.items():
                    self.out.put(f"{ADAPTED_DIR}/{rel}", text)
        manifest = {
            "status": status,
            "asset_path": str(self.sorting.found.asset),
            "adapted_dir": str((out_dir / ADAPTED_DIR).resolve()),
            **layout,
            "template_specializations": [],
            "mask": self.options.mask,
            "num_splits": self.options.num_splits,
            "with_sys_args": self.options.with_sys_args,
            "per_file": self.per_file,
            "ignored_support_files": self.sorting.found.ignored,
            "escalations": self.escalations,
        }
        self.out.put(MANIFEST, dumps_indented(manifest, indent=2) + "\n")
        return manifest


def _check_contract_use(
    contract: Contract | None, per_file: list[dict[str, Any]], escalations: list[dict[str, Any]]
) -> None:
    """A contract whose entries matched no kernel while some entry stayed unresolved is reported."""
    if contract is None:
        return
    names = {m["entry_name"] for r in per_file for m in r["entries"]}
    unresolved = [e for e in escalations if e["rule_id"] == "codegen.pybind-return-tensor-unresolved"]
    if unresolved and not any(contract.lookup(n) for n in names):
        escalations.append(
            escalation(
                "codegen.io-contract-entry-unused",
                f"IO contract entries {sorted(contract.entries)} match no kernel entry of the asset.",
                [f"contract_entries={sorted(contract.entries)}"],
            )
        )


def _check_duplicate_entries(per_file: list[dict[str, Any]], escalations: list[dict[str, Any]]) -> None:
    """Two adapted entries whose public/module names coincide cannot both be bound: a human picks one."""
    groups: dict[str, list[str]] = {}
    for r in per_file:
        for m in r["entries"]:
            groups.setdefault(safe_identifier(m["entry_name"]), []).append(
                f"{r['file']}:{m['line']}:{m['entry_name']}"
            )
    for name, where in sorted(groups.items()):
        if len(where) > 1:
            escalations.append(
                escalation(
                    "codegen.pybind-entry-specialization-ambiguous",
                    f"entry name {name} is defined {len(where)} times; the package cannot bind more than one of them.",
                    where,
                )
            )


def _adapt_candidate(
    cand: Candidate,
    options: AdaptOptions,
    asset_root: Path,
    files: dict[str, str],
    all_escalations: list[dict[str, Any]],
) -> dict[str, Any]:
    form = cand.form.form
    record: dict[str, Any] = {"file": cand.rel, "form_before": form, "entries": [], "inline_remediations": []}
    if form == "current-sk-bind":
        files[cand.rel] = cand.reading.text
        record.update(
            status="already_current", form_after=form, pybind_layout="source-passthrough", escalations=[]
        )
        return record
    if form != "none":
        esc = escalation(
            "codegen.unknown-sk-form",
            f"source file {cand.rel} is not a supported global input or current SK bind source.",
            list(cand.form.notes),
        )
        all_escalations.append(esc)
        record.update(status="needs-human", form_after=form, escalations=[esc])
        return record
    try:
        new, meta, escs, rounds = adapt_text(cand.reading.text, cand.rel, options, asset_root, cand.reading)
    except AdaptError as exc:
        new, meta, rounds = None, [], []
        escs = [escalation("codegen.adapt-invalid-input", f"{cand.rel}: {exc}", [str(exc)])]
    record["inline_remediations"] = rounds
    if new is None:
        all_escalations.extend(escs)
        record.update(status="needs-human", form_after=form, escalations=escs)
        return record
    files[cand.rel] = new
    record.update(
        status="adapted", form_after=classify_text(new, cand.rel).form, entries=meta, escalations=[]
    )
    return record
