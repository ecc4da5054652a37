#!/usr/bin/env bash
# Benchmark (a script, not a test): what SASL costs a gate, in one hyperfine run over three labs up
# at once (five servers each): a plain one; one that requires SASL with DIGEST-MD5 users (zklab up
# --sasl); and one whose servers take Kerberos from the lab's own KDC (zklab up --kerberos).
#   - the plain gate (the baseline);
#   - the DIGEST-MD5 gate (--sasl-user, --sasl-password-file);
#   - the Kerberos gate with a keytab (--sasl-keytab: its tickets fetched, and the principal's
#     expiry asked of the KDC, each run) and from a ticket cache (kinit beforehand: neither).
# Medians, and each against the plain gate. Each lab is warmed up for 20 s first (fresh JVMs
# interpret before they compile).
#   bench/sasl.sh [RUNS]      (default 20 runs per command)
#   ZKVERIFY=build/zkverify bench/sasl.sh    a Release binary already built (else build-bench's)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}

# shellcheck source=bench/binary.sh
source bench/binary.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-bench-sasl.XXXXXX")
trap 'for lab in plain digest kerberos; do tests/lab/zklab down "$work/$lab" 2>/dev/null || true; done; rm -rf "$work"' EXIT
tests/lab/zklab up "$work/plain" >/dev/null
tests/lab/zklab up "$work/digest" --sasl >/dev/null
tests/lab/zklab up "$work/kerberos" --kerberos >/dev/null
export KRB5_CONFIG=$work/kerberos/krb5/krb5.conf KRB5CCNAME=FILE:$work/ccache
keytab=$work/kerberos/krb5/zkverify.keytab
timeout 30 kinit -k -t "$keytab" zkverify@ZKLAB.TEST

plain="$zkverify quorum --servers $(tests/lab/zklab servers "$work/plain")"
digest="$zkverify quorum --servers $(tests/lab/zklab servers "$work/digest") --sasl-user kafka \
--sasl-password-file $work/digest/sasl/password"
kerberos="$zkverify quorum --servers $(tests/lab/zklab servers "$work/kerberos") --sasl-mechanism GSSAPI"
commands=(-n plain "$plain" -n DIGEST-MD5 "$digest" -n 'Kerberos, keytab' "$kerberos --sasl-keytab $keytab"
  -n 'Kerberos, ticket cache' "$kerberos")
# Each healthy, or the figures mean nothing (a lab just up may still be electing: a few tries).
for ((i = 2; i < ${#commands[@]}; i += 3)); do
  for try in 1 2 3 4 5 6 7 8 9 10; do ${commands[i]} >/dev/null && break; ((try < 10)) || exit 1; sleep 1; done
done
until=$((SECONDS + 20))
while ((SECONDS < until)); do
  for ((i = 2; i < ${#commands[@]}; i += 3)); do ${commands[i]} >/dev/null 2>&1 || true; done
done
hyperfine -N --style basic --runs "$runs" --export-json "$work/sasl.json" "${commands[@]}" >&2
perl -MJSON::PP -0777 -ne '
  my %m = map { $_->{command} => 1000 * $_->{median} } @{decode_json($_)->{results}};
  printf "%-24s median %7.1f ms  (%.2f x plain)\n", $_, $m{$_}, $m{$_} / $m{plain}
    for ("plain", "DIGEST-MD5", "Kerberos, keytab", "Kerberos, ticket cache");' "$work/sasl.json"
