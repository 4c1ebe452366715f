"""``analyze --format json --no-cache`` loads only what the analysis uses (issue 18: analyze CPU).

Why: every module imported on the analyze path costs its class creation (Python 3.11 compiles each
dataclass method one by one) on every first run. The result cache (its snapshot classes, pickle,
platformdirs), the glossary (``skdbg explain``'s JSON package data) and the wait-for graph of a hang
(six dataclasses) are used only on their own paths, and :mod:`skdbg.atomic` (``tempfile``) only by the
commands that write a folder; super_kernel.log's fact parser only when the log may place a deferred
WAIT, and the demangler never: a ``--no-cache`` analysis of a scene without a bystander core or a
deferred WAIT must not load them. Each probe runs in a fresh interpreter so modules imported by other
tests cannot hide a violation.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENES = REPO / "examples" / "scenes"
WATCHED = (
    "skdbg.triage.cache",
    "platformdirs",
    "skdbg.glossary",
    "skdbg.triage.waitfor",
    "skdbg.atomic",
    "skdbg.sessions",
    # super_kernel.log's fact parser: an analysis reads the log's outline and parses the facts only
    # when a deferred WAIT may be among them (none in these scenes)
    "skdbg.parsers.super_kernel_log",
    # the demangler: the analysis locates PCs without demangling (not ``subprocess`` itself, which
    # click's ``uuid`` loads on Python 3.10)
    "skdbg.parsers.demangle",
    # the command modules of the other commands (skdbg.cli's lazy group)
    "skdbg.tui.cli",
    "skdbg.cli_codegen",
    "skdbg.cli_codegen_fusion",
    "skdbg.cli_codegen_candidate",
    "skdbg.cli_collect",
    "skdbg.cli_explain",
    "skdbg.cli_loop",
    "skdbg.cli_bisect",
    "skdbg.cli_sim",
    "skdbg.cli_demo",
    "skdbg.cli_diff",
    "skdbg.cli_scan",
)

_PROBE = """
import json, sys
from click.testing import CliRunner
from skdbg.cli import main
watched = json.loads(sys.argv[1])
result = CliRunner().invoke(main, sys.argv[2:])
print(json.dumps({"exit": result.exit_code, "output": result.output[:300],
                  "loaded": sorted(m for m in watched if m in sys.modules)}))
"""


def _run_probe(probe: str, names: object, args: list[str], cache_dir: Path) -> dict[str, Any]:
    """Run ``probe`` in a fresh interpreter on the CLI ``args`` (``names``, as JSON, its first argument) and
    return the JSON document it prints last; the command itself must have succeeded."""
    env = {**os.environ, "SKDBG_CACHE_DIR": str(cache_dir)}  # never the user's cache
    out = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(names), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env=env,
    )
    doc: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["exit"] == 0, doc["output"]
    return doc


def _loaded(args: list[str], cache_dir: Path) -> list[str]:
    loaded: list[str] = _run_probe(_PROBE, WATCHED, args, cache_dir)["loaded"]
    return loaded


@pytest.mark.parametrize("scene", ["high-single-stream", "non-sk-fault", "event-bound-split"])
def test_analyze_json_no_cache_loads_no_cache_glossary_or_wait_for(scene: str, tmp_path: Path) -> None:
    args = ["analyze", str(SCENES / scene), "--format", "json", "--no-cache"]
    assert _loaded(args, tmp_path) == []


def test_analyze_with_the_cache_loads_the_cache(tmp_path: Path) -> None:
    """The probe's counterpart: without ``--no-cache`` the cache module is loaded (and used)."""
    args = ["analyze", str(SCENES / "high-single-stream"), "--format", "json"]
    assert "skdbg.triage.cache" in _loaded(args, tmp_path)
    assert any(tmp_path.iterdir())  # an entry was stored


def test_a_log_placing_deferred_waits_loads_the_fact_parser(tmp_path: Path) -> None:
    """The counterpart of the facts' absence above: a super_kernel.log that places a deferred WAIT (T6)
    has its facts parsed, so the parser is loaded (and the analysis succeeds)."""
    from skdbg.scenebuilder.scene import Event, FaultCore, Kernel, SceneSpec, build_scene

    spec = SceneSpec(
        children=[Kernel("A_1"), Event("EventWait", event_id=2), Kernel("B_2"), Kernel("C_3")],
        reorder={1: 3},
        dialect="D5",
        cores=[FaultCore(30, "AIV", pc=("child", 2), state=("OP_LAUNCHED", 2))],
    )
    root = build_scene(spec, tmp_path / "scene").root
    logs = list(root.glob("sk_meta/*/*/super_kernel.log"))
    assert logs and all("place deferred wait node, " in p.read_text() for p in logs)
    args = ["analyze", str(root), "--format", "json", "--no-cache"]
    loaded = _loaded(args, tmp_path / "cache")
    assert "skdbg.parsers.super_kernel_log" in loaded and "skdbg.parsers.demangle" not in loaded


