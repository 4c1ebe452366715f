"""The ledger stores bytes and JSON: importing and using ``skdbg.sessions`` never loads triage.

The import-linter contract checks the static imports; this checks what a real process loads, which
also catches an import hidden inside a function that runs on the ledger's read paths.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from session_support import FAILING

from skdbg.sessions.store import Ledger
from skdbg.workflow import freeze

_PROBE = """
import json, sys
from pathlib import Path
from skdbg.sessions.attempts import check_attempt, materialised, propose
from skdbg.sessions.exchange import session_document
from skdbg.sessions.store import Ledger
from skdbg.sessions.views import verdict_history
led = Ledger(Path(sys.argv[1]))
sid = sys.argv[2]
a = led.attempts(sid)[0]
check_attempt(led, a)
with materialised(led, a) as root:
    files = sorted(p.name for p in root.rglob("*") if p.is_file())
rid, status = propose(led, sid, a.round_id)
session_document(led, sid, "en")
verdict_history(led, sid)
print(json.dumps({"loaded": sorted(m for m in sys.modules if m.startswith(("skdbg.triage", "skdbg.workflow"))),
                  "round": rid, "n_files": len(files)}))
"""


def test_ledger_read_paths_load_no_triage(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Ledger(home) as led:
        sid = led.new_session("storage-only")
        failed = freeze(led, sid, FAILING)
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, str(home), sid], check=True, capture_output=True, text=True
    )
    doc = json.loads(out.stdout)
    assert doc["loaded"] == []
    assert doc["round"] == f"{failed.round_id}-X1"
    assert doc["n_files"] > 0
