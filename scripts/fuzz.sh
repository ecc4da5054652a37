#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz/fuzz_*.cpp) for SECONDS each (default 60) under
# ASan+UBSan, building build-fuzz (clang-14, -DZKVERIFY_FUZZ=ON) first if needed. Each target starts
# from a temporary corpus: its hand-written seeds (tests/fuzz/seeds/<target>/) and the captures from
# tests/data/ and tests/data/3.*/ that it reads. Fails on the first crash, printing where the crashing input is.
#   scripts/fuzz.sh [SECONDS]        FUZZ_JOBS (default 2) builds in parallel; BUILD_DIR overrides build-fuzz.
set -euo pipefail

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [SECONDS]   (SECONDS per target, a positive whole number; got '$seconds')" >&2
  exit 64
fi
top="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$top/build-fuzz}"
data="$top/tests/data"
targets=(srvr mntr conf isro admin_json server_list duration ledger sidecar_request credentials zoo_cfg tls_files)

if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 -DZKVERIFY_FUZZ=ON >/dev/null
fi
cmake --build "$build" --target fuzz -j"${FUZZ_JOBS:-2}" >/dev/null

# The files matching each pattern in tests/data/ (3.8's captures) and tests/data/3.*/ (the other
# lines' fixtures); not every line has every kind (3.4 has no AdminServer).
captures_matching() {
  local pattern file
  for pattern in "$@"; do
    for file in "$data"/$pattern "$data"/3.*/$pattern; do [[ -f "$file" ]] && echo "$file"; done
  done
  return 0
}

# The captures each reader is fed in production.
captures_for() {
  case "$1" in
    srvr) captures_matching 'srvr_*.txt' 'stat_*.txt' 'ruok_*.txt' ;;
    mntr) captures_matching 'mntr_*.txt' ;;
    conf) captures_matching 'conf_*.txt' ;;
    isro) captures_matching 'isro_*.txt' ;;
    admin_json) captures_matching 'admin_*.json' ;;
    zoo_cfg) captures_matching 'zoo_cfg/*.cfg' 'zoo_cfg/dynamic/*' ;;
    tls_files) captures_matching 'tls/*.pem' 'tls/*.key' ;;
    *) ;;  # server lists, durations, ledgers, requests, credentials: the hand-written seeds only
  esac
}

work="$(mktemp -d "${TMPDIR:-/tmp}/zkverify-fuzz.XXXXXX")"
failed=""
for target in "${targets[@]}"; do
  corpus="$work/corpus-$target"
  artifacts="$work/crashes-$target"
  mkdir -p "$corpus" "$artifacts"
  [[ -d "$top/tests/fuzz/seeds/$target" ]] && cp "$top/tests/fuzz/seeds/$target"/* "$corpus"/ 2>/dev/null || true
  # Named by their path below tests/data/, so 3.5/srvr_leader.txt does not overwrite srvr_leader.txt.
  while read -r capture; do
    [[ -n "$capture" ]] && cp "$capture" "$corpus/$(echo "${capture#"$data"/}" | tr / _)"
  done < <(captures_for "$target")
  log="$work/$target.log"
  if "$build/fuzz_$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" >"$log" 2>&1; then
    echo "fuzz_$target: ok, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$') runs in ${seconds}s"
  else
    echo "fuzz_$target: FAILED (log: $log)" >&2
    grep -m5 -E 'ERROR|invariant failed|runtime error|SUMMARY' "$log" >&2 || true
    for crash in "$artifacts"/*; do
      [[ -e "$crash" ]] && echo "  crash input: $crash (replay: $build/fuzz_$target $crash)" >&2
    done
    failed="$failed $target"
  fi
done

if [[ -n "$failed" ]]; then
  echo "fuzz.sh: crashes in:$failed; inputs and logs kept in $work" >&2
  exit 1
fi
rm -rf "$work"
echo "fuzz.sh: ${#targets[@]} targets, ${seconds}s each, no crash"
