#!/usr/bin/env bash
# Benchmark (a script, not a test): `zkverify serve` on a healthy 5-server lab: resident memory
# (VmRSS, and its peak VmHWM) after N cycles, and CPU time (user + system) per cycle, measured from
# /proc between cycle 5 and cycle N so start-up is not counted. Also the /readyz latency with 300
# idle connections open. RSS is also read at every tenth of the run: a sidecar lives for weeks, so its
# memory must not grow with the cycles (issue 42: 10,000 cycles, flat). Then, on the same lab (each
# server on a plain and a TLS port), the same sidecar over TLS for as many cycles: its CPU per cycle
# and the ratio to the plain one's (issue 44's goal: at most 1.5).
#   bench/serve.sh [CYCLES]     (default 100)
#   INTERVAL=10ms bench/serve.sh 10000    a shorter --interval (default 100ms) for a long run
#   ZKVERIFY=path/to/zkverify bench/serve.sh    uses that binary instead of building build-bench
set -euo pipefail
cd "$(dirname "$0")/.."
cycles=${1:-100}

if [[ -z ${ZKVERIFY:-} ]]; then
  cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-bench -j "$(nproc)" --target zkverify >/dev/null
  ZKVERIFY=$PWD/build-bench/zkverify
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-bench-serve.XXXXXX")
pid=
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  tests/lab/zklab down "$work/lab" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
tests/lab/zklab up "$work/lab" --tls >/dev/null
servers=$(tests/lab/zklab servers "$work/lab")
tls=$(tests/lab/zklab tls-dir "$work/lab")
port=$(perl -MIO::Socket::IP -e 'print IO::Socket::IP->new(Listen => 1, LocalHost => "127.0.0.1", LocalPort => 0)->sockport')

start_serve() {  # SERVERS [OPTIONS...]: a sidecar for pzoo-0 on $port, its pid in $pid
  local list=$1
  shift
  "$ZKVERIFY" serve --servers "$list" --local pzoo-0 --listen "127.0.0.1:$port" --interval "${INTERVAL:-100ms}" \
    --timeout 2s "$@" 2>"$work/serve.log" &
  pid=$!
}
start_serve "$servers"

cycles_done() { curl -s --max-time 2 "http://127.0.0.1:$port/metrics" | awk '/^zkverify_cycles_total /{print $2}'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
wait_for_cycles() {  # until at least $1 cycles ended, or 5 minutes more than 100 ms a cycle
  local give_up=$((SECONDS + 300 + $1 / 10))
  while true; do
    local done_now; done_now=$(cycles_done || true)
    [[ -n $done_now && $done_now -ge $1 ]] && return 0
    (( SECONDS > give_up )) && { echo "serve did not reach $1 cycles" >&2; cat "$work/serve.log" >&2; exit 1; }
    sleep 0.05
  done
}

wait_for_cycles 5
start_cycles=$(cycles_done); start_ticks=$(cpu_ticks)
rss_at=()  # "cycles:KiB" at each tenth of the run
for tenth in $(seq 1 10); do
  wait_for_cycles $((cycles * tenth / 10))
  rss_at+=("$(cycles_done):$(awk '/^VmRSS/{print $2}' "/proc/$pid/status")")
done
end_cycles=$(cycles_done); end_ticks=$(cpu_ticks)
rss=$(awk '/^VmRSS/{print $2}' "/proc/$pid/status")
hwm=$(awk '/^VmHWM/{print $2}' "/proc/$pid/status")
hz=$(getconf CLK_TCK)
ready=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/readyz")

# /readyz while 300 idle connections are open (the sidecar drops the oldest beyond its cap).
idle=$(perl -MIO::Socket::IP -MTime::HiRes=time -e '
  my @idle = map { IO::Socket::IP->new(PeerHost => "127.0.0.1", PeerPort => $ARGV[0]) or die "connect: $@" } 1 .. 300;
  my $t = time; my $s = IO::Socket::IP->new(PeerHost => "127.0.0.1", PeerPort => $ARGV[0]) or die;
  print $s "GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"; my $line = <$s>;
  printf "%.1f ms (%s)", (time - $t) * 1000, $line =~ s/\r\n//r;' "$port")

printf 'zkverify serve, 5 servers, --interval %s (%s)\n' "${INTERVAL:-100ms}" "$ZKVERIFY"
printf '  cycles                 %d (CPU measured over cycles %d..%d)\n' "$end_cycles" "$start_cycles" "$end_cycles"
printf '  RSS after %d cycles    %.1f MiB (peak %.1f MiB)\n' "$end_cycles" "$(perl -e "print $rss/1024")" "$(perl -e "print $hwm/1024")"
printf '  RSS at each tenth      %s\n' "$(for at in "${rss_at[@]}"; do
  perl -e 'my ($c, $k) = split /:/, $ARGV[0]; printf "%d: %.1f  ", $c, $k / 1024' "$at"; done)MiB"
first=${rss_at[0]#*:} last=${rss_at[9]#*:}
printf '  RSS, last tenth / first tenth   %.3f (%+d KiB)\n' "$(perl -e "print $last/$first")" $((last - first))
printf '  CPU per cycle          %.2f ms\n' "$(perl -e "print (($end_ticks - $start_ticks) * 1000 / $hz / ($end_cycles - $start_cycles))")"
printf '  /readyz                %s\n' "$ready"
printf '  /readyz, 300 idle connections open: %s\n' "$idle"

# The same over TLS, once the plain sidecar has gone (the port is free again).
kill "$pid" && wait "$pid" 2>/dev/null || true
start_serve "$(tests/lab/zklab secure-servers "$work/lab")" --tls-ca "$tls/ca.pem" --tls-cert "$tls/client.pem" \
  --tls-key "$tls/client.key"
wait_for_cycles 5
tls_start_cycles=$(cycles_done); tls_start_ticks=$(cpu_ticks)
wait_for_cycles $((tls_start_cycles + end_cycles - start_cycles))
tls_end_cycles=$(cycles_done); tls_end_ticks=$(cpu_ticks)
plain_ms=$(perl -e "print (($end_ticks - $start_ticks) * 1000 / $hz / ($end_cycles - $start_cycles))")
tls_ms=$(perl -e "print (($tls_end_ticks - $tls_start_ticks) * 1000 / $hz / ($tls_end_cycles - $tls_start_cycles))")
printf '  CPU per cycle over TLS %.2f ms (%d cycles): TLS/plain %.2f (goal <= 1.5)\n' "$tls_ms" \
  $((tls_end_cycles - tls_start_cycles)) "$(perl -e "print $tls_ms / $plain_ms")"
