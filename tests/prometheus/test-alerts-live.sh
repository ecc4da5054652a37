#!/usr/bin/env bash
# The alerting rules end to end: a real Prometheus (Debian's) loads deploy/prometheus/zkverify-rules.yml
# (only its `for:` durations shortened to 5s; the expressions are checked to be the shipped ones) and
# scrapes, as ONE job, real `zkverify serve` sidecars of TWO real ensembles from the lab (3 servers
# each, --ensemble a and b). Then:
#   - every zkverify_* series carries its ensemble label, 3 sidecars each, and no alert is active;
#   - two of ensemble a's servers stop: ZkverifyNoQuorum fires for ensemble="a" within for: plus two
#     scrape intervals plus one sidecar cycle, and never for b (no poll sees it, in any state, and
#     Prometheus's own ALERTS series never held it);
#   - they start again: it resolves, and so does every other alert;
#   - one sidecar of b is killed: ZkverifySidecarDown fires for its instance alone; restarted, it
#     resolves.
#   tests/prometheus/test-alerts-live.sh ZKVERIFY_BIN
# Needs prometheus (Debian's package), the lab's ZooKeeper, curl, perl, python3. About 45 s.
# Prints each wait's measured time, and "test-alerts-live: N passed, 0 failed" when all passed; the
# first failure is FAIL: ... with what Prometheus and the logs show (exit 1). Everything it starts it
# stops by pid, on any exit; the temporary directory (under $TMPDIR) goes too.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
zklab=$top/tests/lab/zklab
started_at=$SECONDS
passed=0
pids=()
work=""
prometheus_port=""

fail() {
  echo "FAIL: $*" >&2
  diagnose >&2 || true
  echo "test-alerts-live: $passed passed, 1 failed"
  exit 1
}
pass() {
  passed=$((passed + 1))
  echo "ok: $*"
}

