#!/usr/bin/env bash
# The seed's flow and `roll`, N times each on one real lab, with a random delay in COMMAND: how many
# steps failed and why, how many writes were lost and sessions expired. Expected: none of either.
#   bench/soak.sh [N]            N rounds (default 20) of: a watch running while each server in
#                                `order`'s order is wrapped in `step --restart NAME -- COMMAND` (no
#                                --state), then one `roll --state` of every server
#   ZKVERIFY=build/zkverify      the binary;  SOAK_MINUTES=90  the bound of the whole soak
# Prints one line per step that failed (its findings), then the totals; exits 1 if any step failed,
# a write was lost or a session expired, 2 if the soak ran out of time.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-20}
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/soak.sh [N]   (N rounds, a positive whole number)" >&2; exit 64; }
zkverify=$(realpath "${ZKVERIFY:-build/zkverify}")
[[ -x $zkverify ]] || { echo "soak: $zkverify is not an executable (set ZKVERIFY)" >&2; exit 64; }
deadline=$((SECONDS + ${SOAK_MINUTES:-90} * 60))
zklab=$PWD/tests/lab/zklab
python=/usr/bin/python3  # Debian's, whatever python3 is first on PATH

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-soak.XXXXXX")
lab=$work/lab
cleanup() {
  [[ -n ${watch_pid:-} ]] && kill -TERM "$watch_pid" 2>/dev/null || true
  [[ -e $lab/names ]] && "$zklab" down "$lab" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
# Two zkverify processes share this host's connections to each server: the seed flow's watch and
# step, each within 3 (docs/upgrade.md, Connections). Their sum needs maxClientCnxns=6; under the
# lab's default 3 a server refuses the step's checks for as long as the watch holds its sessions.
"$zklab" up "$lab" --max-client-cnxns 6 >"$work/lab.log" 2>&1 || { cat "$work/lab.log" >&2; exit 1; }
servers=$("$zklab" servers "$lab")

# COMMAND for NAME: a restart after a random pause of up to a second, as a person's would come.
restart() { echo "sleep 0.$((RANDOM % 10)); exec $zklab restart $lab $1"; }

steps=0 failed=0 lost=0 expired=0
# Counts one step's JSON (step's, or one of roll's): its verdict and, if not healthy, why.
count_step() {
  local json=$1 what=$2  # and $3: the step's stderr, shown when it failed
  steps=$((steps + 1))
  read -r verdict why < <("$python" -c '
import json, sys
step = json.load(open(sys.argv[1]))
codes = sorted({f["code"] for f in step.get("findings", []) + step.get("check_findings", []) if f["severity"] != "info"})
print(step.get("verdict", "none"), ",".join(codes) or "-")' "$json")
  if [[ $verdict != healthy ]]; then
    failed=$((failed + 1))
    echo "soak: $what: $verdict ($why)"
    [[ -n ${3:-} ]] && sed 's/^/    /' "$3" | tail -n 5  # what step said on stderr, last lines
  fi
}

# Adds a watch summary's (or a roll's) lost writes and expired sessions.
count_watch() {
  read -r l e < <("$python" -c '
import json, sys
totals = json.loads(sys.argv[1])
print(totals["writes_lost"], totals["sessions_expired"])' "$1")
  lost=$((lost + l)) expired=$((expired + e))
}

seed_flow() {
  local round=$1 name
  "$zkverify" watch --servers "$servers" --output json >"$work/watch.json" 2>"$work/watch.err" &
  watch_pid=$!
  for _ in $(seq 100); do grep -q 'started:' "$work/watch.err" && break; sleep 0.1; done
  grep -q 'started:' "$work/watch.err" || { echo "soak: round $round: the watch did not start" >&2; cat "$work/watch.err" >&2; exit 1; }
  for name in $("$zkverify" order --servers "$servers"); do
    local out=$work/round$round-step-$name
    timeout 600 "$zkverify" step --servers "$servers" --restart "$name" --output json -- sh -c "$(restart "$name")" \
      >"$out.json" 2>"$out.err" || true
    [[ -s $out.json ]] || { echo "soak: round $round: step $name printed nothing" >&2; cat "$out.err" >&2; exit 1; }
    count_step "$out.json" "round $round seed flow, step $name" "$out.err"
  done
  kill -INT "$watch_pid"
  wait "$watch_pid" || true
  watch_pid=""
  count_watch "$(grep '"event": *"summary"' "$work/watch.json" | tail -1)"
}

roll_once() {
  local round=$1 i count
  rm -f "$work/roll.state"
  timeout 1800 "$zkverify" roll --servers "$servers" --state "$work/roll.state" --output json -- \
    sh -c "sleep 0.\$((\$\$ % 10)); exec $zklab restart $lab {}" >"$work/roll.json" 2>"$work/roll.err" || true
  [[ -s $work/roll.json ]] || { echo "soak: round $round: roll printed nothing" >&2; cat "$work/roll.err" >&2; exit 1; }
  count=$("$python" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["steps"]))' "$work/roll.json")
  for ((i = 0; i < count; i++)); do
    "$python" -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["steps"][int(sys.argv[2])], sys.stdout)' \
      "$work/roll.json" "$i" >"$work/roll-step.json"
    count_step "$work/roll-step.json" "round $round roll, step $((i + 1))"
  done
  count_watch "$("$python" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["watch"]))' "$work/roll.json")"
}

started=$SECONDS
for ((round = 1; round <= rounds; round++)); do
  if ((SECONDS >= deadline)); then
    echo "soak: out of time after $((round - 1)) of $rounds rounds (SOAK_MINUTES=${SOAK_MINUTES:-90})"
    exit 2
  fi
  seed_flow "$round"
  roll_once "$round"
  echo "soak: round $round/$rounds: $steps steps, $failed failed, $lost writes lost, $expired sessions expired ($((SECONDS - started))s)"
done
echo "soak: $rounds rounds in $((SECONDS - started))s: $steps steps, $failed failed; $lost acknowledged writes lost; $expired sessions expired"
((failed == 0 && lost == 0 && expired == 0))
