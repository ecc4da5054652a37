#!/usr/bin/env bash
# Benchmark (a script, not a test): what TLS costs a gate, on one mixed lab (every server with its
# plain clientPort and its TLS secureClientPort, ssl.clientAuth=need), all in one hyperfine run:
#   - the floors: the five servers' srvr read with `echo srvr | nc` (plain), and with one
#     `openssl s_client` each (one full TLS handshake per server, the client certificate presented:
#     the least that reading five TLS servers can cost from a new process), and the same resuming a
#     session saved by an earlier run (-sess_in: what a handshake costs once a server was met);
#   - `zkverify quorum` plain and over TLS, full and --no-write.
# Medians, and the ratios the goals are stated in: TLS gate / plain gate (goal <= 1.5) and TLS gate /
# TLS floor (goal <= 1.2), for the full gate and --no-write alike; what TLS adds to the gate against
# what it adds to the floor (issue 61: goal <= 1.2). Then the timeline (`quorum --trace`) of the
# median of RUNS more TLS gates: where that run's milliseconds went. The lab is warmed up first with
# every command for 20 s (fresh JVMs interpret before they compile).
#   bench/tls.sh [RUNS]      (default 30 runs per command)
#   ZKVERIFY=build/zkverify bench/tls.sh    a Release binary already built (else build-bench's)
#   BASELINE=path/to/zkverify bench/tls.sh  also that binary's TLS gates in the same run (before/after)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}

# shellcheck source=bench/binary.sh
source bench/binary.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-bench-tls.XXXXXX")
lab=$work/lab
trap 'tests/lab/zklab down "$lab"; rm -rf "$work"' EXIT
tests/lab/zklab up "$lab" --tls >/dev/null
tls=$(tests/lab/zklab tls-dir "$lab")
plain_servers=$(tests/lab/zklab servers "$lab")
secure_servers=$(tests/lab/zklab secure-servers "$lab")
plain_ports=$(tr ',' '\n' <<<"$plain_servers" | sed 's/.*://' | paste -sd' ')
secure_ports=$(tr ',' '\n' <<<"$secure_servers" | sed 's/.*://' | paste -sd' ')
credentials="--tls-ca $tls/ca.pem --tls-cert $tls/client.pem --tls-key $tls/client.key"

# The five at once, as the gate reads them; each client ends when the server closes after its reply.
nc_floor="for p in $plain_ports; do echo srvr | nc -w 2 127.0.0.1 \$p >/dev/null & done; wait"
s_client="openssl s_client -quiet -no_ign_eof -CAfile $tls/ca.pem -cert $tls/client.pem -key $tls/client.key"
tls_floor="for p in $secure_ports; do echo srvr | $s_client -connect 127.0.0.1:\$p >/dev/null 2>&1 & done; wait"
# One session saved per server (TLS 1.3 tickets arrive after the handshake: read to the end first).
for p in $secure_ports; do echo srvr | $s_client -connect "127.0.0.1:$p" -sess_out "$work/session-$p" >/dev/null 2>&1; done
resumed_floor="for p in $secure_ports; do echo srvr | $s_client -connect 127.0.0.1:\$p -sess_in $work/session-\$p \
>/dev/null 2>&1 & done; wait"
plain="$zkverify quorum --servers $plain_servers"
secure="$zkverify quorum --servers $secure_servers $credentials"
$plain >/dev/null && $secure >/dev/null  # both healthy, or the figures mean nothing
first=${secure_ports%% *}
resumed=$(echo srvr | openssl s_client -no_ign_eof -CAfile "$tls/ca.pem" -cert "$tls/client.pem" -key "$tls/client.key" \
  -connect "127.0.0.1:$first" -sess_in "$work/session-$first" 2>&1 | grep -c '^Reused' || true)
echo "a saved session resumed by the server: $([[ $resumed -gt 0 ]] && echo yes || echo 'no (the resumed floor is full handshakes)')" >&2

