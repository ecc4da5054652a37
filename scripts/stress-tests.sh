#!/usr/bin/env bash
# The unit suite N times in a row (default 30) with both cores kept busy beside it (one `yes` per
# core, at the same priority): a test whose outcome depends on scheduling fails here. Prints one
# line per run and the total; exits 1 if any run failed (its log is kept and named).
#   scripts/stress-tests.sh [N] [BUILD_DIR]     (default: 30, build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
build=${2:-build}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/stress-tests.sh [N] [BUILD_DIR]   (N a positive whole number)" >&2; exit 64; }
tests=$build/tests/unit_tests
[[ -x $tests ]] || { echo "stress-tests: no $tests (build it first: cmake --build $build --target unit_tests)" >&2; exit 64; }

logs=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-stress.XXXXXX")
busy=()
stop_busy() { ((${#busy[@]})) && kill "${busy[@]}" 2>/dev/null || true; }
trap stop_busy EXIT
for _ in $(seq "$(nproc)"); do yes >/dev/null & busy+=($!); done

failed=0
for run in $(seq "$runs"); do
  start=$SECONDS
  # Each run is bounded: a hang fails the run instead of the loop.
  if timeout 900 "$tests" -r compact >"$logs/run-$run.log" 2>&1; then
    echo "run $run/$runs: passed ($((SECONDS - start)) s)"
    rm -f "$logs/run-$run.log"
  else
    failed=$((failed + 1))
    echo "run $run/$runs: FAILED ($((SECONDS - start)) s; log: $logs/run-$run.log)"
    grep -E 'failed|FAILED' "$logs/run-$run.log" | head -5 | sed 's/^/    /'
  fi
done
echo "stress-tests: $((runs - failed))/$runs runs passed, both cores busy"
((failed == 0)) && rm -rf "$logs"
((failed == 0))
