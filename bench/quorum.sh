#!/usr/bin/env bash
# Benchmark (a script, not a test): how long `zkverify quorum` takes on a healthy 5-server lab,
# against what operators use today, all measured in the same run with hyperfine; medians and ratios
# against the `echo srvr | nc` loop. Then the same with one server paused (SIGSTOP), where the
# total time should track --timeout.
#   bench/quorum.sh [RUNS]      (default 30 runs per command)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}

scripts/install-deps.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target zkverify >/dev/null
zkverify=$PWD/build-bench/zkverify

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-bench.XXXXXX")
trap 'tests/lab/zklab down "$work/lab"; rm -rf "$work"' EXIT
tests/lab/zklab up "$work/lab" >/dev/null
servers=$(tests/lab/zklab servers "$work/lab")
ports=$(tr ',' '\n' <<<"$servers" | sed 's/.*://' | paste -sd' ')
first_port=${ports%% *}

medians() {  # NAME<TAB>median seconds, from hyperfine's JSON
  perl -MJSON::PP -0777 -ne 'for (@{decode_json($_)->{results}}) { printf "%s\t%.6f\n", $_->{command}, $_->{median} }' "$1"
}

echo "== healthy ensemble, $runs runs each"
hyperfine --style basic --warmup 3 --runs "$runs" --export-json "$work/healthy.json" \
  -n 'echo srvr | nc, 5 servers' "for p in $ports; do echo srvr | nc -w 2 127.0.0.1 \$p >/dev/null; done" \
  -n 'zkverify quorum --no-write' "$zkverify quorum --servers $servers --no-write" \
  -n 'zkverify quorum' "$zkverify quorum --servers $servers" >/dev/null
hyperfine --style basic --warmup 1 --runs "$(((runs + 2) / 3))" --export-json "$work/zkcli.json" \
  -n 'zkCli.sh -server ONE ls /' "/usr/share/zookeeper/bin/zkCli.sh -server 127.0.0.1:$first_port ls / >/dev/null 2>&1" \
  >/dev/null

paused=zoo-0
[[ $(tests/lab/zklab leader "$work/lab") == zoo-0 ]] && paused=zoo-1
tests/lab/zklab pause "$work/lab" "$paused"
echo "== $paused paused (SIGSTOP)"
hyperfine --style basic --runs 5 -i --export-json "$work/paused.json" \
  -n 'zkverify quorum --timeout 1s, one paused' "$zkverify quorum --servers $servers --timeout 1s" \
  -n 'zkverify quorum --timeout 5s, one paused' "$zkverify quorum --servers $servers --timeout 5s" >/dev/null
tests/lab/zklab resume "$work/lab" "$paused"

baseline=$(medians "$work/healthy.json" | head -1 | cut -f2)
printf '\n%-45s %12s %12s\n' "command" "median" "vs nc loop"
for file in healthy zkcli paused; do
  medians "$work/$file.json" | while IFS=$'\t' read -r name median; do
    printf '%-45s %10.1fms %11.2fx\n' "$name" "$(perl -e "print $median*1000")" "$(perl -e "print $median/$baseline")"
  done
done