#: module-level patterns of rare line kinds, bad input or other commands, compiled on first use
#: (``lazy_regex``): a scene without such lines must not compile them
LAZY_REGEXES = {
    "skdbg.parsers.runtime_faults": (
        "FFTS_RE",
        "ERROR_TRACKING_RE",
        "_ERRNO_RE",
        "DUMP_EXCEPTION_RE",
        "DUMP_CALLBACK_RE",
        "DUMP_TO_FILE_RE",
        "_DATA_DUMP_RE",
        "EM_CODE_RE",
        "EM_SUFFIX_RE",
        "_LENIENT_KERNEL_RE",
        "_LENIENT_EXT_RE",
        "_LENIENT_HASH_RE",
        "_LENIENT_PROGRAM_RE",
    ),
    "skdbg.parsers.plog_line": (
        "LINE_RE",
        "SK_REST_RE",
        "IDEDD_REST_RE",
        "TID_FUNC_RE",
        "TS_RE",
        "FAST_LINE_RE",
    ),
    "skdbg.parsers.fail_reasons": ("_BREAK",),
    "skdbg.output": ("HEX_COLUMN_RE",),
}

_REGEX_PROBE = """
import importlib, json, sys
from click.testing import CliRunner
from skdbg.cli import main
watched = json.loads(sys.argv[1])
result = CliRunner().invoke(main, sys.argv[2:])
compiled = []
for mod, names in watched.items():
    m = importlib.import_module(mod)
    for name in names:
        accessor = getattr(m, name)
        if accessor.cache_info().currsize:
            compiled.append(mod + "." + name)
    if mod.endswith("runtime_faults"):
        compiled += ["_KV_INT_RE." + k for k, a in m._KV_INT_RE.items() if a.cache_info().currsize]
print(json.dumps({"exit": result.exit_code, "output": result.output[:300], "compiled": compiled}))
"""


def test_analyze_compiles_no_rare_line_regex(tmp_path: Path) -> None:
    """The scene's plog holds a kernel fault and a core report in the standard layout only (no dump
    exception, no FFTS+ or GE line, every line the fast path's), its fail-reasons file no break reason,
    and JSON output prints no table: none of the lazily compiled patterns may be compiled. The probe
    calls each accessor's ``cache_info``, so a pattern moved back to a plain ``re.compile`` fails too."""
    scene = SCENES / "aiv-fault-add-custom"
    args = ["analyze", str(scene), "--format", "json", "--no-cache"]
    assert _run_probe(_REGEX_PROBE, LAZY_REGEXES, args, tmp_path)["compiled"] == []


_DOC_PROBE = """
import dataclasses, json, sys
from click.testing import CliRunner
from skdbg.cli import main
result = CliRunner().invoke(main, sys.argv[2:])

def generated(cls):
    # the docstring @dataclass writes for a class that has none (CPython 3.10-3.13): its signature, or
    # its bare name where the signature cannot be made
    doc = cls.__dict__.get("__doc__")
    return not doc or doc == cls.__name__ or doc.startswith(cls.__name__ + "(")

undocumented = sorted(
    f"{name}.{k}"
    for name, mod in list(sys.modules.items())
    if name.split(".")[0] == "skdbg"
    for k, v in list(vars(mod).items())
    if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == name and generated(v)
)
print(json.dumps({"exit": result.exit_code, "output": result.output[:300], "undocumented": undocumented}))
"""


def test_every_record_class_an_analysis_loads_has_a_docstring(tmp_path: Path) -> None:
    """``@dataclass`` gives a class without a docstring one of its own: its signature, which it computes
    with ``inspect.signature`` when the class is made, on every start (~0.1 ms a class on Python 3.11).
    The 34 record classes an analysis of the bench scene made that way cost its first run ~3.5 ms of its
    ~28 ms of class creation (issue 18, thirty-sixth round); each now says what it holds instead. The
    probe checks the classes an analysis loads: a new record class without a docstring fails here.
    (The check is on the class's own ``__doc__`` as written: the probe runs with the docstrings kept.)"""
    scene = SCENES / "high-single-stream"
    args = ["analyze", str(scene), "--format", "json", "--no-cache"]
    doc = _run_probe(_DOC_PROBE, None, args, tmp_path)
    assert doc["undocumented"] == []
