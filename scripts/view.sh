#!/usr/bin/env bash
# Build .typecheck/skdbg: a symlink view of the one import package (skdbg/* plus the mapped folders
# parsers, codegen, sessions). mypy and grimp (import-linter) walk folders and cannot follow the
# setuptools package-dir mapping, which lives in an import hook (ecosystem notes in docs/).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .typecheck && mkdir -p .typecheck/skdbg
for entry in skdbg/*; do
  ln -s "../../$entry" ".typecheck/skdbg/$(basename "$entry")"
done
for pkg in parsers codegen sessions; do
  ln -s "../../$pkg" ".typecheck/skdbg/$pkg"
done
