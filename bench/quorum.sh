#!/usr/bin/env bash
# Benchmark (a script, not a test): how long `zkverify quorum` takes on a healthy 5-server lab,
# against a Python client doing less (bench/kazoo_round_trip.py: per server in turn a session, one
# ephemeral-sequential znode, sync, read, close) and what operators use today (`echo srvr | nc`,
# zkCli.sh), all measured in the same run with hyperfine; medians, and ratios to the kazoo script.
# Then with one server paused (SIGSTOP), where the total time should track --timeout; then on a
# 7-server lab (5 voters + 2 observers): all 7 listed against its 5 voters listed, in one run.
#   bench/quorum.sh [RUNS]      (default 30 runs per command)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}

scripts/install-deps.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target zkverify >/dev/null
zkverify=$PWD/build-bench/zkverify
kazoo="/usr/bin/python3 $PWD/bench/kazoo_round_trip.py"  # Debian's python3: it has python3-kazoo

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-bench.XXXXXX")
lab=$work/lab
trap 'tests/lab/zklab down "$lab"; rm -rf "$work"' EXIT
tests/lab/zklab up "$lab" >/dev/null
servers=$(tests/lab/zklab servers "$lab")
ports=$(tr ',' '\n' <<<"$servers" | sed 's/.*://' | paste -sd' ')
first_port=${ports%% *}

medians() {  # NAME<TAB>median seconds, from hyperfine's JSON
  perl -MJSON::PP -0777 -ne 'for (@{decode_json($_)->{results}}) { printf "%s\t%.6f\n", $_->{command}, $_->{median} }' "$1"
}
median_of() {  # the median of the command NAME in FILE
  medians "$1" | awk -F'\t' -v name="$2" '$1 == name { print $2 }'
}

echo "== healthy ensemble, $runs runs each"
hyperfine --style basic --warmup 3 --runs "$runs" --export-json "$work/healthy.json" \
  -n 'kazoo script (session, create, sync, get, close per server)' "$kazoo $servers" \
  -n 'echo srvr | nc, 5 servers' "for p in $ports; do echo srvr | nc -w 2 127.0.0.1 \$p >/dev/null; done" \
  -n 'zkverify quorum --no-write' "$zkverify quorum --servers $servers --no-write" \
  -n 'zkverify quorum' "$zkverify quorum --servers $servers" >/dev/null
hyperfine --style basic --warmup 1 --runs "$(((runs + 2) / 3))" --export-json "$work/zkcli.json" \
  -n 'zkCli.sh -server ONE ls /' "/usr/share/zookeeper/bin/zkCli.sh -server 127.0.0.1:$first_port ls / >/dev/null 2>&1" \
  >/dev/null

paused=zoo-0
[[ $(tests/lab/zklab leader "$lab") == zoo-0 ]] && paused=zoo-1
tests/lab/zklab pause "$lab" "$paused"
echo "== $paused paused (SIGSTOP)"
hyperfine --style basic --runs 5 -i --export-json "$work/paused.json" \
  -n 'zkverify quorum --timeout 1s, one paused' "$zkverify quorum --servers $servers --timeout 1s" \
  -n 'zkverify quorum --timeout 5s, one paused' "$zkverify quorum --servers $servers --timeout 5s" >/dev/null
tests/lab/zklab resume "$lab" "$paused"
tests/lab/zklab down "$lab" >/dev/null

# One lab at a time: the 7-server lab replaces the 5-server one. Its 5 voters listed alone are the
# "5 servers" of the comparison (same lab, same run); the unlisted observers make that run degraded,
# hence -i, but it does the same work per server.
echo "== 7 servers (5 voters + 2 observers), $runs runs each"
lab=$work/lab7
tests/lab/zklab up "$lab" --names pzoo-0,pzoo-1,pzoo-2,zoo-0,zoo-1,obs-0,obs-1 --observers 2 >/dev/null
servers7=$(tests/lab/zklab servers "$lab")
voters=$(tr ',' '\n' <<<"$servers7" | head -5 | paste -sd,)
hyperfine --style basic --warmup 3 --runs "$runs" -i --export-json "$work/seven.json" \
  -n 'zkverify quorum, 7 servers' "$zkverify quorum --servers $servers7" \
  -n 'zkverify quorum, its 5 voters' "$zkverify quorum --servers $voters" \
  -n 'zkverify quorum --no-write, 7 servers' "$zkverify quorum --servers $servers7 --no-write" \
  -n 'zkverify quorum --no-write, its 5 voters' "$zkverify quorum --servers $voters --no-write" >/dev/null

kazoo_median=$(medians "$work/healthy.json" | head -1 | cut -f2)
printf '\n%-62s %10s %10s\n' "command" "median" "vs kazoo"
for file in healthy zkcli paused seven; do
  medians "$work/$file.json" | while IFS=$'\t' read -r name median; do
    printf '%-62s %8.1fms %9.2fx\n' "$name" "$(perl -e "print $median*1000")" "$(perl -e "print $median/$kazoo_median")"
  done
done
printf '\n%-62s %9.2fx\n' "7 servers / 5 voters (zkverify quorum)" \
  "$(perl -e "print $(median_of "$work/seven.json" 'zkverify quorum, 7 servers')/$(median_of "$work/seven.json" 'zkverify quorum, its 5 voters')")"
printf '%-62s %9.2fx\n' "7 servers / 5 voters (zkverify quorum --no-write)" \
  "$(perl -e "print $(median_of "$work/seven.json" 'zkverify quorum --no-write, 7 servers')/$(median_of "$work/seven.json" 'zkverify quorum --no-write, its 5 voters')")"
