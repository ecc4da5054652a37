#!/usr/bin/env bash
# The alerting rules end to end: a real Prometheus (Debian's) loads deploy/prometheus/zkverify-rules.yml
# (only its `for:` durations shortened to 5s; the expressions are checked to be the shipped ones) and
# scrapes, as one job, real `zkverify serve` sidecars of TWO real ensembles from the lab (3 servers
# each, --ensemble a and b). Then:
#   - two of ensemble a's servers stop: ZkverifyNoQuorum fires for ensemble="a" (and never for b);
#   - they start again: it resolves;
#   - one sidecar of b is killed: ZkverifySidecarDown fires for its instance.
#   tests/prometheus/test-alerts-live.sh ZKVERIFY_BIN
# Prints each wait's measured time, and "test-alerts-live: N passed, 0 failed" when all passed; the
# first failure is FAIL: ... (exit 1). Everything it starts it stops by pid, on any exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
zkverify=${1:?usage: test-alerts-live.sh ZKVERIFY_BIN}
zklab=$top/tests/lab/zklab
work=$(mktemp -d "${TMPDIR:-/tmp}/alerts-live.XXXXXX")
passed=0
pids=()

cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do timeout 10 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; done
  "$zklab" down "$work/a" 2>/dev/null || true
  "$zklab" down "$work/b" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  echo "test-alerts-live: $passed passed, 1 failed"
  exit 1
}
pass() {
  passed=$((passed + 1))
  echo "ok: $*"
}
free_port() { perl -MIO::Socket::IP -e 'print IO::Socket::IP->new(Listen => 1, LocalHost => "127.0.0.1", LocalPort => 0)->sockport'; }
now_ms() { date +%s%3N; }

# The alerts Prometheus holds now, as lines "STATE NAME ENSEMBLE INSTANCE".
alerts() {
  curl -s --max-time 2 "http://127.0.0.1:$prometheus_port/api/v1/alerts" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    print(a["state"], l["alertname"], l.get("ensemble", "-"), l.get("instance", "-"))' 2>/dev/null || true
}

# wait_for SECONDS WHAT COMMAND...: runs COMMAND every 0.5 s until it succeeds; prints the time taken.
waited_ms=0
wait_for() {
  local limit=$1 what=$2; shift 2
  local started; started=$(now_ms)
  until "$@"; do
    (($(now_ms) - started < limit * 1000)) || fail "$what: not within ${limit}s"
    sleep 0.5
  done
  waited_ms=$(($(now_ms) - started))
}

command -v prometheus >/dev/null || fail "prometheus is not installed (scripts/install-deps.sh installs it)"

# Two ensembles of three, each with a sidecar per server.
targets=""
for ensemble in a b; do
  "$zklab" up "$work/$ensemble" --names "$ensemble-0,$ensemble-1,$ensemble-2" >"$work/$ensemble.up.log" 2>&1 ||
    fail "zklab up $ensemble: $(tail -3 "$work/$ensemble.up.log")"
  servers=$("$zklab" servers "$work/$ensemble")
  for i in 0 1 2; do
    port=$(free_port)
    "$zkverify" serve --servers "$servers" --local "$ensemble-$i" --listen "127.0.0.1:$port" --interval 1s \
      --timeout 2s --ensemble "$ensemble" >"$work/serve-$ensemble-$i.log" 2>&1 &
    pids+=($!)
    echo "$!" >"$work/serve-$ensemble-$i.pid"
    echo "127.0.0.1:$port" >"$work/serve-$ensemble-$i.target"
    targets+="${targets:+, }'127.0.0.1:$port'"
  done
done

# The shipped rules with every `for:` at 5s, and nothing else changed.
python3 - "$top/deploy/prometheus/zkverify-rules.yml" "$work/rules.yml" <<'PY' || fail "the rules' copy differs from the shipped rules beyond for:"
import re, sys, yaml
text = open(sys.argv[1]).read()
short = re.sub(r"(?m)^(\s+for: )\S+$", r"\g<1>5s", text)
def without_for(t):
    groups = yaml.safe_load(t)["groups"]
    return [{k: v for k, v in rule.items() if k != "for"} for g in groups for rule in g["rules"]]
