#!/usr/bin/env bash
# mypy strict over the symlink view of the package (scripts/view.sh says why).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/view.sh
PY=${PYTHON:-python}
MYPYPATH=.typecheck "$PY" -m mypy -p skdbg "$@"