commands=(-n 'nc floor' "$nc_floor" -n 'TLS floor' "$tls_floor" -n 'TLS floor, resumed' "$resumed_floor"
  -n plain "$plain" -n tls "$secure" -n 'plain --no-write' "$plain --no-write" -n 'tls --no-write' "$secure --no-write")
if [[ -n ${BASELINE:-} ]]; then
  baseline="$(realpath "$BASELINE") quorum --servers $secure_servers $credentials"
  plain_baseline="$(realpath "$BASELINE") quorum --servers $plain_servers --no-write"
  $baseline >/dev/null
  commands+=(-n 'tls, baseline' "$baseline" -n 'tls --no-write, baseline' "$baseline --no-write"
    -n 'plain --no-write, baseline' "$plain_baseline")
fi
until=$((SECONDS + 20))
while ((SECONDS < until)); do
  for ((i = 2; i < ${#commands[@]}; i += 3)); do bash -c "${commands[i]}" >/dev/null 2>&1 || true; done
done
hyperfine --style basic --runs "$runs" --export-json "$work/tls.json" "${commands[@]}" >&2
perl -MJSON::PP -0777 -ne '
  my %m = map { $_->{command} => 1000 * $_->{median} } @{decode_json($_)->{results}};
  printf "%-20s median %7.1f ms\n", $_, $m{$_} for ("nc floor", "TLS floor", "TLS floor, resumed", "plain", "tls",
                                                    "plain --no-write", "tls --no-write");
  printf "TLS gate / plain gate %.2f (goal <= 1.5), --no-write %.2f\n", $m{tls} / $m{plain},
         $m{"tls --no-write"} / $m{"plain --no-write"};
  printf "TLS gate / TLS floor  %.2f (goal <= 1.2), --no-write %.2f\n", $m{tls} / $m{"TLS floor"},
         $m{"tls --no-write"} / $m{"TLS floor"};
  printf "TLS gate - plain gate = %.1f ms against TLS floor - nc floor = %.1f ms: %.2f (goal <= 1.2)\n",
         $m{tls} - $m{plain}, $m{"TLS floor"} - $m{"nc floor"},
         ($m{tls} - $m{plain}) / ($m{"TLS floor"} - $m{"nc floor"});
  printf "TLS floor / nc floor  %.2f; resumed TLS floor / TLS floor %.2f\n", $m{"TLS floor"} / $m{"nc floor"},
         $m{"TLS floor, resumed"} / $m{"TLS floor"};
  printf "baseline: TLS gate %.1f ms, --no-write %.1f ms; this binary / baseline %.2f, --no-write %.2f\n",
         $m{"tls, baseline"}, $m{"tls --no-write, baseline"}, $m{tls} / $m{"tls, baseline"},
         $m{"tls --no-write"} / $m{"tls --no-write, baseline"} if exists $m{"tls, baseline"};
  printf "baseline: plain --no-write %.1f ms; this binary / baseline %.2f\n", $m{"plain --no-write, baseline"},
         $m{"plain --no-write"} / $m{"plain --no-write, baseline"} if exists $m{"plain --no-write, baseline"};' "$work/tls.json"

# The median TLS gate's timeline, by its last step's end.
for ((i = 0; i < runs; i++)); do $secure --trace --output json >"$work/trace-$i.json" || true; done
python3 - "$work" "$runs" <<'PY'
import json, sys
work, runs = sys.argv[1], int(sys.argv[2])
traces = [json.load(open(f"{work}/trace-{i}.json")).get("timeline") or [] for i in range(runs)]
traces = sorted(((max(step["end_ms"] for step in t), t) for t in traces if t), key=lambda pair: pair[0])
if not traces:
    sys.exit("no timeline: the TLS gate did not run")
end, median = traces[len(traces) // 2]
print(f"timeline of the median TLS gate ({end:.1f} ms to its last step; ms from the start):")
width = max(len(step["server"] or "-") for step in median)
for step in median:
    took = step["end_ms"] - step["start_ms"]
    print(f"  {step['start_ms']:7.1f} - {step['end_ms']:7.1f} {took:6.1f}  {(step['server'] or '-'):<{width}}  {step['step']}")
PY
