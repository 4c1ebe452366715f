"""The whole-scene target: a bundled scene damaged in place, then ``skdbg analyze`` and ``report``.

A case is a recipe (scene name + operations) so that a failing one is saved as a small JSON file and
replayed exactly, instead of a copy of the whole damaged folder.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import random
from pathlib import Path
from typing import Any

from fuzz.mutate import mutate
from fuzz.oracle import CRASHERS, Failure, bounded
from fuzz.targets import SCENES, copy_scene, digest_tree, scene_files

Op = dict[str, Any]


def _plan(rng: random.Random, scene: Path) -> list[Op]:
    files = [p.relative_to(scene).as_posix() for p in scene_files(scene)]
    ops: list[Op] = []
    for _ in range(rng.randint(1, 3)):
        rel = rng.choice(files)
        roll = rng.random()
        if roll < 0.6:
            data = mutate((scene / rel).read_bytes(), rng)
            ops.append({"op": "write", "file": rel, "b64": base64.b64encode(data).decode()})
        else:
            kind = rng.choice(
                ("delete", "mkdir", "fifo", "devzero", "outside", "dangling", "loop", "empty", "badname")
            )
            ops.append({"op": kind, "file": rel})
    return ops


def _apply(scene: Path, ops: list[Op], outside: Path) -> None:
    for op in ops:
        path = scene / op["file"]
        if op["op"] == "write":
            if path.is_file() and not path.is_symlink():
                path.write_bytes(base64.b64decode(op["b64"]))
            continue
        if path.is_dir() and not path.is_symlink():
            continue
        if os.path.lexists(path):
            path.unlink()
        kind = op["op"]
        if kind == "mkdir":
            path.mkdir()
        elif kind == "fifo" and hasattr(os, "mkfifo"):
            os.mkfifo(path)
        elif kind == "devzero":
            path.symlink_to("/dev/zero")
        elif kind == "outside":
            path.symlink_to(outside)
        elif kind == "dangling":
            path.symlink_to(path.parent / "does-not-exist")
        elif kind == "loop":
            path.symlink_to(path)
        elif kind == "empty":
            path.write_bytes(b"")
        elif kind == "badname":  # a non-UTF-8 file name beside the removed file
            bad = os.fsencode(path.parent) + b"/\xff\xfe" + os.fsencode(path.name)
            with open(bad, "wb") as fh:
                fh.write(b"plog-like\n")


def run_recipe(recipe: dict[str, Any], work: Path) -> Failure | None:
    """Build the damaged scene of ``recipe`` in ``work`` and check the commands against the oracle."""
    from click.testing import CliRunner

    from skdbg.cli import main

    scene = copy_scene(SCENES / recipe["scene"], work / "scene")
    outside = work / "outside.txt"
    outside.write_text("SECRET-OUTSIDE-THE-SCENE\n")
    out = work / "report"
    _apply(scene, recipe["ops"], outside)
    before = digest_tree(scene)
    listing = sorted(p.name for p in work.iterdir())
    result: dict[str, Any] = {}

    def call() -> None:
        runner = CliRunner()
        for args in (["analyze", str(scene), "--format", "json"], ["report", str(scene), "-o", str(out)]):
            res = runner.invoke(main, args)
            result.setdefault("codes", []).append((args[0], res.exit_code, (res.stderr or "")[-300:]))

    failure = bounded("scene", call)
    if failure is None:
        for name, code, err in result.get("codes", []):
            if code not in (0, 2, 3):
                failure = Failure("scene", "exit-code", f"{name} exited {code}: {err.strip()}", 0.0)
                break
    if failure is None and digest_tree(scene) != before:
        failure = Failure("scene", "input-changed", "a scene file changed during the run", 0.0)
    if failure is None:
        extra = sorted(set(p.name for p in work.iterdir()) - set(listing) - {"report"})
        if extra:
            failure = Failure("scene", "wrote-outside", f"new entries beside the scene: {extra}", 0.0)
    if failure is None and "SECRET-OUTSIDE" in json.dumps(result):
        failure = Failure("scene", "leak", "a file outside the scene was read into the output", 0.0)
    return failure


def run_scene_case(rng: random.Random, work: Path) -> Failure | None:
    work.mkdir(parents=True, exist_ok=True)
    names = sorted(p.name for p in SCENES.iterdir() if p.is_dir())
    name = rng.choice(names)
    recipe = {"scene": name, "ops": _plan(rng, SCENES / name)}
    for entry in list(work.iterdir()):
        if entry.name != "scene":
            _remove(entry)
    failure = run_recipe(recipe, work)
    if failure is not None:
        failure.path = save_recipe(recipe, failure)
    return failure


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def save_recipe(recipe: dict[str, Any], failure: Failure) -> Path:
    text = json.dumps({**recipe, "failure": f"{failure.kind}: {failure.detail}"}, indent=1, sort_keys=True)
    folder = CRASHERS / "scene"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]}.json"
    path.write_text(text + "\n", encoding="utf-8")
    return path
