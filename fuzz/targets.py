"""One fuzz target per parser, plus the whole-scene target through ``skdbg analyze``.

A parser target writes the mutated bytes under the artifact's real file name, parses them with the
public entry point and builds every table the result offers (``*_frame`` / ``to_frame``): exit-1
classes have hidden in the frame builders (64-bit addresses in float columns) as often as in the
line grammars.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SCENES = ROOT / "examples" / "scenes"
UPSTREAM = ROOT / "tests" / "data" / "upstream"


#: build the tables for one input in this many (they cost more than the parse; every builder still
#: sees thousands of inputs in a long run)
FRAME_EVERY = 8
_calls = 0


def _exercise(result: Any) -> None:
    """Build every table the result offers (what ``inspect`` and the TUI would do), for every
    :data:`FRAME_EVERY`-th input."""
    global _calls
    _calls += 1
    if _calls % FRAME_EVERY:
        return
    for name in dir(result):
        if not (name.endswith("_frame") or name == "to_frame") or name.startswith("__"):
            continue
        attr = getattr(result, name, None)
        if callable(attr) and not any(
            p.default is inspect.Parameter.empty for p in inspect.signature(attr).parameters.values()
        ):
            attr()


def _plog(path: Path) -> None:
    from skdbg.parsers.plog import read_plog, scan_plog

    _exercise(read_plog(path))
    list(scan_plog(path))


def _sk_handler_plog(path: Path) -> None:
    from skdbg.parsers import sk_handler

    res = sk_handler.parse_plog_file(str(path))
    _exercise(res)
    sk_handler.cores_frame(res.incidents)
    sk_handler.incidents_frame(res.incidents)
    sk_handler.dfx_frame(res.incidents)
    sk_handler.counters_frame(res.incidents)


def _super_kernel_log(path: Path) -> None:
    from skdbg.parsers import sk_handler
    from skdbg.parsers.super_kernel_log import parse_super_kernel_log

    _exercise(parse_super_kernel_log(path))
    res = sk_handler.parse_super_kernel_log(str(path))
    sk_handler.cores_frame(res.incidents)


def _meta(module: str, func: str) -> Callable[[Path], None]:
    def run(path: Path) -> None:
        import importlib

        parse = getattr(importlib.import_module(f"skdbg.parsers.{module}"), func)
        _exercise(parse(path))

    return run


def _sk_prof(path: Path) -> None:
    from skdbg.parsers.sk_prof import ProfReader, prof_frame

    reader = ProfReader(path)
    prof_frame(list(reader))


def _elf(path: Path) -> None:
    from skdbg.parsers.ascend_meta import parse_ascend_meta
    from skdbg.parsers.elf import open_elf

    image = open_elf(path)
    _exercise(image)
    for attr in ("symbols", "symtab"):
        table = getattr(image, attr, None)
        if table is not None and not callable(table):
            _exercise(table)
    parse_ascend_meta(image)


@dataclass(frozen=True)
class Target:
    """A parser under fuzz: the file name it is written as, its seed files and how to run it."""

    name: str
    file_name: str
    seeds: tuple[str, ...]  # glob patterns relative to the repository root
    run: Callable[[Path], None]

    def seed_files(self) -> list[Path]:
        found = sorted({p for pattern in self.seeds for p in ROOT.glob(pattern) if p.is_file()})
        if not found:
            raise SystemExit(f"fuzz: target {self.name} has no seed file ({', '.join(self.seeds)})")
        return found


_M = "examples/scenes/*/sk_meta/*/*/"
TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("plog", "plog-48213_20260610140058123.log", ("examples/scenes/*/log/plog/*.log",), _plog),
        Target(
            "sk_handler",
            "plog-48213_20260610140058123.log",
            ("examples/scenes/*/log/plog/*.log",),
            _sk_handler_plog,
        ),
        Target("super_kernel_log", "super_kernel.log", (_M + "super_kernel.log",), _super_kernel_log),
        Target(
            "fused_nodes",
            "sk_fused_nodes.log",
            (_M + "sk_fused_nodes.log", "tests/data/upstream/*/sk_meta/*/*/sk_fused_nodes.log"),
            _meta("fused_nodes", "parse_fused_nodes"),
        ),
        Target(
            "node_detail",
            "sk_node_detail.log",
            (_M + "sk_node_detail.log",),
            _meta("node_detail", "parse_node_detail"),
        ),
        Target(
            "scope_split",
            "sk_scope_split.log",
            (_M + "sk_scope_split.log", "tests/data/upstream/*/sk_meta/*/*/sk_scope_split.log"),
            _meta("scope_split", "parse_scope_split"),
        ),
        Target(
            "fail_reasons",
            "sk_fusion_fail_reasons.log",
            (_M + "sk_fusion_fail_reasons.log",),
            _meta("fail_reasons", "parse_fail_reasons"),
        ),
        Target(
            "device_args",
            "sk_device_args.log",
            (_M + "sk_device_args.log",),
            _meta("device_args", "parse_device_args"),
        ),
        Target(
            "task_queue",
            "sk_task_queue.json",
            (_M + "sk_task_queue.json",),
            _meta("task_queue", "parse_task_queue"),
        ),
        Target(
            "sk_prof",
            "sk_prof_device_0.json",
            (
                "examples/scenes/*/sk_meta/*/sk_prof_device_*.json",
                "tests/data/upstream/*/sk_prof_device_*.json",
            ),
            _sk_prof,
        ),
        Target(
            "run_json", "run.json", ("examples/scenes/*/run.json",), _meta("run_identity", "parse_run_json")
        ),
        Target(
            "env_probe",
            "check_environment.json",
            ("examples/scenes/*/env/check_environment.json", "tests/data/upstream/*/environment.json"),
            _meta("run_identity", "parse_env_probe"),
        ),
        Target(
            "source_sites",
            "source_sites.json",
            ("examples/scenes/*/source_sites.json",),
            _meta("run_identity", "parse_source_sites"),
        ),
        Target("elf", "kernel_0x124080B00000.o", (_M + "bin_files/*.o",), _elf),
    )
}


def run_target(target: Target, data: bytes, work: Path) -> None:
    """Write ``data`` as the target's artifact in ``work`` and parse it; ParseError is the only allowed error."""
    from skdbg.parsers.common import ParseError

    path = work / target.file_name
    path.write_bytes(data)
    with contextlib.suppress(ParseError):
        target.run(path)


# ------------------------------------------------------------------------------------- whole scenes


def scene_files(scene: Path) -> list[Path]:
    return sorted(p for p in scene.rglob("*") if p.is_file() and not p.is_symlink())


def digest_tree(root: Path) -> dict[str, str]:
    """SHA-256 of every regular file under ``root`` (the "inputs unchanged" oracle)."""
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in scene_files(root)
    }


def copy_scene(src: Path, dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=True)
    return dst
