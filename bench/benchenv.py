"""The environment benchmark children run in: the one a user's shell has, with bytecode caches on.

Why: some machines (CI images, this project's sandboxes) export ``PYTHONDONTWRITEBYTECODE=1``. Python
then recompiles every module of an editable install from source on each start — about 0.1–0.15 s for
skdbg's modules — while a wheel install (and every anchor program installed by pip, e.g. toolong) has its
``.pyc`` files written at install time. Timing skdbg that way would measure the sandbox, not the tool.
So each benchmark child runs without that variable, after one un-timed run that writes the caches, and
the benchmark prints that it did.
"""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Sequence

NOTE = "bytecode caches on for every child (PYTHONDONTWRITEBYTECODE removed), one un-timed priming run first"


def user_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """``os.environ`` minus PYTHONDONTWRITEBYTECODE, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra or {})
    return env


def prime(argv: Sequence[str], cwd: str | os.PathLike[str] | None = None) -> None:
    """Run ``argv`` once, untimed (in ``cwd``: the folder the timed runs start in), so the interpreter
    writes the bytecode caches it will read later."""
    subprocess.run(list(argv), env=user_env(), capture_output=True, check=False, cwd=cwd)


def children_usage() -> tuple[float, int]:
    """User + system CPU seconds and minor page faults of every waited-for child so far (the machine may
    be shared: CPU time is what a run costs whatever else runs; wall time is what the user waits). A
    child's own reaped children count in it: skdbg's include its forked workers (the plog scan's child,
    the diff's worker), which it reaps before it ends."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime, ru.ru_minflt


#: the part of a wrapped ``skdbg analyze`` child script (``python -c``: bench/analyze.py's ``--parts``,
#: bench/critical_path.py) that wraps functions as their modules load: a meta-path finder that, the moment
#: the analysis loads a module named in the script's ``pending`` (module name -> ``(attribute, label)``
#: pairs), calls the script's ``wrap(module, attribute, label)`` for each pair. A module the analysis never
#: loads stays unloaded (the wrapping must not change what runs). The script defines ``wrap`` and ``pending``
#: before it, and has imported ``importlib.util`` and ``sys``. (The finder asks the others for the module's
#: spec with a flag of its own thread set, not by taking itself off ``sys.meta_path``: two threads may import
#: at once.)
WRAP_ON_LOAD = """
import threading as _threading

class WrapOnLoad:
    def __init__(self):
        self._asking = _threading.local()

    def find_spec(self, fullname, path, target=None):
        if fullname not in pending or getattr(self._asking, "on", False):
            return None
        self._asking.on = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._asking.on = False
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module
        def exec_module(module, _load=load, _name=fullname):
            _load(module)
            for attr, label in pending.pop(_name, ()):
                wrap(module, attr, label)
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, WrapOnLoad())
"""


__all__ = ["NOTE", "WRAP_ON_LOAD", "children_usage", "prime", "user_env"]
