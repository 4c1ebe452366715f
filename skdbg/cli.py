"""Command line: ``skdbg inspect``, ``symbolize``, ``analyze``, ``report`` and ``verify`` (click).

Contract (ecosystem.md §4.2): stdout carries data only, stderr carries messages; exit codes are
an API — 0 done, 2 usage error, 3 unreadable or malformed input (one line on stderr naming the
file, the line and what was expected). Every command is a thin call into the headless core.
"""

from __future__ import annotations

import atexit
import functools
import gc
import json
import os
import sys
from collections.abc import Callable, Iterable
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from skdbg import __version__
from skdbg.cli_errors import (
    EXIT_BAD_INPUT,
    EXIT_CODES_HELP,
    EXIT_USAGE,
    OUTPUT_FOLDER_HELP,
    cli_errors,
    fail,
    output_folder_option,
    quiet_if_stdout_closes,
)
from skdbg.cli_errors import EXIT_INTERNAL as EXIT_INTERNAL  # re-exported: the exit codes are an API
from skdbg.cli_errors import EXIT_OK as EXIT_OK
from skdbg.cli_errors import EXIT_PIPE as EXIT_PIPE
from skdbg.cli_types import WINDOW_SECONDS
from skdbg.heap import keep_freed_memory
from skdbg.output import FORMATS, write_frame
from skdbg.parsers.common import MAX_U64, ParseError
from skdbg.process_end import end_process, end_without_teardown
from skdbg.show import one_line

if TYPE_CHECKING:
    from skdbg.triage.cache import CachedAnalysis
    from skdbg.triage.context import TriageContext, TriageOptions
    from skdbg.triage.model import Analysis

#: the epilog of a command that writes a folder: the output-folder convention, then the exit codes
OUTPUT_EXIT_HELP = OUTPUT_FOLDER_HELP + "\n\n" + EXIT_CODES_HELP

F = TypeVar("F", bound=Callable[..., Any])

_fail = fail


#: the triage and session commands: ParseError / LedgerError are malformed input (exit 3); the rest
#: (an existing output folder: exit 2) as every command does
def _triage_bad_input() -> tuple[type[BaseException], ...]:
    from skdbg.diffing import DiffInputError  # a scene `verify --diff` cannot compare (exit 3)
    from skdbg.sessions.errors import LedgerError  # here, on an error: analyze never opens the ledger

    return (ParseError, LedgerError, DiffInputError)


bad_input_is_exit_3 = cli_errors(bad_input=_triage_bad_input)


#: the cyclic collector's thresholds for the batch commands (not the TUI). Why: parsing a scene makes
#: hundreds of thousands of records that live until the process ends; with the default thresholds
#: CPython walks the whole growing heap in about seven full collections (a fifth of a large
#: analysis's CPU). A young collection walks every container made since the last one, nearly all of
#: them records that live on: at 100,000 the bench scene paid three such walks of ~30 ms each, with
#: the GIL held (main thread 590 -> 545 ms, process 1,326 -> 1,242 ms at 1,000,000, min of 5; peak
#: memory unchanged, 165 MB). Young objects are still collected, once a million containers more
#: live than at the last collection, so a cycle made and dropped is freed as before, later; an
#: interactive UI keeps the default short pauses.
BATCH_GC_THRESHOLDS = (1_000_000, 50, 1000)

#: the interpreter's thread switch interval for the batch commands, in seconds (default 0.005). Why: an
#: analysis scans the plogs in a worker thread (numpy passes, reads, SHA-256, all without the GIL)
#: beside the Python parsing of sk_meta; after each numpy call the worker needs the GIL back and, with
#: the default, waits up to 5 ms for it. Measured on the 200 MB bench plog: an 8 MiB block's anchor
#: search (the block size then) took 11 ms alone and 94 ms beside a busy Python thread at 5 ms, 13 ms
#: at 0.1 ms.
BATCH_SWITCH_INTERVAL = 0.0002


def _skip_exit_collection() -> None:
    """Freeze the heap as the interpreter begins to exit (``atexit``), so its final full collection
    walks nothing.

    Why: a batch command's parsed records live until the end; the collection the interpreter runs while
    exiting then walks all of them to find no garbage. Measured on the 232 MB bench scene: 360,000
    objects, ~0.16 s of the collection and ~0.25 s of exit in all, a sixth of a first run. Frozen
    objects are still freed by their reference counts as the modules are torn down, and every other
    exit step (flushes, other ``atexit`` hooks, temporary folders) runs as before: it runs after the
    command's own output and cache writes."""
    gc.freeze()


