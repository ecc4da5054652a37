#!/usr/bin/env bash
# Writes the generated pages of docs/ from a build: docs/findings.md from the findings table
# (model/judge/findings.cpp), by tests/tools/findings_doc. A unit test fails while they differ.
#   scripts/gen-docs.sh [BUILD_DIR]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target findings_doc >/dev/null
"$build/tests/findings_doc" >docs/findings.md
echo "gen-docs: docs/findings.md written from $build"
