#!/usr/bin/env bash
# The checks a compiler does not make, with zero findings allowed (the test command runs this):
#   - clang-format: every C++ source formatted as .clang-format says;
#   - the house rules (scripts/check-house.py): includes only downward, the model pure, no detached
#     thread or sleep loop, functions of at most 60 lines, test names CTest can run; every mutant
#     of scripts/mutate.py still finds its line;
#   - the docs (scripts/check-docs.py): every link in README, CHANGELOG, ARCHITECTURE and docs/
#     resolves, every JSON Schema parses;
#   - with a build directory configured with clang (its compile_commands.json), clang-tidy over
#     model/, probes/ and verifier/ as .clang-tidy says: the files whose inputs have changed since
#     they last passed (scripts/tidy_cache.py, scripts/tidy-clean.txt).
#   scripts/lint.sh [CLANG_BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

failed=0
mapfile -t sources < <(git ls-files '*.cpp' '*.hpp')

echo "== clang-format"
if ! clang-format-14 --dry-run --Werror "${sources[@]}"; then
  echo "lint: run clang-format-14 -i on the files above" >&2
  failed=1
fi

echo "== house rules"
python3 scripts/check-house.py || failed=1
python3 scripts/mutate.py --check || failed=1

echo "== docs"
python3 scripts/check-docs.py || failed=1

if [[ -n ${1:-} ]]; then
  echo "== clang-tidy ($1)"
  [[ -f $1/compile_commands.json ]] || { echo "lint: no $1/compile_commands.json" >&2; exit 1; }
  mapfile -t product < <(git ls-files 'model/*.cpp' 'probes/*.cpp' 'verifier/*.cpp')
  product=("${product[@]/#/$PWD/}")
  # Only the files whose inputs changed since they last passed (scripts/tidy_cache.py: the record of
  # clean inputs is committed, and rewritten here after a clean run).
  mapfile -t stale < <(python3 scripts/tidy_cache.py stale "$1" scripts/tidy-clean.txt "${product[@]}")
  echo "clang-tidy: ${#stale[@]} of ${#product[@]} files (the others' inputs passed before: scripts/tidy-clean.txt)"
  : >"$1/clang-tidy.log"
  if ((${#stale[@]})); then
    # Its colours are stripped so that the findings can be counted.
    run-clang-tidy-14 -p "$1" -j "$(nproc)" -quiet "${stale[@]}" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' \
      >"$1/clang-tidy.log" || true
  fi
  if grep -qE ' (error|warning): ' "$1/clang-tidy.log"; then
    grep -E ' (error|warning): ' "$1/clang-tidy.log" | sort -u >&2
    echo "lint: clang-tidy found the above (full log: $1/clang-tidy.log)" >&2
    failed=1
  else
    python3 scripts/tidy_cache.py record "$1" scripts/tidy-clean.txt "${product[@]}"
  fi
fi

if ((failed)); then exit 1; fi
echo "lint: clean"