# What Prometheus and the processes show, after a failure.
diagnose() {
  [[ -n $work && -d $work ]] || return 0
  if [[ -n $prometheus_port ]]; then
    echo "--- active alerts (state name ensemble instance):"
    curl -s --max-time 2 "http://127.0.0.1:$prometheus_port/api/v1/alerts" | python3 -c '
import json, sys
for a in json.load(sys.stdin)["data"]["alerts"]:
    l = a["labels"]
    print(" ", a["state"], l["alertname"], l.get("ensemble", "-"), l.get("instance", "-"), a.get("activeAt", ""))' || true
    echo "--- targets:"
    curl -s --max-time 2 "http://127.0.0.1:$prometheus_port/api/v1/targets" | python3 -c '
import json, sys
for t in json.load(sys.stdin)["data"]["activeTargets"]:
    print(" ", t["labels"]["instance"], t["health"], t.get("lastError", ""))' || true
  fi
  local f pid
  for f in "$work"/*.pid; do
    [[ -e $f ]] || continue
    pid=$(cat "$f")
    kill -0 "$pid" 2>/dev/null && continue
    echo "--- $(basename "$f" .pid) (pid $pid) is not running; the end of its log:"
    tail -5 "${f%.pid}.log" 2>/dev/null || true
  done
}

cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do timeout 10 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true; done
  if [[ -n $work ]]; then
    "$zklab" down "$work/a" 2>/dev/null || true
    "$zklab" down "$work/b" 2>/dev/null || true
    rm -rf "$work"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

zkverify=${1:-}
[[ -n $zkverify ]] || { echo "usage: tests/prometheus/test-alerts-live.sh ZKVERIFY_BIN" >&2; exit 64; }
[[ -x $zkverify ]] || fail "$zkverify is not an executable"
for tool in prometheus curl perl python3; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (scripts/install-deps.sh installs it)"
done
serve_help=$("$zkverify" serve --help 2>&1) || true
grep -q -- '--ensemble' <<<"$serve_help" ||
  fail "$zkverify serve has no --ensemble (its --help does not mention it): this test needs a zkverify with 'serve --ensemble NAME'"

work=$(mktemp -d "${TMPDIR:-/tmp}/alerts-live.XXXXXX")

# N distinct free ports on 127.0.0.1, all held open until every one is known (as zklab's free_ports).
free_ports() {
  perl -MIO::Socket::IP -e '
    my @s = map { IO::Socket::IP->new(Listen => 1, LocalHost => "127.0.0.1", LocalPort => 0, ReuseAddr => 1)
                  or die "bind: $@" } 1 .. $ARGV[0];
    print join(" ", map { $_->sockport } @s), "\n";' "$1"
}
now_ms() { date +%s%3N; }
seconds() { printf '%d.%d s' $(($1 / 1000)) $(($1 % 1000 / 100)); }

# GET /api/v1/PATH (curl -G arguments after it): the answer's "data", as JSON, in $answer; fails when
# Prometheus does not answer within 2 s or answers no success.
api() {
  local path=$1; shift
  answer=$(curl -sf -G --max-time 2 "http://127.0.0.1:$prometheus_port/api/v1/$path" "$@" | python3 -c '
import json, sys
reply = json.load(sys.stdin)
assert reply["status"] == "success"
print(json.dumps(reply["data"]))' 2>/dev/null) || return 1
}
# A PromQL query's result, one line a series, "VALUE" or "VALUE LABEL=VALUE,..." (labels sorted), in
# $result.
query() {
  api query --data-urlencode "query=$1" || return 1
  result=$(python3 -c '
import json, sys
for r in json.loads(sys.argv[1])["result"]:
    labels = ",".join(f"{k}={v}" for k, v in sorted(r["metric"].items()))
    print(r["value"][1], labels) if labels else print(r["value"][1])' "$answer")
}

# The active (pending or firing) alerts, one line each, "STATE NAME ENSEMBLE INSTANCE", in $alerts.
# Every poll checks that ensemble b, which keeps its quorum, has no ZkverifyNoQuorum in any state.
poll_alerts() {
  api alerts || return 1
  alerts=$(python3 -c '
import json, sys
for a in json.loads(sys.argv[1])["alerts"]:
    l = a["labels"]
    print(a["state"], l["alertname"], l.get("ensemble", "-"), l.get("instance", "-"))' "$answer")
  if grep -q ' ZkverifyNoQuorum b ' <<<"$alerts"; then
    fail "ZkverifyNoQuorum is $(grep ' ZkverifyNoQuorum b ' <<<"$alerts" | cut -d' ' -f1) for ensemble b, which kept its quorum"
  fi
  return 0
}

# wait_for SECONDS WHAT COMMAND...: runs COMMAND every 0.5 s until it succeeds, at most SECONDS;
# the time it took in $waited_ms.
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

# Two ensembles of three servers.
for ensemble in a b; do
  "$zklab" up "$work/$ensemble" --names "$ensemble-0,$ensemble-1,$ensemble-2" >"$work/zklab-$ensemble.log" 2>&1 ||
    fail "zklab up $ensemble: $(tail -3 "$work/zklab-$ensemble.log")"
done
pass "two lab ensembles of 3 servers, a and b ($((SECONDS - started_at)) s)"

# A sidecar per server, and Prometheus: 7 distinct free ports.
read -r -a ports <<<"$(free_ports 7)"
((${#ports[@]} == 7)) || fail "no 7 free ports on 127.0.0.1"
# start_sidecar ENSEMBLE I: the sidecar of server ENSEMBLE-I, on its port (the same again on a restart).
start_sidecar() {
  local ensemble=$1 i=$2 name="$1-$2" first=0
  [[ $ensemble == b ]] && first=3
  local port=${ports[first + i]}
  "$zkverify" serve --servers "$("$zklab" servers "$work/$ensemble")" --local "$name" \
    --listen "127.0.0.1:$port" --interval 1s --timeout 2s --ensemble "$ensemble" >>"$work/serve-$name.log" 2>&1 &
  pids+=($!)
  echo "$!" >"$work/serve-$name.pid"
  echo "127.0.0.1:$port" >"$work/serve-$name.target"
}
targets=""
for ensemble in a b; do
  for i in 0 1 2; do
    start_sidecar "$ensemble" "$i"
    targets+="${targets:+, }'$(cat "$work/serve-$ensemble-$i.target")'"
  done
done

# The shipped rules with every `for:` at 5s, and nothing else changed: every rule, its expression,
# labels and annotations, equal to the shipped one once `for` is taken out of both.
python3 - "$top/deploy/prometheus/zkverify-rules.yml" "$work/rules.yml" <<'PY' || fail "the rules' copy differs from the shipped rules beyond for:"
import re, sys, yaml
text = open(sys.argv[1], encoding="utf-8").read()
short = re.sub(r"(?m)^(\s+for: )\S+$", r"\g<1>5s", text)
def rules(t):
    return [rule for group in yaml.safe_load(t)["groups"] for rule in group["rules"]]
def without_for(t):
    return [{k: v for k, v in rule.items() if k != "for"} for rule in rules(t)]
assert without_for(text) == without_for(short), "expressions, labels or annotations changed"
assert all(rule.get("for") == "5s" for rule in rules(short) if "alert" in rule), "a for: not shortened"
assert len(rules(short)) == len(rules(text)) > 0
open(sys.argv[2], "w", encoding="utf-8").write(short)
PY
prometheus_port=${ports[6]}
cat >"$work/prometheus.yml" <<CFG
global:
  scrape_interval: 1s
  scrape_timeout: 1s
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
echo "$!" >"$work/prometheus.pid"

all_up() {
  api targets || return 1
  [[ $(python3 -c '
import json, sys
print(sum(t["health"] == "up" for t in json.loads(sys.argv[1])["activeTargets"]))' "$answer") == 6 ]]
}
wait_for 60 "Prometheus scrapes the 6 sidecars as up" all_up
pass "Prometheus scrapes the 6 sidecars, one job ($(seconds "$waited_ms"))"

# The labels the rules group by: every zkverify_* series has its ensemble, 3 sidecars each.
by_ensemble() {
  query 'count by (ensemble) (zkverify_up)' || return 1
  [[ $(sort <<<"$result") == $'3 ensemble=a\n3 ensemble=b' ]] || return 1
  query 'count({job="zkverify", __name__=~"zkverify_.+", ensemble=""})' || return 1
  [[ -z $result ]]
}
wait_for 10 "zkverify_up of 3 sidecars per ensemble, and no zkverify_* series without an ensemble label" by_ensemble
pass "every zkverify_* series has its ensemble label: 3 sidecars of a, 3 of b"

# quiet: every sidecar's own server ready, and no alert pending or firing.
quiet() {
  poll_alerts || return 1
  [[ -z $alerts ]] || return 1
  query 'sum(zkverify_local_ready)' || return 1
  [[ $result == 6 ]]
}
wait_for 60 "every sidecar ready, no alert pending or firing" quiet
pass "every sidecar ready, no alert pending or firing ($(seconds "$waited_ms"))"

# Ensemble a loses its quorum.
"$zklab" stop "$work/a" a-0
"$zklab" stop "$work/a" a-1
no_quorum_a() { poll_alerts && grep -q '^firing ZkverifyNoQuorum a ' <<<"$alerts"; }
wait_for 30 "ZkverifyNoQuorum firing for ensemble a" no_quorum_a
# Its budget: `for:` (5 s) plus two scrape intervals (2 s) plus the sidecars' own cycle that first sees
# it (an interval and its timeout, 3 s).
((waited_ms <= 10000)) ||
  fail "ZkverifyNoQuorum took $(seconds "$waited_ms") to fire: more than for: 5s + 2 scrapes (2 s) + 1 cycle (3 s)"
pass "ZkverifyNoQuorum firing for ensemble=\"a\" $(seconds "$waited_ms") after two of its servers stopped (for: 5s, budget 10 s)"
[[ $(grep -c ' ZkverifyNoQuorum ' <<<"$alerts") == 1 ]] || fail "more than one ZkverifyNoQuorum: $alerts"
pass "one ZkverifyNoQuorum, for ensemble a alone"

started=$(now_ms)
"$zklab" start "$work/a" a-0
"$zklab" start "$work/a" a-1
"$zklab" wait "$work/a" --timeout 60 >/dev/null 2>&1 || fail "ensemble a did not serve again within 60 s"
serving_ms=$(($(now_ms) - started))
resolved_a() { poll_alerts && ! grep -q ' ZkverifyNoQuorum ' <<<"$alerts"; }
wait_for 30 "ZkverifyNoQuorum resolved" resolved_a
pass "ZkverifyNoQuorum resolved $(seconds "$waited_ms") after ensemble a served again (its two servers took $(seconds "$serving_ms") to start and sync)"
wait_for 30 "every alert resolved, every sidecar ready again" quiet
pass "every other alert resolved, every sidecar ready $(seconds "$waited_ms") later"

# Prometheus's own record of its alerts (the ALERTS series, pending and firing) never held b's.
query 'count_over_time(ALERTS{alertname="ZkverifyNoQuorum", ensemble="b"}[1h])' || fail "Prometheus did not answer a query"
[[ -z $result ]] || fail "Prometheus's ALERTS series held ZkverifyNoQuorum for ensemble b: $result"
query 'count_over_time(ALERTS{alertname="ZkverifyNoQuorum", ensemble="a", alertstate="firing"}[1h])' ||
  fail "Prometheus did not answer a query"
[[ -n $result ]] || fail "Prometheus's ALERTS series has no firing ZkverifyNoQuorum for ensemble a"
pass "ZkverifyNoQuorum never pending nor firing for ensemble b (ALERTS)"

# A sidecar of b goes away: its scrapes fail.
down_pid=$(cat "$work/serve-b-2.pid")
down_target=$(cat "$work/serve-b-2.target")
kill "$down_pid"
timeout 10 tail --pid="$down_pid" -f /dev/null || fail "the sidecar b-2 (pid $down_pid) did not stop on SIGTERM within 10 s"
# Gone and reaped, its pid may be reused: the trap must not kill it again.
running=()
for pid in "${pids[@]}"; do [[ $pid == "$down_pid" ]] || running+=("$pid"); done
pids=("${running[@]}")
sidecar_down() { poll_alerts && grep -q "^firing ZkverifySidecarDown - $down_target\$" <<<"$alerts"; }
wait_for 30 "ZkverifySidecarDown firing for $down_target" sidecar_down
((waited_ms <= 10000)) || fail "ZkverifySidecarDown took $(seconds "$waited_ms") to fire: more than for: 5s + 2 scrapes + 3 s"
pass "ZkverifySidecarDown firing for $down_target $(seconds "$waited_ms") after its sidecar was killed (for: 5s)"
[[ $(grep -c ' ZkverifySidecarDown ' <<<"$alerts") == 1 ]] || fail "more than one ZkverifySidecarDown: $alerts"
pass "one ZkverifySidecarDown, for the killed sidecar alone"

start_sidecar b 2
sidecar_back() { poll_alerts && ! grep -q ' ZkverifySidecarDown ' <<<"$alerts" && all_up; }
wait_for 30 "ZkverifySidecarDown resolved after the sidecar restarted" sidecar_back
pass "ZkverifySidecarDown resolved $(seconds "$waited_ms") after the sidecar restarted"

echo "took $((SECONDS - started_at)) s"
echo "test-alerts-live: $passed passed, 0 failed"
