"""The child process a plog scan will run in, forked before the scan is known: ``skdbg analyze``'s
first step on a scene with large logs.

Why a module of its own: it imports nothing of the parser stack, so deciding whether to fork (the
size guess, :func:`logs_reach`) costs nothing when no child is wanted. When one is, the scan's
modules are imported here first, and the child is forked with them loaded: it loads numpy while the
parent imports the triage stages and opens the scene. (Forked before those imports, the child would
import the ~0.05 s of them a second time: measured, the earlier fork then won nothing.) The scan
itself (:func:`skdbg.parsers.plog_fork.start_forked_plog_scan`) takes the waiting child with
:func:`take_scan_child`.

The child sees this process's modules as they were when it was forked: its work comes pickled, and a
pickled function is looked up by name there. Something patched or configured here later is not seen
by it (a child forked with its work in place sees the state of that moment instead).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, NamedTuple

from skdbg.forkstream import SharedClaims, StandbyChild, can_fork_child

#: the plogs of a scene scanned in a child only from this many bytes on: below, the fork, the pickling
#: and the decoding cost more than the few milliseconds of scanning they take off this process
FORK_MIN_BYTES = 1 << 20

#: at most this many folder entries are looked at by :func:`logs_reach` (a guess needs no more: a
#: scene's plogs lie a few folders deep, and a tree this large is no scene copied for triage)
MAX_ENTRIES = 20_000


class Standby(NamedTuple):
    """A standby child and the claims it shares with this process (made before the fork: the child
    inherited their pipe)."""

    child: StandbyChild[Any]
    claims: SharedClaims

    def end(self) -> None:
        """No scan runs in it: the child ended, the claims closed (each a no-op the second time)."""
        self.child.dismiss()
        self.claims.close()


#: the standby :func:`prepare_scan_child` forked, until a scan takes it or it is dismissed
_STANDBY: list[Standby] = []


def one_blas_thread() -> None:
    """numpy's OpenBLAS would start a pool of threads at load, one per CPU, costing ~0.04 s of CPU the
    parent's parsing could have used on a 2-core machine. The scan does no linear algebra, so the
    child's pool is told to be one thread (read when the library loads; the parent's environment is
    left as it is). Call it in the child, before numpy loads."""
    os.environ["OPENBLAS_NUM_THREADS"] = "1"


def _get_ready(modules: tuple[str, ...]) -> None:
    """A standby child's preparation: what its scan will import, and ``modules``."""
    one_blas_thread()
    import importlib

    import numpy  # noqa: F401

    for name in modules:
        importlib.import_module(name)


def prepare_scan_child(scene: str | os.PathLike[str], modules: Sequence[str] = ()) -> bool:
    """Fork now the child a plog scan of ``scene`` started later in this process will run in (when
    one is: :func:`~skdbg.parsers.plog_fork.start_forked_plog_scan` takes it, else
    :func:`dismiss_scan_child` ends it); True when forked. The scan's modules are loaded here first
    (this process needs them too); the child then loads numpy and ``modules`` while this process goes
    on. (``analyze`` names none: the modules of the ``also`` work a scan gives the child load with that
    work, which the child unpacks only if it takes some of it after its scan: see
    :class:`~skdbg.parsers.plog_fork.LoadedLater`.) Only where a scan could
    fork (:func:`~skdbg.forkstream.can_fork_child`), when the scene's logs look large enough for the
    scan to fork (:func:`logs_reach`), and while no other standby child waits.

    Why: ``skdbg analyze`` calls it first thing, before it imports the triage stages and opens the
    scene (~0.07 s on the bench scene); the child's numpy import (~0.08 s) then costs nothing on the
    way to the scan, which is the analysis's last stretch on a scene with a large plog. Why the size
    guess: on a small scene no scan forks, and an idle child alive beside the
    analysis costs it ~0.02 s (the fork, then a copy of each memory page the analysis writes to while
    the child shares it)."""
    if _STANDBY or not can_fork_child() or not logs_reach(scene, FORK_MIN_BYTES):
        return False
    import skdbg.parsers.plog_fork  # noqa: F401 - loaded once, for both processes (see the module docstring)

    wanted = tuple(modules)
    try:
        claims = SharedClaims()
    except OSError:
        return False
    try:
        _STANDBY.append(Standby(StandbyChild(lambda: _get_ready(wanted)), claims))
    except OSError:
        claims.close()
        return False
    return True


def take_scan_child() -> Standby | None:
    """The waiting standby child and its claims, now the scan's to start or dismiss and close (None:
    there is none)."""
    return _STANDBY.pop() if _STANDBY else None


def dismiss_scan_child() -> None:
    """End the standby child, if no scan took it (none came, or the plogs were too small to fork
    for). Call it once a scan can no longer start, and again when the command ends (a no-op then)."""
    while _STANDBY:
        _STANDBY.pop().end()


def logs_reach(root: str | os.PathLike[str], size: int) -> bool:
    """The ``*.log`` files under ``root``, outside its ``sk_meta`` folders, hold ``size`` bytes or
    more (the walk stops once they do): where a scene's plogs are, before the scene is opened.

    A guess, and only ever used as one (:func:`prepare_scan_child`): it counts logs that are not
    plogs, and the scan may count plogs this misses (a plog named ``*.log`` inside ``sk_meta``, a
    linked file). No link is followed, to a folder or a file; an unreadable folder or file counts for
    nothing; after :data:`MAX_ENTRIES` entries the answer is no."""
    total = seen = 0
    folders = [os.fspath(root)]
    while folders:
        try:
            entries = os.scandir(folders.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                seen += 1
                if seen > MAX_ENTRIES:
                    return False
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "sk_meta":
                            folders.append(entry.path)
                    elif entry.name.endswith(".log") and entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
                        if total >= size:
                            return True
                except OSError:
                    continue
    return False


__all__ = [
    "FORK_MIN_BYTES",
    "dismiss_scan_child",
    "logs_reach",
    "one_blas_thread",
    "prepare_scan_child",
    "take_scan_child",
]
