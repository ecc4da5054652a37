#!/usr/bin/env bash
# Benchmark (a script, not a test): the TLS gate against the plain gate on one mixed lab (every server
# with its plain clientPort and its TLS secureClientPort, ssl.clientAuth=need), in one hyperfine run:
# `zkverify quorum` over each, medians and their ratio (goal: TLS at most 1.5 times the plain gate).
# The lab is warmed up first with both commands for 20 s (fresh JVMs interpret before they compile).
#   bench/tls.sh [RUNS]      (default 30 runs per command)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}

scripts/install-deps.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target zkverify >/dev/null
zkverify=$PWD/build-bench/zkverify

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-bench-tls.XXXXXX")
lab=$work/lab
trap 'tests/lab/zklab down "$lab"; rm -rf "$work"' EXIT
tests/lab/zklab up "$lab" --tls >/dev/null
tls=$(tests/lab/zklab tls-dir "$lab")
plain="$zkverify quorum --servers $(tests/lab/zklab servers "$lab")"
secure="$zkverify quorum --servers $(tests/lab/zklab secure-servers "$lab") --tls-ca $tls/ca.pem \
--tls-cert $tls/client.pem --tls-key $tls/client.key"
$plain >/dev/null && $secure >/dev/null  # both healthy, or the figures mean nothing

until=$((SECONDS + 20))
while ((SECONDS < until)); do $plain >/dev/null || true; $secure >/dev/null || true; done
hyperfine --style basic --runs "$runs" --export-json "$work/tls.json" -n plain "$plain" -n tls "$secure" >&2
perl -MJSON::PP -0777 -ne '
  my %m = map { $_->{command} => $_->{median} } @{decode_json($_)->{results}};
  printf "plain gate median %.1f ms, TLS gate median %.1f ms: TLS/plain %.2f (goal <= 1.5)\n",
         1000 * $m{plain}, 1000 * $m{tls}, $m{tls} / $m{plain};' "$work/tls.json"