def _one_scene(command: F) -> F:
    """Run ``command`` (a command that analyzes or loads one scene, then ends) with the cyclic collector
    paused, and resume it afterwards (also when the command fails).

    Why: the records an analysis parses live until the command ends, and while it runs it makes next to
    no cyclic garbage (333 objects in a whole analysis of the bench scene or of a 10,000-kernel one,
    measured with the collector off). With the batch thresholds a collection still runs once a million
    containers more live than at the last one, and each walks the million or more made since the one
    before to find nothing: on a scene with 120 MB of sk_meta that was 0.24 s of the main thread in
    collections, peak memory the same either way. Commands that go through many scenes in one process
    (``scan``, the loop) keep the collector: each scene they drop is cyclic garbage. (``verify`` loads
    two scenes: still a bounded few.) Such a command also has the allocator keep the memory it frees
    (:func:`~skdbg.heap.keep_freed_memory`): the process ends with the scene, so its heap need not shrink
    on the way, nor be freed object by object at the end (:func:`~skdbg.process_end.end_without_teardown`,
    for the console script)."""

    @functools.wraps(command)
    def paused(*args: Any, **kwargs: Any) -> Any:
        keep_freed_memory()
        end_without_teardown()
        enabled = gc.isenabled()
        gc.disable()
        try:
            return command(*args, **kwargs)
        finally:
            _resume_collector(enabled)

    return cast("F", paused)


def _resume_collector(enabled: bool) -> None:
    """Put the collector back as :func:`_one_scene` found it.

    The containers made while it was paused all count as young. When they are more than a collection's
    threshold, re-enabled as they are, the very next allocation would walk them all (0.7 s on the
    10,000-kernel scene, as the process exits). Those are moved to the oldest generation first
    (``gc.freeze`` then ``gc.unfreeze``, which also zeroes the generations' counts), so only a full
    collection walks them. The trade-off, for a process that keeps going (the tests run many commands
    in one): a scene of that size, once dropped, waits for the next full collection, which such a move
    does not hasten. Fewer young containers (every bundled scene) are left as they are and collected as
    usual; and where something else froze objects before (a host process), nothing is moved, since
    ``unfreeze`` would release those too."""
    if gc.get_count()[0] >= gc.get_threshold()[0] and gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()
    if enabled:
        gc.enable()


def _tune_for_batch() -> None:
    """The interpreter settings of a batch command (see the constants above); the exit hook once per
    process however many commands run in it (the tests invoke many)."""
    gc.set_threshold(*BATCH_GC_THRESHOLDS)
    sys.setswitchinterval(BATCH_SWITCH_INTERVAL)
    atexit.unregister(_skip_exit_collection)
    atexit.register(_skip_exit_collection)


class _LazyGroup(click.Group):
    """The top-level group: a command of :data:`_LAZY_COMMANDS` (end of this module) is imported when it
    is first looked up.

    Why: importing the ten command modules (and building their options) cost every command ~4.5 ms of
    CPU, ``analyze`` included, which uses none of them. Help, completion and dispatch go through
    :meth:`list_commands` and :meth:`get_command` (click's own contract for groups), so ``--help`` loads
    them all and lists the same commands in the same (sorted) order.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        load = _LAZY_COMMANDS.get(cmd_name)
        if load is not None and cmd_name not in self.commands:
            load(self)
        return self.commands.get(cmd_name)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        """click's, with the same quiet stop as :meth:`invoke` for what it prints itself while parsing
        the top-level options (``skdbg --help``, ``--version``), which click would end with exit 1."""
        with quiet_if_stdout_closes():
            return super().make_context(info_name, args, parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        """Every command, with stdout flushed before the exit: a reader that went away (``| head``)
        stops the run quietly with exit 141 (:func:`quiet_if_stdout_closes`), whichever command
        wrote, instead of click's exit 1 or Python's complaint about the exit's flush."""
        with quiet_if_stdout_closes():
            return super().invoke(ctx)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        # an unknown name: click suggests the close matches among ``self.commands``, so load them all
        if args and self.get_command(ctx, args[0]) is None:
            for name in _LAZY_COMMANDS:
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)


@click.group(
    cls=_LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    epilog=EXIT_CODES_HELP,
    invoke_without_command=True,
)
@click.version_option(__version__, prog_name="skdbg")
@click.pass_context
def main(ctx: click.Context) -> None:
    """skdbg — forensic debugger for Ascend SuperKernel (SK) failures.

    Without a command: open the interactive TUI on the bundled example scene (`skdbg tui SCENE` for
    any scene)."""
    if ctx.invoked_subcommand not in (None, "tui"):
        _tune_for_batch()
    for stream in (sys.stdout, sys.stderr):
        # file names that are not UTF-8 reach output as surrogates: print them escaped, never fail
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    if ctx.invoked_subcommand is not None:
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # no terminal to draw on (a pipe, CI): say what to run instead of starting a UI blind
        click.echo(ctx.get_help())
        click.echo("skdbg: no interactive terminal: the TUI needs one (try `skdbg analyze SCENE`)", err=True)
        return
    from skdbg.tui.cli import launch

    launch(None)


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("scene", type=click.Path(path_type=Path))
@click.option("--table", "table", metavar="NAME", help="Table to print; without it, list the tables.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--pid", type=int, default=None, help="Only this process (rank) when the scene holds several.")
@bad_input_is_exit_3
@_one_scene
def inspect(scene: Path, table: str | None, fmt: str, pid: int | None) -> None:
    """Print the evidence tables parsed from SCENE (a scene folder, sk_meta, sk_meta/<pid> or model_*)."""
    from skdbg.scene import load_evidence

    evidence = load_evidence(scene, pid=pid)
    meta = {"scene": str(evidence.root)}
    if table is None:
        write_frame(evidence.table_index(), fmt, sys.stdout, title="tables", meta=meta)
        for gap in evidence.gaps:
            click.echo(f"skdbg: gap: {one_line(gap.detail)}", err=True)
        return
    if table not in evidence.table_names():
        known = ", ".join(evidence.table_names())
        _fail(f"unknown table {table!r}; known tables: {known}", EXIT_USAGE)
    frame = evidence.frame(table)
    errors = evidence.table_errors(table)
    if errors and frame.empty:
        # nothing usable behind this table: say exactly which input was bad (exit 3)
        _fail("; ".join(str(e) for e in errors), EXIT_BAD_INPUT)
    for err in errors:
        click.echo(f"skdbg: warning: skipped unreadable input: {err}", err=True)
    write_frame(frame, fmt, sys.stdout, title=table, meta=meta)