assert without_for(text) == without_for(short)
assert all(r.get("for") == "5s" for g in yaml.safe_load(short)["groups"] for r in g["rules"] if "alert" in r)
open(sys.argv[2], "w").write(short)
PY
prometheus_port=$(free_port)
cat >"$work/prometheus.yml" <<CFG
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $work/rules.yml
scrape_configs:
  - job_name: zkverify
    static_configs:
      - targets: [$targets]
CFG
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prometheus_port" --log.level=warn >"$work/prometheus.log" 2>&1 &
pids+=($!)

all_up() {
  [[ $(curl -s --max-time 2 "http://127.0.0.1:$prometheus_port/api/v1/targets" | python3 -c '
import json, sys
print(sum(t["health"] == "up" for t in json.load(sys.stdin)["data"]["activeTargets"]))' 2>/dev/null) == 6 ]]
}
wait_for 60 "Prometheus scrapes the 6 sidecars" all_up
pass "Prometheus scrapes the 6 sidecars, one job (${waited_ms} ms)"
ready_everywhere() { ! alerts | grep -q . && curl -s --max-time 2 "http://127.0.0.1:$prometheus_port/api/v1/query?query=sum(zkverify_local_ready)" | grep -q '"6"'; }
wait_for 60 "every sidecar ready, no alert" ready_everywhere
pass "every sidecar ready, no alert pending or firing (${waited_ms} ms)"

# Ensemble a loses its quorum.
"$zklab" stop "$work/a" a-0
"$zklab" stop "$work/a" a-1
no_quorum_a() {
  local now; now=$(alerts)
  grep -q '^firing ZkverifyNoQuorum b ' <<<"$now" && fail "ZkverifyNoQuorum fired for ensemble b, which kept its quorum"
  grep -q '^firing ZkverifyNoQuorum a ' <<<"$now"
}
# The sidecars see it within a cycle (1s + 2s timeout), Prometheus within a scrape (1s) and then holds
# it for `for:` (5s) with an evaluation each second.
wait_for 30 "ZkverifyNoQuorum firing for ensemble a" no_quorum_a
# Its budget: `for:` (5 s) plus two scrape intervals (2 s) plus the sidecars' own cycle that first sees
# it (an interval and its timeout, 3 s).
((waited_ms <= 10000)) || fail "ZkverifyNoQuorum took ${waited_ms} ms to fire: more than for: 5s + 2 scrapes + 1 cycle"
pass "ZkverifyNoQuorum firing for ensemble=\"a\" $waited_ms ms after two of its servers stopped (for: 5s)"
[[ $(alerts | grep -c '^firing ZkverifyNoQuorum ') == 1 ]] || fail "ZkverifyNoQuorum fired more than once: $(alerts)"
pass "one ZkverifyNoQuorum, for ensemble a alone"

"$zklab" start "$work/a" a-0
"$zklab" start "$work/a" a-1
"$zklab" wait "$work/a" --timeout 60 >/dev/null || fail "ensemble a did not come back"
resolved_a() { ! alerts | grep -q ' ZkverifyNoQuorum '; }
wait_for 60 "ZkverifyNoQuorum resolved" resolved_a
pass "ZkverifyNoQuorum resolved $waited_ms ms after ensemble a served again"

# A sidecar of b goes away: its scrape fails.
kill "$(cat "$work/serve-b-2.pid")"
down_target=$(cat "$work/serve-b-2.target")
sidecar_down() { alerts | grep -q "^firing ZkverifySidecarDown - $down_target\$"; }
wait_for 30 "ZkverifySidecarDown firing for $down_target" sidecar_down
pass "ZkverifySidecarDown firing for $down_target $waited_ms ms after its sidecar was killed (for: 5s)"

echo "test-alerts-live: $passed passed, 0 failed"
