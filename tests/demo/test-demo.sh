#!/usr/bin/env bash
# The README's demo, run as README shows it, on a built binary (DEMO_BINARY: nothing installed or
# built), and held to what README says it shows:
#   - `zkverify quorum` on the five servers prints the healthy line and the table (a row per server),
#     exit 0;
#   - with pzoo-0..2 stopped, `ruok` still answers imok, and `zkverify quorum` exits 2;
#   - the demo exits 0 and leaves nothing behind: its lab directory is gone and no JVM of it runs.
#   tests/demo/test-demo.sh ZKVERIFY_BIN              the plain demo (CTest "integration: demo", about 40 s)
#   tests/demo/test-demo.sh ZKVERIFY_BIN --upgrade    also the --upgrade demo: a roll 3.8.0 -> 3.9.3 with
#                                                     its HTML report (a longer tier, not in CI: about 3 min)
# Prints "ok: ..." per check, then "test-demo: N passed, 0 failed"; the first failure is FAIL: ... (exit 1).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
zkverify=${1:?usage: tests/demo/test-demo.sh ZKVERIFY_BIN [--upgrade]}
zkverify=$(cd "$(dirname "$zkverify")" && pwd)/$(basename "$zkverify")
upgrade=${2:-}
[[ -z $upgrade || $upgrade == --upgrade ]] || { echo "usage: tests/demo/test-demo.sh ZKVERIFY_BIN [--upgrade]" >&2; exit 64; }
work=$(mktemp -d "${TMPDIR:-/tmp}/test-demo.XXXXXX")
passed=0
lab=""

# The demo's lab, should the demo have left it (a failed check must not leave servers running).
cleanup() {
  if [[ -n $lab ]]; then
    local dir
    for dir in "$lab/lab" "$lab/upgrade"; do
      [[ -e $dir/names ]] && "$top/tests/lab/zklab" down "$dir" >/dev/null 2>&1 || true
    done
    rm -rf "$lab"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  echo "test-demo: $passed passed, 1 failed"
  exit 1
}
pass() {
  passed=$((passed + 1))
  echo "ok: $*"
}

# The demo, under a deadline; its lab below $work (TMPDIR), so that "nothing left behind" is checked
# where it would be left.
code=0
TMPDIR=$work DEMO_BINARY=$zkverify timeout -k 10 "$([[ -n $upgrade ]] && echo 600 || echo 240)" \
  "$top/scripts/demo.sh" $upgrade >"$work/out" 2>"$work/err" || code=$?
out=$(<"$work/out")
lab=$(sed -n 's/^== starting 5 ZooKeeper 3.8.0 servers on 127.0.0.1 (lab in \(.*\))$/\1/p' "$work/out")
show() { echo "--- the demo's stdout:"; cat "$work/out"; echo "--- its stderr:"; tail -n 30 "$work/err"; } >&2
[[ -n $lab ]] || { show; fail "the demo did not say where its lab is"; }
((code == 0)) || { show; fail "the demo exited $code, not 0"; }
pass "the demo exited 0"

# The healthy run: README's first line and table, then (exit 0).
healthy=$(awk '/^\$ zkverify quorum --servers / { on = 1 } on { print } on && /^\(exit / { exit }' "$work/out")
grep -qE '^healthy: leader (pzoo-[0-2]|zoo-[01]), 5/5 voters serving, round trip via (pzoo-[0-2]|zoo-[01]) read back on 5/5$' \
  <<<"$healthy" || { show; fail "no healthy line as README shows it"; }
grep -qE '^NAME +ID +MODE +ZXID +EPOCH +LATENCY +NOTE$' <<<"$healthy" || { show; fail "no table header as README shows it"; }
id=1
for name in pzoo-0 pzoo-1 pzoo-2 zoo-0 zoo-1; do
  grep -qE "^$name +$id +(leader|follower) +0x[0-9a-f]+ +[0-9]+ +[0-9.]+ms" <<<"$healthy" ||
    { show; fail "no table row for $name (id $id) as README shows it"; }
  id=$((id + 1))
done
[[ $(tail -n 1 <<<"$healthy") == "(exit 0)" ]] || { show; fail "the healthy quorum did not exit 0"; }
pass "healthy: README's line, a row per server (ids 1-5), exit 0"

# Three stopped: ruok still says imok, quorum exits 2.
lost=$(sed -n '/^== stopping pzoo-0, pzoo-1, pzoo-2/,$p' "$work/out")
grep -qx 'imok' <<<"$(sed -n '/^\$ printf ruok | nc/,/^\$ zkverify quorum/p' <<<"$lost")" ||
  { show; fail "ruok did not answer imok with the quorum lost"; }
grep -qx '(exit 2)' <<<"$lost" || { show; fail "zkverify quorum did not exit 2 with the quorum lost"; }
grep -q '^critical: ' <<<"$lost" || { show; fail "zkverify quorum did not say critical with the quorum lost"; }
pass "quorum lost: ruok answers imok, zkverify quorum says critical and exits 2"

if [[ -n $upgrade ]]; then
  versions=$(sed -n '/^pzoo-0 3\./,/^zoo-1 3\./p' "$work/out")
  [[ $(grep -c ' 3\.9\.3$' <<<"$versions") == 5 ]] || { show; fail "after the upgrade demo, not every server is on 3.9.3"; }
  [[ -s $top/roll-upgrade.html ]] || { show; fail "the upgrade demo wrote no roll-upgrade.html"; }
  rm -f "$top/roll-upgrade.html"
  pass "--upgrade: all five on 3.9.3 after the roll, its report written"
fi

# Nothing left behind: the lab's directory and every JVM started in it.
[[ ! -e $lab ]] || fail "the demo left its lab directory $lab"
if pgrep -f -- "$lab/" >/dev/null; then fail "the demo left processes running in $lab: $(pgrep -af -- "$lab/")"; fi
left=$(find "$work" -mindepth 1 -maxdepth 1 -name 'zkverify-demo.*')
[[ -z $left ]] || fail "the demo left $left"
lab=""
pass "nothing left behind: no lab directory, no JVM of it"
echo "test-demo: $passed passed, 0 failed"