_HEX_DIGITS = "0123456789abcdef"


def _parse_pc(text: str) -> int:
    """A PC (or image base) as addr2line reads it and the runtime prints it: hexadecimal digits, ``0x``
    optional, blanks around them. Anything else raises ValueError saying what is wrong with it.

    Why stricter than ``int(text, 16)``: that also takes a sign, ``_`` between digits, non-ASCII digits
    and any size; a device address is none of those, and a negative value or one over 64 bits would be
    looked up as if it were an address. (The digits are checked before ``int`` reads them: after the
    prefix is cut, ``int`` would take a second ``0x``.)"""
    t = text.strip().lower()
    if t.startswith("0x"):
        t = t[2:]
    if not t:
        raise ValueError("is empty")
    if "-" in t or "+" in t:
        raise ValueError("has a sign")
    if not t.isascii():
        raise ValueError("has a character that is not ASCII")
    if t.strip(_HEX_DIGITS):
        raise ValueError("has a character that is not a hex digit")
    value = int(t, 16)
    if value > MAX_U64:  # a PC or an image base is a device address: 64 bits
        raise ValueError("is more than 64 bits")
    return value


def _read_pcs(args: Iterable[str], stdin_lines: Iterable[str]) -> list[int]:
    """Every PC of the arguments, then of stdin, in order (blank stdin lines skipped); a bad one is a
    usage error naming the argument or stdin line and what is wrong with it (:func:`_parse_pc`).

    The common case (all well-formed) is one ``int`` per PC in C: the text holds nothing ``int`` takes
    that :func:`_parse_pc` refuses (a non-ASCII character, a sign, ``_``: checked once over the joined
    text; ``int`` itself refuses a second ``0x``), and the values fit in 64 bits. Anything else walks
    the list again."""
    arg_list, line_list = list(args), list(stdin_lines)
    every = [*arg_list, *line_list]
    joined = "\n".join(every)
    if joined.isascii() and not any(c in joined for c in "_+-"):
        try:  # int() takes the 0x prefix, either case and ASCII blanks around it, like _parse_pc
            values = list(map(int, every, repeat(16)))
        except ValueError:
            pass  # a blank line or a bad PC: the careful walk below
        else:
            if not values or max(values) <= MAX_U64:  # (no sign in the text: none is negative)
                return values
    out: list[int] = []
    for where, values_of in (("argument", arg_list), ("stdin line", line_list)):
        for n, raw in enumerate(values_of, 1):
            if where == "stdin line" and not raw.strip():
                continue
            try:
                out.append(_parse_pc(raw))
            except ValueError as exc:
                _fail(
                    f"{where} {n}: {raw.strip()!r} {exc}: expected a hexadecimal PC such as 0x124080c07e58 "
                    "(64 bits at most, no sign)",
                    EXIT_USAGE,
                )
    return out


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("elf", type=click.Path(path_type=Path))
@click.argument("pcs", nargs=-1)
@click.option(
    "--base",
    default=None,
    metavar="ADDR",
    help="Device base of the image (binDevAddr). Default: from a bin_files name …_0x<HEX>.o, else 0.",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--no-demangle", is_flag=True, help="Show raw (mangled) symbol names.")
@bad_input_is_exit_3
def symbolize(elf: Path, pcs: tuple[str, ...], base: str | None, fmt: str, no_demangle: bool) -> None:
    """Map PCs to function symbols (+offset) of ELF. PCs are hex; without PC arguments they are read
    from stdin, one per line."""
    from skdbg.output import write_columns
    from skdbg.parsers.symbolize import COLUMNS
    from skdbg.parsers.symbolize import symbolize as run_symbolize

    stdin_lines: list[str] = []
    if not pcs:
        if sys.stdin.isatty():
            _fail("no PC given: pass PCs as arguments or one per line on stdin", EXIT_USAGE)
        # one read, one batch; lines as ``sed -n Np`` counts them (splitlines would also cut at form feeds
        # and other separators, and a bad line's number would be off)
        stdin_lines = sys.stdin.read().split("\n")
        if stdin_lines and not stdin_lines[-1]:
            stdin_lines.pop()  # the last line's newline ends it, it does not start one
    values = _read_pcs(pcs, stdin_lines)
    base_value: int | None = None
    if base is not None:
        try:
            base_value = _parse_pc(base)
        except ValueError as exc:
            _fail(
                f"--base: {base!r} {exc}: expected a hexadecimal address such as 0x124080b00000 (64 bits at "
                "most, no sign)",
                EXIT_USAGE,
            )
    result = run_symbolize(elf, values, base=base_value, demangle=not no_demangle)
    for gap in result.gaps:
        click.echo(f"skdbg: gap: {one_line(gap.detail)}", err=True)
    meta = {"elf": str(elf), "base": hex(result.base), "base_source": result.base_source}
    if fmt == "table":
        write_frame(result.to_frame(), fmt, sys.stdout, title="symbolize", meta=meta)
    else:  # csv/json stream from the result's columns: no frame for a million rows
        write_columns(result.columns, COLUMNS, fmt, sys.stdout, title="symbolize", meta=meta)


ANALYZE_FORMATS = ("text", "md", "json")


def _triage_options(skew: float, grace: float) -> Any:
    """The triage options of ``--skew`` and ``--grace`` (each a finite span click has checked:
    :data:`~skdbg.cli_types.WINDOW_SECONDS`)."""
    from datetime import timedelta

    from skdbg.triage.context import TriageOptions

    return TriageOptions(skew=timedelta(seconds=skew), grace=timedelta(seconds=grace))


def _scene_options(func: F) -> F:
    """The options every scene-reading triage command shares."""
    for decorator in reversed(
        (
            click.option(
                "--run",
                "run_json",
                type=click.Path(path_type=Path),
                default=None,
                help="Run manifest to use instead of SCENE/run.json.",
            ),
            click.option(
                "--source-root",
                type=click.Path(path_type=Path),
                default=None,
                help="Where the model source lives (run.json candidate.marker_file is relative to it).",
            ),
            click.option(
                "--pid", type=int, default=None, help="Only this process (rank) when the scene holds several."
            ),
            click.option(
                "--skew",
                type=WINDOW_SECONDS,
                default=5.0,
                show_default=True,
                help="F2/F4 clock skew allowance, seconds (0 to a year).",
            ),
            click.option(
                "--grace",
                type=WINDOW_SECONDS,
                default=120.0,
                show_default=True,
                help="F2 grace after run end, seconds (0 to a year).",
            ),
        )
    ):
        func = decorator(func)
    return func


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("scene", type=click.Path(path_type=Path))
@_scene_options
@click.option("--format", "fmt", type=click.Choice(ANALYZE_FORMATS), default="text", show_default=True)
@click.option(
    "--session", "session_id", default=None, metavar="ID", help="Also freeze the scene as an attempt."
)
@click.option("--session-dir", type=click.Path(path_type=Path), default=None, help="Ledger directory.")
@click.option(
    "--no-cache",
    is_flag=True,
    help="Analyse afresh; do not read or write the result cache (`skdbg locate` shows where it is).",
)
@bad_input_is_exit_3
@_one_scene
def analyze(
    scene: Path,
    run_json: Path | None,
    source_root: Path | None,
    pid: int | None,
    skew: float,
    grace: float,
    fmt: str,
    session_id: str | None,
    session_dir: Path | None,
    no_cache: bool,
) -> None:
    """Triage a failure scene: entry gate, fault, suspect child with confidence and rule id, routes,
    next steps and the exclusion proposal. JSON is the skdbg.analysis/1 contract (spec/analysis-json.md);
    exit code 0 whatever the verdict."""
    if not no_cache and session_id is None:
        hit = _cache_hit(scene, run_json, source_root, pid, skew, grace)
        # the scene is unchanged: answered without loading the parsers (text and md need the stored
        # analysis itself; one the running code cannot read back is a miss)
        cached = None if hit is None or fmt == "json" else hit.load()
        if hit is not None and (fmt == "json" or cached is not None):
            _note_no_sk(hit.fault_kind, scene.resolve(), hit.sk_meta)
            if cached is None:
                for warning in hit.warnings:
                    click.echo(f"skdbg: warning: {warning}", err=True)
                click.echo(hit.json_text)
            else:
                _print_analysis(cached, fmt)
            return
    from skdbg.parsers.scan_child import dismiss_scan_child, prepare_scan_child

    # the child a large plog's scan runs in is forked first (click refused bad options before this runs),
    # before even the triage options' module loads: it loads numpy while this process imports the triage
    # stages and opens the scene, and is ended unless the scan takes it. (The options' module, ~0.01 s of
    # imports, loaded first, delayed the scan's start by as much. The modules of the hashing it shares
    # with this process are not loaded ahead: it needs them only after its scan, if at all, and on the
    # bench scene its numpy import already ends after its work has come.)
    prepare_scan_child(scene)
    try:
        options = _triage_options(skew, grace)
        analysis, ctx = _analyze_afresh(scene, run_json, source_root, pid, options, no_cache=no_cache)
    finally:
        dismiss_scan_child()  # when opening the scene failed (else it was ended once the scan could start)
    layout = ctx.scene.layout
    _note_no_sk(analysis.fault.kind, ctx.root, bool(layout.models or layout.prof_files))
    if session_id is not None:
        from skdbg.workflow import freeze

        with _open_ledger(session_dir) as ledger:
            a = freeze(ledger, session_id, ctx=ctx, analysis=analysis)
        click.echo(f"skdbg: recorded {a.round_id}/{a.key} ({a.status}) in session {session_id}", err=True)
    _print_analysis(analysis, fmt)


def _analyze_afresh(
    scene: Path,
    run_json: Path | None,
    source_root: Path | None,
    pid: int | None,
    options: TriageOptions,
    *,
    no_cache: bool,
) -> tuple[Analysis, TriageContext]:
    """``analyze``'s analysis when the result cache had none: ``(analysis, context)``."""
    from skdbg.parsers.scan_child import dismiss_scan_child
    from skdbg.triage.context import check_inputs, open_context, start_reading

    ctx = open_context(scene, run_json=run_json, source_root=source_root, pid=pid, options=options)
    # the plog scan and the hashing start now: they run while the triage stages are imported, the
    # inputs checked and sk_meta parsed; a standby child no scan took is ended (none can start later)
    start_reading(ctx)
    dismiss_scan_child()
    from skdbg.triage.engine import analyze_context

    check_inputs(ctx)
    if no_cache:
        analysis = analyze_context(ctx)
    else:
        from skdbg.triage.cache import AnalysisCache

        analysis = AnalysisCache().analyze(ctx, analyze_context)
    return analysis, ctx


def _cache_hit(
    scene: Path, run_json: Path | None, source_root: Path | None, pid: int | None, skew: float, grace: float
) -> CachedAnalysis | None:
    """The result cache's answer for an unchanged scene, or None.

    Why before opening the scene: a hit then costs a walk of the scene's inodes, not the parser stack's
    imports and a read of every file; a miss (or input the slow path must refuse) goes the usual way."""
    from datetime import timedelta

    from skdbg.triage.cache import AnalysisCache, CacheKey

    if not scene.is_dir() or (source_root is not None and not source_root.is_dir()):
        return None
    key = CacheKey(
        root=scene.resolve(),
        run_json=None if run_json is None else Path(os.path.abspath(run_json)),
        source_root=None if source_root is None else source_root.resolve(),
        pid=pid,
        skew=timedelta(seconds=skew).total_seconds(),  # as TriageOptions holds them
        grace=timedelta(seconds=grace).total_seconds(),
    )
    return AnalysisCache().lookup(key)


def _note_no_sk(fault_kind: str, root: Path, sk_meta: bool) -> None:
    """Say so when nothing in the scene is SuperKernel: no sk_meta model, no SK profiling, no SK fault."""
    if not (sk_meta or fault_kind in ("sk", "ge_sk")):
        click.echo(
            f"skdbg: no SuperKernel evidence in {root}: no sk_meta/<pid>/ model and no SK fault in the "
            "plogs (the gaps below say what to collect)",
            err=True,
        )


def _print_analysis(analysis: Any, fmt: str) -> None:
    """``analyze``'s output: the warnings on stderr, then the analysis in ``fmt``."""
    for warning in analysis.warnings:
        click.echo(f"skdbg: warning: {warning}", err=True)
    if fmt == "json":
        from skdbg.triage.jsontext import analysis_json_text

        click.echo(analysis_json_text(analysis))
        return
    from skdbg.triage.render import render_markdown, render_text

    if fmt == "md":
        click.echo(render_markdown(analysis), nl=False)
    else:
        click.echo(render_text(analysis), nl=False)


@main.command(epilog=OUTPUT_EXIT_HELP)
@click.argument("scene", type=click.Path(path_type=Path))
@output_folder_option("-o", "--output", "out_dir", what="Report folder to write")
@_scene_options
@click.option(
    "--lang", type=click.Choice(("en", "zh")), default="en", show_default=True, help="Section labels."
)
@bad_input_is_exit_3
@_one_scene
def report(
    scene: Path,
    out_dir: Path,
    force: bool,
    run_json: Path | None,
    source_root: Path | None,
    pid: int | None,
    skew: float,
    grace: float,
    lang: str,
) -> None:
    """Write the failure-scene report folder of SCENE (nine-field record, eight-item scene section,
    evidence index with SHA-256, analysis JSON, timeline.svg and scope-graph.svg). Prints the written
    files, one per line."""
    from skdbg.pictures.export import report_pictures
    from skdbg.triage.context import check_inputs, open_context
    from skdbg.triage.engine import analyze_staged
    from skdbg.triage.report import check_report_dir, write_report

    if scene.is_dir():
        check_report_dir(scene, out_dir, force=force)  # refuse before the analysis, not after
    ctx = open_context(
        scene, run_json=run_json, source_root=source_root, pid=pid, options=_triage_options(skew, grace)
    )
    check_inputs(ctx)
    loc, analysis = analyze_staged(ctx)
    pictures = report_pictures(ctx, loc.instance, analysis)
    for path in write_report(ctx, analysis, out_dir, lang=lang, force=force, pictures=pictures):
        click.echo(str(path))


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("old", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
@click.option(
    "--diff",
    "with_diff",
    is_flag=True,
    help="Also compare the two scenes (skdbg diff OLD NEW): a summary after the gates; JSON gains a "
    '"diff" key (skdbg.diff/1).',
)
@bad_input_is_exit_3
@_one_scene
def verify(old: Path, new: Path, fmt: str, with_diff: bool) -> None:
    """Revalidate a re-launched candidate: NEW (fresh scene of the candidate) against OLD (the failed
    attempt whose proposal it applies). Reports gates V1–V5 (skdbg.verify/1 JSON with --format json);
    exit code 0 whatever the gate results."""
    from skdbg.triage.verify import verify_scenes

    result = verify_scenes(old, new)
    diff = None
    if with_diff:
        from skdbg.diffing import diff_scenes

        diff = diff_scenes(old, new)
    if fmt == "json":
        doc = result.to_json()
        if diff is not None:
            doc["diff"] = diff.to_json()
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
        return
    from skdbg.triage.render import render_verify_text

    click.echo(render_verify_text(result.to_json()), nl=False)
    if diff is not None:
        from skdbg.diffing.render import summary_lines

        click.echo("\n".join(summary_lines(diff)))


# ------------------------------------------------------------------------------------------ sessions

SESSION_FORMATS = ("text", "json")


def _open_ledger(session_dir: Path | None, *, read_only: bool = False) -> Any:
    """The ledger under --session-dir / $SKDBG_HOME / the platform state dir; warnings to stderr."""
    from skdbg.sessions.location import session_home
    from skdbg.sessions.store import Ledger

    home = session_home(session_dir)
    # reads open an existing ledger read-only (a read-only ledger folder still lists and shows);
    # with no ledger yet, the first command creates it
    ledger = Ledger(home, read_only=read_only and (home / "ledger.db").is_file())
    for warning in ledger.warnings:
        click.echo(f"skdbg: warning: {warning}", err=True)
    return ledger


def _emit(fmt: str, doc: Any, text: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(doc, indent=2, ensure_ascii=False))
    else:
        click.echo(text)


def _attempt_ref(ref: str | None) -> tuple[str | None, int | None]:
    """``ROUND`` or ``ROUND/attempt-NNN`` (or ``ROUND/N``)."""
    if ref is None:
        return None, None
    round_id, _, att = ref.partition("/")
    if not att:
        return round_id, None
    digits = att.removeprefix("attempt-")
    if not digits.isdigit():
        _fail(f"expected ROUND or ROUND/attempt-NNN, got {ref!r}", EXIT_USAGE)
    return round_id, int(digits)


_session_dir_option = click.option(
    "--session-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Ledger directory (default: $SKDBG_HOME/sessions, else the platform state dir).",
)
_format_option = click.option(
    "--format", "fmt", type=click.Choice(SESSION_FORMATS), default="text", show_default=True
)


@main.command(epilog=EXIT_CODES_HELP)
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def locate(session_dir: Path | None, fmt: str) -> None:
    """Print where skdbg keeps its state: sessions ledger, evidence objects, cache, config, log, and the
    journal mode the ledger uses there (WAL on local disks, rollback journal on NFS/Lustre/GPFS/CIFS),
    the analysis result cache (analysis_cache; `analyze --no-cache` bypasses it), the compiled code
    of skdbg's record classes (class_code) and of its parsers' regular expressions (regex_code), both
    beside the package's bytecode ("none" when this Python keeps no bytecode cache)."""
    from skdbg import classcode, regexcode
    from skdbg.sessions.location import locate as run_locate
    from skdbg.triage.cache import cache_dir

    loc = run_locate(session_dir)
    doc = loc.to_json()
    doc["analysis_cache"] = str(cache_dir())  # `analyze` results; $SKDBG_CACHE_DIR moves it
    for name, where in (("class_code", classcode.cache_path()), ("regex_code", regexcode.cache_path())):
        doc[name] = str(where) if where is not None else "none"
    _emit(fmt, doc, "\n".join(f"{k:<15}{v}" for k, v in doc.items()))


@main.group(epilog=EXIT_CODES_HELP)
def session() -> None:
    """The append-only triage ledger: sessions, rounds (-X<n> exclusion, -N<n> narrowing), attempts."""


@session.command("new", epilog=EXIT_CODES_HELP)
@click.option("--name", default=None, help="A human name for the session.")
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_new(name: str | None, session_dir: Path | None, fmt: str) -> None:
    """Open a new session and print its id."""
    with _open_ledger(session_dir) as ledger:
        sid = ledger.new_session(name)
    _emit(fmt, {"id": sid}, sid)


@session.command("list", epilog=EXIT_CODES_HELP)
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_list(session_dir: Path | None, fmt: str) -> None:
    """List the sessions of the ledger."""
    with _open_ledger(session_dir, read_only=True) as ledger:
        rows = [s.to_json() for s in ledger.sessions()]
    text = "\n".join(
        f"{r['id']}  {r['rounds']} round(s) {r['attempts']} attempt(s)  {r['name'] or ''}" for r in rows
    )
    _emit(fmt, {"sessions": rows}, text or "no sessions")


@session.command("show", epilog=EXIT_CODES_HELP)
@click.argument("session_id", metavar="ID")
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_show(session_id: str, session_dir: Path | None, fmt: str) -> None:
    """Rounds, attempts with status and gates, proposals and notes of a session."""
    from skdbg.sessions.views import session_overview, verdict_history
    from skdbg.show import show

    with _open_ledger(session_dir, read_only=True) as ledger:
        doc = session_overview(ledger, session_id)
        doc["verdicts"] = verdict_history(ledger, session_id)
    lines = [f"session {doc['session']['id']} {doc['session']['name'] or ''}".rstrip()]
    for r in doc["rounds"]:
        lines.append(f"round {r['round_id']} ({r['kind']}) {r['status']}")
        for a in r["attempts"]:
            gates = " ".join(f"{g['gate']}:{g['result']}" for g in a["gates"])
            lines.append(
                f"  {a['attempt']} {a['status']:<11} pid {show(a['pid'])}  {show(a['change'])}  {gates}".rstrip()
            )
    for p in doc["proposals"]:
        lines.append(f"proposal {p['sha256'][:12]} -> {p['round_id']}: {p['status']}")
    for n in doc["notes"]:
        lines.append(f"note {n['round_id'] or ''} {n['text']}")
    _emit(fmt, doc, "\n".join(lines))


@session.command("add-attempt", epilog=EXIT_CODES_HELP)
@click.argument("session_id", metavar="ID")
@click.argument("scene", type=click.Path(path_type=Path))
@click.option("--round", "round_id", default=None, help="Round (default: run.json round_id, else BASE).")
@click.option("--change", default=None, help="The single change vs the previous attempt of the round.")
@click.option(
    "--reference", is_flag=True, help="Reference the files in place (hashes only) instead of copying."
)
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_add_attempt(
    session_id: str,
    scene: Path,
    round_id: str | None,
    change: str | None,
    reference: bool,
    session_dir: Path | None,
    fmt: str,
) -> None:
    """Freeze SCENE (paths + SHA-256, analysis, report) as the next attempt; refuses stale evidence (R7)."""
    from skdbg.workflow import freeze

    with _open_ledger(session_dir) as ledger:
        a = freeze(
            ledger,
            session_id,
            scene,
            round_id=round_id,
            change=change,
            storage="reference" if reference else "copy",
        )
    _emit(fmt, a.to_json(), f"{a.round_id}/{a.key} {a.status}")


@session.command("propose", epilog=EXIT_CODES_HELP)
@click.argument("session_id", metavar="ID")
@click.argument("attempt", metavar="ROUND[/attempt-NNN]")
@click.option(
    "--narrowing", is_flag=True, help="Open a narrowing round (-N<n>) instead of an exclusion (-X<n>)."
)
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_propose(
    session_id: str, attempt: str, narrowing: bool, session_dir: Path | None, fmt: str
) -> None:
    """Record the attempt's proposal and open the new round it defines; prints the round id."""
    from skdbg.sessions.attempts import propose

    round_id, no = _attempt_ref(attempt)
    with _open_ledger(session_dir) as ledger:
        rid, status = propose(
            ledger, session_id, str(round_id), no, kind="narrowing" if narrowing else "exclusion"
        )
    _emit(fmt, {"round_id": rid, "status": status}, f"{rid} {status}")


@session.command("apply", epilog=EXIT_CODES_HELP)
@click.argument("session_id", metavar="ID")
@click.argument("round_id", metavar="ROUND")
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_apply(session_id: str, round_id: str, session_dir: Path | None, fmt: str) -> None:
    """Mark the proposal that opened ROUND as applied (the marker edit is in the source)."""
    with _open_ledger(session_dir) as ledger:
        p = ledger.proposal(session_id, round_id)
        ledger.set_status("proposal", p.pk, "applied", "skdbg session apply")
        status = ledger.status("proposal", p.pk)
    _emit(fmt, {"round_id": round_id, "status": status}, f"{round_id} proposal {status}")


@session.command("verify", epilog=EXIT_CODES_HELP)
@click.argument("session_id", metavar="ID")
@click.argument("attempt", metavar="ROUND[/attempt-NNN]")
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_verify(session_id: str, attempt: str, session_dir: Path | None, fmt: str) -> None:
    """Revalidate the round's attempt (V1–V5) against the frozen attempt its proposal came from."""
    from skdbg.workflow import verify_round

    round_id, no = _attempt_ref(attempt)
    with _open_ledger(session_dir) as ledger:
        doc = verify_round(ledger, session_id, str(round_id), no)
    from skdbg.triage.render import render_verify_text

    _emit(fmt, doc, render_verify_text(doc).rstrip("\n"))


@session.command("check", epilog=EXIT_CODES_HELP)
@click.argument("session_id", metavar="ID")
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_check(session_id: str, session_dir: Path | None, fmt: str) -> None:
    """Re-hash every frozen file of the session; exit 3 naming the first file changed after freezing."""
    from skdbg.sessions.attempts import check_attempt

    with _open_ledger(session_dir, read_only=True) as ledger:
        attempts = ledger.attempts(session_id)
        for a in attempts:
            check_attempt(ledger, a)
        integrity = ledger.integrity_check()
    _emit(
        fmt,
        {"attempts": len(attempts), "integrity": integrity},
        f"{len(attempts)} attempt(s) intact; db {integrity}",
    )


@session.command("export", epilog=OUTPUT_EXIT_HELP)
@click.argument("session_id", metavar="ID")
@output_folder_option("-o", "--output", "out_dir", what="Folder to write")
@click.option(
    "--lang", type=click.Choice(("en", "zh")), default="en", show_default=True, help="Section labels."
)
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_export(
    session_id: str, out_dir: Path, force: bool, lang: str, session_dir: Path | None, fmt: str
) -> None:
    """Write the failure-scene report folder of the session (REPORT.md, EXPERIMENT_REPORT.md, session.json)."""
    from skdbg.workflow import export_session

    with _open_ledger(session_dir, read_only=True) as ledger:
        files = export_session(ledger, session_id, out_dir, lang=lang, force=force)
    _emit(fmt, {"files": [str(f) for f in files]}, "\n".join(str(f) for f in files))


@session.command("import", epilog=EXIT_CODES_HELP)
@click.argument("folder", type=click.Path(path_type=Path))
@click.option(
    "--rename",
    "renames",
    multiple=True,
    metavar="ROUND=NAME",
    help="The parent's name for a round (kept as an alias; skdbg's round id stays).",
)
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_import(folder: Path, renames: tuple[str, ...], session_dir: Path | None, fmt: str) -> None:
    """Read an exported session folder back into the ledger; prints the session id."""
    from skdbg.sessions.exchange import import_session

    pairs = []
    for item in renames:
        old, sep, new = item.partition("=")
        if not sep or not old or not new:
            _fail(f"--rename: expected ROUND=NAME, got {item!r}", EXIT_USAGE)
        pairs.append((old, new))
    with _open_ledger(session_dir) as ledger:
        sid = import_session(ledger, folder)
        for old, new in pairs:
            ledger.alias_round(sid, old, new)
        aliases = ledger.aliases(sid)
    _emit(fmt, {"id": sid, "aliases": aliases}, sid)


@session.command("note", epilog=EXIT_CODES_HELP)
@click.argument("session_id", metavar="ID")
@click.argument("text")
@click.option(
    "--attempt", "attempt", default=None, metavar="ROUND[/attempt-NNN]", help="What the note is about."
)
@_session_dir_option
@_format_option
@bad_input_is_exit_3
def session_note(session_id: str, text: str, attempt: str | None, session_dir: Path | None, fmt: str) -> None:
    """Append a note to the session (optionally about a round or attempt)."""
    round_id, no = _attempt_ref(attempt)
    with _open_ledger(session_dir) as ledger:
        ledger.add_note(session_id, text, round_id=round_id, attempt_no=no)
        count = len(ledger.notes(session_id))
    _emit(fmt, {"notes": count}, f"{count} note(s)")


def _add_tui(group: click.Group) -> None:
    # the TUI entry point imports only click at module level; textual loads inside launch()
    from skdbg.tui.cli import tui

    group.add_command(tui)


def _add_codegen(group: click.Group) -> None:
    from skdbg.cli_codegen import codegen
    from skdbg.cli_codegen_candidate import register
    from skdbg.cli_codegen_fusion import superkernel

    group.add_command(codegen)
    codegen.add_command(superkernel)
    register(group)


def _add_collect(group: click.Group) -> None:
    from skdbg.cli_collect import collect

    group.add_command(collect)


def _add_explain(group: click.Group) -> None:
    from skdbg.cli_explain import register

    register(group)


def _add_relaunch(group: click.Group) -> None:
    from skdbg.cli_loop import register

    register(group)


def _add_bisect(group: click.Group) -> None:
    from skdbg.cli_bisect import bisect_command

    group.add_command(bisect_command)


def _add_sim(group: click.Group) -> None:
    from skdbg.cli_sim import sim

    group.add_command(sim)


def _add_demo(group: click.Group) -> None:
    from skdbg.cli_demo import demo

    group.add_command(demo)


def _add_diff(group: click.Group) -> None:
    from skdbg.cli_diff import diff_command

    group.add_command(diff_command)


def _add_scan(group: click.Group) -> None:
    from skdbg.cli_scan import scan

    group.add_command(scan)


#: the commands defined in their own modules: name -> the loader that adds it (and its subcommands) to
#: the group (:class:`_LazyGroup`)
_LAZY_COMMANDS: dict[str, Callable[[click.Group], None]] = {
    "tui": _add_tui,
    "codegen": _add_codegen,
    "collect": _add_collect,
    "explain": _add_explain,
    "relaunch": _add_relaunch,
    "bisect": _add_bisect,
    "sim": _add_sim,
    "demo": _add_demo,
    "diff": _add_diff,
    "scan": _add_scan,
}


def run() -> None:
    """The ``skdbg`` console script: :func:`main`, then the end of the process, without the interpreter's
    teardown when the command asked for it (:func:`~skdbg.process_end.end_process`). Tests that invoke
    :func:`main` in their own process never end it."""
    try:
        main()
    except SystemExit as exc:
        end_process(exc.code)
        raise


if __name__ == "__main__":  # pragma: no cover
    run()
