#!/usr/bin/env bash
# The demo: starts a local 5-server ensemble shaped like kubernetes-kafka's (pzoo-0..2 persistent,
# zoo-0..1 ephemeral), runs `zkverify quorum` on it, then shows why `ruok` is not a readiness check:
# with three servers stopped the others still say imok, and zkverify says critical. Stops everything.
#   scripts/demo.sh              the demo
#   scripts/demo.sh --upgrade    then a real upgrade: a new lab on 3.8.0 rolled to ZooKeeper 3.9.3
#                                (trixie's, fetched by scripts/fetch-zookeeper.sh) by `zkverify roll`,
#                                with its HTML report written to ./roll-upgrade.html
#   DEMO_BINARY=PATH scripts/demo.sh [--upgrade]
#                                the demo on that zkverify binary: nothing installed, nothing built
#                                (the test command runs it so on the binary it tested: tests/demo/test-demo.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
upgrade=0
case ${1:-} in
  "") ;;
  --upgrade) upgrade=1 ;;
  *) echo "usage: scripts/demo.sh [--upgrade]" >&2; exit 64 ;;
esac

zkverify=${DEMO_BINARY:-build/zkverify}
if [[ -z ${DEMO_BINARY:-} ]]; then
  scripts/install-deps.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j "$(nproc)" --target zkverify >/dev/null
fi

lab=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-demo.XXXXXX")
# Stops the labs that were started (--upgrade's only exists with it) and always removes the directory:
# under set -e, a failing command here would end the trap before the rm and turn the demo's exit into 1.
cleanup() {
  local dir
  for dir in "$lab/lab" "$lab/upgrade"; do
    if [[ -e $dir/names ]]; then tests/lab/zklab down "$dir" || true; fi
  done
  rm -rf "$lab"
}
trap cleanup EXIT

echo "== starting 5 ZooKeeper 3.8.0 servers on 127.0.0.1 (lab in $lab)"
tests/lab/zklab up "$lab/lab"
servers=$(tests/lab/zklab servers "$lab/lab")

echo
echo "\$ zkverify quorum --servers $servers"
set +e
"$zkverify" quorum --servers "$servers"
healthy=$?
echo "(exit $healthy)"

echo
echo "== stopping pzoo-0, pzoo-1, pzoo-2: quorum is lost"
for name in pzoo-0 pzoo-1 pzoo-2; do tests/lab/zklab stop "$lab/lab" "$name"; done
port=${servers##*zoo-1=127.0.0.1:}
# printf, not echo: ZooKeeper reads the four letters and closes; an unread newline makes that close a
# reset, which can discard "imok" before nc reads it (3 times in 10 here).
echo "\$ printf ruok | nc 127.0.0.1 $port   # the usual readiness probe"
printf ruok | nc -w 2 127.0.0.1 "$port"; echo
echo "\$ zkverify quorum --servers ... --timeout 2s"
"$zkverify" quorum --servers "$servers" --timeout 2s
lost=$?
echo "(exit $lost)"
set -e

# The demo itself succeeds when zkverify told the two situations apart.
[[ $healthy -eq 0 && $lost -eq 2 ]] || exit 1
((upgrade)) || exit 0
tests/lab/zklab down "$lab/lab"

echo
echo "== a real upgrade: 5 servers on 3.8.0, rolled to 3.9.3 one at a time, leader last"
scripts/fetch-zookeeper.sh 3.9 >/dev/null
tests/lab/zklab up "$lab/upgrade"
servers=$(tests/lab/zklab servers "$lab/upgrade")
echo "\$ zkverify roll --servers ... --state ledger.json --report roll-upgrade.html -- tests/lab/zklab upgrade LAB {} 3.9.3"
"$zkverify" roll --servers "$servers" --state "$lab/ledger.json" --step-timeout 2m --report roll-upgrade.html -- \
  tests/lab/zklab upgrade "$lab/upgrade" {} 3.9.3 | grep -v '^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T' # the watch's events
tests/lab/zklab versions "$lab/upgrade"
echo "the roll's report: $PWD/roll-upgrade.html"
