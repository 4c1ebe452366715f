"""Ledger location and journal-mode detection (ecosystem.md §4.3, §6) — pure functions over mount tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from skdbg.sessions.location import filesystem_type, journal_mode_for, locate, session_home

MOUNTS = """\
/dev/nvme0n1p2 / ext4 rw,relatime 0 0
proc /proc proc rw 0 0
tmpfs /tmp tmpfs rw 0 0
fs01:/export/home /home nfs4 rw,vers=4.2 0 0
/dev/nvme1n1 /home/alice/scratch xfs rw 0 0
10.0.0.5@tcp:/lustre /lustre lustre rw 0 0
gpfs0 /gpfs/projects gpfs rw 0 0
//nas/share /mnt/my\\040share cifs rw 0 0
/dev/sdb1 /data ext4 rw 0 0
"""


@pytest.mark.parametrize(
    ("path", "fstype", "mode"),
    [
        ("/home/alice/.local/state/skdbg", "nfs4", "DELETE"),
        ("/home/alice/scratch/sessions", "xfs", "WAL"),  # a local disk mounted inside an NFS home
        ("/lustre/users/bob", "lustre", "DELETE"),
        ("/gpfs/projects/sk", "gpfs", "DELETE"),
        ("/mnt/my share/ledger", "cifs", "DELETE"),  # octal-escaped mount point
        ("/database/x", "ext4", "WAL"),  # /data is not a prefix of /database
        ("/data", "ext4", "WAL"),
        ("/tmp/s", "tmpfs", "WAL"),
    ],
)
def test_longest_mount_prefix_decides(path: str, fstype: str, mode: str) -> None:
    assert filesystem_type(path, MOUNTS) == fstype
    assert journal_mode_for(filesystem_type(path, MOUNTS)) == mode


def test_no_mount_table_is_local() -> None:
    assert filesystem_type("/x", "") is None
    assert journal_mode_for(None) == "WAL"


def test_session_home_precedence(tmp_path: Path) -> None:
    assert session_home(tmp_path / "explicit", env={"SKDBG_HOME": "/elsewhere"}) == tmp_path / "explicit"
    assert session_home(None, env={"SKDBG_HOME": str(tmp_path)}) == tmp_path / "sessions"
    default = session_home(None, env={})
    assert default.name == "sessions" and "skdbg" in default.parts


def test_locate_reports_journal_mode(tmp_path: Path) -> None:
    loc = locate(tmp_path / "s", mounts=f"srv:/x {tmp_path} nfs rw 0 0\n")
    assert loc.journal_mode == "DELETE" and loc.fstype == "nfs"
    assert loc.ledger == (tmp_path / "s" / "ledger.db").resolve()
    assert set(loc.to_json()) >= {"sessions", "ledger", "objects", "journal_mode", "cache", "config", "log"}
