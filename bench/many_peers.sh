#!/usr/bin/env bash
# How zkverify quorum --no-write scales (a script, not a test): COUNT fake four-letter peers
# (bench/fake_peers.py, one process, asyncio) listed at once; each run must answer within
# --timeout 2s and stay under 64 MiB of resident memory (GNU time's maximum RSS).
#   bench/many_peers.sh [COUNT] [RUNS]      (default 200 peers, 5 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-200}
runs=${2:-5}

cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target zkverify >/dev/null
zkverify=$PWD/build-bench/zkverify

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-peers.XXXXXX")
mkfifo "$work/stdin"
/usr/bin/python3 bench/fake_peers.py "$count" <"$work/stdin" >"$work/servers" &
peers=$!
exec 3>"$work/stdin"  # the peers serve until this closes
trap 'exec 3>&-; wait "$peers" 2>/dev/null; rm -rf "$work"' EXIT
while [[ ! -s $work/servers ]]; do sleep 0.05; done
servers=$(cat "$work/servers")

echo "== zkverify quorum --no-write --timeout 2s, $count fake peers, $runs runs"
status=0
for ((i = 1; i <= runs; i++)); do
  set +e
  /usr/bin/time -f '%e %M' -o "$work/time" "$zkverify" quorum --no-write --timeout 2s --output json \
    --servers "$servers" >"$work/report.json" 2>"$work/stderr"
  code=$?
  set -e
  read -r seconds kib <"$work/time"
  judged=$(perl -MJSON::PP -0777 -ne 'my $r = decode_json($_); print scalar grep { !defined $_->{error} } @{$r->{servers}}' \
    "$work/report.json")
  verdict=$(perl -MJSON::PP -0777 -ne 'print decode_json($_)->{verdict}' "$work/report.json")
  ok=ok
  perl -e "exit !($seconds <= 2.0 && $kib < 64 * 1024)" || { ok=FAILED; status=1; }
  printf 'run %d: %6.0f ms, max RSS %5.1f MiB, exit %d (%s), %d/%d servers answered srvr: %s\n' "$i" \
    "$(perl -e "print $seconds*1000")" "$(perl -e "print $kib/1024")" "$code" "$verdict" "$judged" "$count" "$ok"
done
exit "$status"
