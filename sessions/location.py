"""Where the ledger lives and which journal mode is safe there (ecosystem.md §4.3, §6).

Why: cluster home directories are often on NFS/Lustre/GPFS, where SQLite's WAL mode is unsafe ("WAL
does not work over a network filesystem", SQLite docs). The directory is resolved in one place —
``--session-dir`` > ``$SKDBG_HOME/sessions`` > the platform state dir — and the file-system type is
read from ``/proc/mounts`` by the longest mount-point prefix; the decision itself is a pure function
of the mount table text so it can be tested with sample tables.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import platformdirs

APP = "skdbg"
ENV_HOME = "SKDBG_HOME"
DB_NAME = "ledger.db"
OBJECTS = "objects"
#: file systems on which WAL's shared-memory index is unsafe or unsupported
NETWORK_FS = frozenset(
    {
        "nfs",
        "nfs4",
        "lustre",
        "gpfs",
        "cifs",
        "smb3",
        "smbfs",
        "ceph",
        "fuse.ceph",
        "glusterfs",
        "fuse.glusterfs",
        "beegfs",
        "afs",
        "9p",
        "fuse.sshfs",
        "fuse.s3fs",
        "panfs",
        "ocfs2",
        "gfs2",
    }
)
MOUNTS_FILE = Path("/proc/mounts")


def _unescape(field: str) -> str:
    """/proc/mounts escapes space, tab, newline and backslash as octal (``\\040``)."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and i + 4 <= len(field) and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def filesystem_type(path: str | os.PathLike[str], mounts: str) -> str | None:
    """The fs type of the mount holding absolute ``path``: the longest mount point that is a prefix
    of it by whole path components (``/data`` does not hold ``/database``). None when no line parses."""
    target = PurePosixPath(os.fspath(path))
    best: tuple[int, str] | None = None
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        mnt = PurePosixPath(_unescape(parts[1]))
        if target == mnt or mnt in target.parents:
            depth = len(mnt.parts)
            if best is None or depth >= best[0]:  # a later mount over the same point wins
                best = (depth, parts[2])
    return None if best is None else best[1]


def journal_mode_for(fstype: str | None) -> str:
    """``WAL`` on local disks, ``DELETE`` (rollback journal) on network file systems."""
    return "DELETE" if fstype is not None and fstype.lower() in NETWORK_FS else "WAL"


def read_mounts() -> str:
    try:
        return MOUNTS_FILE.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""  # not Linux: no table, treat as local


def session_home(
    session_dir: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """The sessions directory: explicit > ``$SKDBG_HOME/sessions`` > platformdirs user state dir."""
    if session_dir is not None:
        return Path(session_dir).expanduser().resolve()
    environ = os.environ if env is None else env
    home = environ.get(ENV_HOME)
    if home:
        return (Path(home).expanduser() / "sessions").resolve()
    return platformdirs.user_state_path(APP) / "sessions"


def _existing_ancestor(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


@dataclass(frozen=True, slots=True)
class Location:
    """Everything ``skdbg locate`` prints."""

    sessions: Path
    ledger: Path
    objects: Path
    fstype: str | None
    journal_mode: str
    cache: Path
    config: Path
    log: Path

    def to_json(self) -> dict[str, str | None]:
        return {
            "sessions": str(self.sessions),
            "ledger": str(self.ledger),
            "objects": str(self.objects),
            "filesystem": self.fstype,
            "journal_mode": self.journal_mode,
            "cache": str(self.cache),
            "config": str(self.config),
            "log": str(self.log),
        }


def locate(session_dir: str | os.PathLike[str] | None = None, mounts: str | None = None) -> Location:
    """Resolve every skdbg state path and the journal mode the ledger will use there."""
    home = session_home(session_dir)
    fstype = filesystem_type(_existing_ancestor(home).resolve(), read_mounts() if mounts is None else mounts)
    return Location(
        sessions=home,
        ledger=home / DB_NAME,
        objects=home / OBJECTS,
        fstype=fstype,
        journal_mode=journal_mode_for(fstype),
        cache=platformdirs.user_cache_path(APP),
        config=platformdirs.user_config_path(APP),
        log=platformdirs.user_log_path(APP),
    )


__all__ = [
    "DB_NAME",
    "ENV_HOME",
    "NETWORK_FS",
    "Location",
    "filesystem_type",
    "journal_mode_for",
    "locate",
    "read_mounts",
    "session_home",
]
