#!/usr/bin/env bash
# mypy cannot follow setuptools package-dir mappings (they live in an import hook), so build a
# symlink view .typecheck/skdbg/{skdbg/*, parsers, codegen, sessions} and check that (ecosystem.md §4.4).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .typecheck && mkdir -p .typecheck/skdbg
for entry in skdbg/*; do
  ln -s "../../$entry" ".typecheck/skdbg/$(basename "$entry")"
done
for pkg in parsers codegen sessions; do
  ln -s "../../$pkg" ".typecheck/skdbg/$pkg"
done
PY=${PYTHON:-python}
MYPYPATH=.typecheck "$PY" -m mypy -p skdbg "$@"
