#!/usr/bin/env bash
# Benchmark (a script, not a test): what `--clients kafka` adds to the gate. A healthy 5-server lab
# with three "brokers" (kazoo sessions holding /brokers/ids/1..3, one of them /controller); then
# `zkverify quorum` and `zkverify quorum --clients kafka` measured in the same run with hyperfine
# (two runs in opposite orders, medians), and their ratio. The lab is warmed up first (30 s).
#   bench/clients.sh [RUNS]      (default 30 runs per command)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}

cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target zkverify >/dev/null
zkverify=$PWD/build-bench/zkverify

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-bench.XXXXXX")
lab=$work/lab
brokers=
trap '[[ -n $brokers ]] && kill "$brokers" 2>/dev/null; tests/lab/zklab down "$lab" >/dev/null; rm -rf "$work"' EXIT
tests/lab/zklab up "$lab" >/dev/null
servers=$(tests/lab/zklab servers "$lab")
hosts=$(tr ',' '\n' <<<"$servers" | sed 's/^[^=]*=//' | paste -sd,)

# The brokers: one Python process, three sessions, until it is killed (Debian's python3 has kazoo);
# each on a server of its own, as maxClientCnxns=3 counts zkverify's two connections a server too.
/usr/bin/python3 - "$hosts" >"$work/brokers.out" 2>&1 <<'PY' &
import sys, time
from kazoo.client import KazooClient
clients = []
for broker in (1, 2, 3):
    client = KazooClient(hosts=sys.argv[1].split(",")[broker - 1], timeout=10)
    client.start(timeout=30)
    client.ensure_path("/brokers/ids")
    client.create(f"/brokers/ids/{broker}", b'{"host":"127.0.0.1","port":9092}', ephemeral=True)
    if broker == 1:
        client.create("/controller", b'{"version":1,"brokerid":1,"timestamp":"0"}', ephemeral=True)
        client.create("/controller_epoch", b"1")
    clients.append(client)
print("registered", flush=True)
time.sleep(3600)
PY
brokers=$!
for ((i = 0; i < 300; i++)); do grep -q registered "$work/brokers.out" && break; sleep 0.1; done
grep -q registered "$work/brokers.out" || { cat "$work/brokers.out" >&2; exit 1; }

plain="$zkverify quorum --servers $servers"
with="$zkverify quorum --servers $servers --clients kafka"
until=$((SECONDS + 30))
while ((SECONDS < until)); do $plain >/dev/null; $with >/dev/null; done
half=$(((runs + 1) / 2))
hyperfine --style basic -N --warmup 3 --runs "$half" --export-json "$work/a.json" \
  -n 'zkverify quorum' "$plain" -n 'zkverify quorum --clients kafka' "$with" >/dev/null
hyperfine --style basic -N --warmup 3 --runs "$half" --export-json "$work/b.json" \
  -n 'zkverify quorum --clients kafka' "$with" -n 'zkverify quorum' "$plain" >/dev/null
perl -MJSON::PP -0777 -e '
  my %t;
  for my $file (@ARGV) {
    open my $in, "<", $file or die "$file: $!";
    push @{$t{$_->{command}}}, @{$_->{times}} for @{decode_json(do { local $/; <$in> })->{results}};
  }
  my %median;
  for my $name (sort keys %t) {
    my @s = sort { $a <=> $b } @{$t{$name}};
    $median{$name} = @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2;
    printf "%-34s median %6.1f ms (%d runs)\n", $name, $median{$name} * 1000, scalar @s;
  }
  printf "ratio --clients kafka / plain: %.2f\n", $median{"zkverify quorum --clients kafka"} / $median{"zkverify quorum"};
' "$work/a.json" "$work/b.json"
