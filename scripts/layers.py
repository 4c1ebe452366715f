"""Check the import layering (.importlinter) over the symlink view of the package.

Why a wrapper: import-linter's graph builder walks folders, but ``skdbg.parsers``, ``skdbg.codegen``
and ``skdbg.sessions`` live in other folders, mapped in by the editable install's import hook. The
view in ``.typecheck/`` (scripts/view.sh) puts them where a folder walk finds them; this script drops
the editable hook so that ``skdbg`` resolves to the view, then runs the contracts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    subprocess.run([str(ROOT / "scripts" / "view.sh")], check=True)
    sys.meta_path[:] = [finder for finder in sys.meta_path if "editable" not in repr(finder)]
    view = ROOT / ".typecheck"
    sys.path.insert(0, str(view))
    os.chdir(view)  # import-linter puts the working directory first on sys.path
    from importlinter.cli import lint_imports

    return lint_imports(config_filename=str(ROOT / ".importlinter"), no_cache=True)


if __name__ == "__main__":
    sys.exit(main())
