#!/usr/bin/env bash
# Benchmark (a script, not a test): how long `zkverify quorum` takes on a healthy 5-server lab,
# against a Python client doing less (bench/kazoo_round_trip.py: per server in turn a session, one
# ephemeral-sequential znode, sync, read, close) and what operators use today (`echo srvr | nc`,
# zkCli.sh), all measured in the same run with hyperfine; medians, and ratios to the kazoo script.
# Then with one server paused (SIGSTOP), where the total time should track --timeout; then on a
# 7-server lab (5 voters + 2 observers): all 7 listed against its 5 voters listed, in one run, with
# the CPU each check costs the servers and zkverify (the machine's cores bound the wall time).
# Every lab is warmed up first, for 30 s of the commands measured: fresh JVMs interpret before they
# compile, and whichever command ran first would pay for that (a production server is long warm).
#   bench/quorum.sh [RUNS]      (default 30 runs per command)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}

scripts/install-deps.sh
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-bench -j "$(nproc)" --target zkverify >/dev/null
zkverify=$PWD/build-bench/zkverify
kazoo="/usr/bin/python3 $PWD/bench/kazoo_round_trip.py"  # Debian's python3: it has python3-kazoo

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-bench.XXXXXX")
lab=$work/lab
trap 'tests/lab/zklab down "$lab"; rm -rf "$work"' EXIT
tests/lab/zklab up "$lab" >/dev/null
servers=$(tests/lab/zklab servers "$lab")
ports=$(tr ',' '\n' <<<"$servers" | sed 's/.*://' | paste -sd' ')
first_port=${ports%% *}

medians() {  # NAME<TAB>median seconds, from hyperfine's JSON
  perl -MJSON::PP -0777 -ne 'for (@{decode_json($_)->{results}}) { printf "%s\t%.6f\n", $_->{command}, $_->{median} }' "$1"
}
median_of() {  # the median of the command NAME in FILE
  medians "$1" | awk -F'\t' -v name="$2" '$1 == name { print $2 }'
}
warm_up() {  # SECONDS COMMAND...: runs the commands in turn for SECONDS, untimed; keeps what a run
  # exiting 2 or more printed (zkverify: critical or an error; the 5 voters alone are degraded, 1)
  local until=$((SECONDS + $1)) command status
  shift
  while ((SECONDS < until)); do
    for command in "$@"; do
      status=0
      bash -c "$command" >"$work/warm-up.out" 2>&1 || status=$?
      if ((status >= 2)); then
        printf '== warm-up: %s exited %d:\n' "$command" "$status" >>"$work/warm-up-failures"
        cat "$work/warm-up.out" >>"$work/warm-up-failures"
      fi
    done
  done
}
pool() {  # OUT IN...: hyperfine JSONs pooled: per command all its times (median) and mean user, system CPU
  local out=$1
  shift
  perl -MJSON::PP -0777 -e '
  my %pooled;
  for my $file (@ARGV) {
    open my $in, "<", $file or die "$file: $!";
    for my $r (@{decode_json(do { local $/; <$in> })->{results}}) {
      my $p = $pooled{$r->{command}} //= {times => [], user => [], system => []};
      push @{$p->{times}}, @{$r->{times}};
      push @{$p->{user}}, $r->{user};
      push @{$p->{system}}, $r->{system};
    }
  }
  my @results;
  for my $name (sort keys %pooled) {
    my @t = sort { $a <=> $b } @{$pooled{$name}{times}};
    my $median = @t % 2 ? $t[$#t / 2] : ($t[@t / 2 - 1] + $t[@t / 2]) / 2;
    my ($user, $system) = map { my @v = @{$pooled{$name}{$_}}; my $s = 0; $s += $_ for @v; $s / @v } qw(user system);
    push @results, {command => $name, median => $median, user => $user, system => $system};
  }
  print encode_json({results => \@results});
' "$@" >"$out"
}
lab_cpu_ms() {  # the CPU time (user + system, ms) every server of LAB has used so far
  local total=0 name pid stat
  for name in $(tests/lab/zklab names "$1"); do
    pid=$(tests/lab/zklab pid "$1" "$name")
    read -r -a stat <"/proc/$pid/stat"  # fields 14 and 15: utime, stime (comm is "(java)")
    total=$((total + stat[13] + stat[14]))
  done
  echo $((total * 1000 / $(getconf CLK_TCK)))
}
server_cpu_per_check() {  # LAB RUNS COMMAND: the servers' CPU ms per run of COMMAND
  local before after i
  before=$(lab_cpu_ms "$1")
  for ((i = 0; i < $2; i++)); do bash -c "$3" >/dev/null 2>&1 || true; done
  after=$(lab_cpu_ms "$1")
  perl -e "printf '%.1f', ($after - $before) / $2"
}

echo "== healthy ensemble, $runs runs each"
warm_up 30 "$kazoo $servers" "$zkverify quorum --servers $servers" "$zkverify quorum --servers $servers --no-write"
# -N: no shell in between, for the commands that need none (the nc loop and zkCli.sh do, in a run
# of their own, their shell's cost subtracted by hyperfine). Two runs in opposite orders, pooled.
healthy=(-n 'kazoo script (session, create, sync, get, close per server)' "$kazoo $servers"
         -n 'zkverify quorum --no-write' "$zkverify quorum --servers $servers --no-write"
         -n 'zkverify quorum' "$zkverify quorum --servers $servers")
half=$(((runs + 1) / 2))
hyperfine --style basic -N --warmup 3 --runs "$half" --export-json "$work/healthy-a.json" "${healthy[@]}" >/dev/null
hyperfine --style basic -N --warmup 3 --runs "$half" --export-json "$work/healthy-b.json" \
  "${healthy[@]:6:3}" "${healthy[@]:3:3}" "${healthy[@]:0:3}" >/dev/null
pool "$work/healthy.json" "$work/healthy-a.json" "$work/healthy-b.json"
# ZooKeeper 3.8 keeps metrics per top-level znode, and the leader's mntr is on quorum's path: a lab
# whose mntr grew (a client creating top-level nodes) times mntr, not zkverify. About 620 lines here.
leader_port=$(tests/lab/zklab servers "$lab" | tr ',' '\n' | grep "^$(tests/lab/zklab leader "$lab")=" | sed 's/.*://')
exec 3<>"/dev/tcp/127.0.0.1/$leader_port"
printf mntr >&3
mntr_lines=$(wc -l <&3)
exec 3>&-
hyperfine --style basic --warmup 1 --runs "$(((runs + 2) / 3))" --export-json "$work/shell.json" \
  -n 'echo srvr | nc, 5 servers' "for p in $ports; do echo srvr | nc -w 2 127.0.0.1 \$p >/dev/null; done" \
  -n 'zkCli.sh -server ONE ls /' "/usr/share/zookeeper/bin/zkCli.sh -server 127.0.0.1:$first_port ls / >/dev/null 2>&1" \
  >/dev/null

paused=zoo-0
[[ $(tests/lab/zklab leader "$lab") == zoo-0 ]] && paused=zoo-1
tests/lab/zklab pause "$lab" "$paused"
echo "== $paused paused (SIGSTOP)"
hyperfine --style basic -N --runs 5 -i --export-json "$work/paused.json" \
  -n 'zkverify quorum --timeout 1s, one paused' "$zkverify quorum --servers $servers --timeout 1s" \
  -n 'zkverify quorum --timeout 5s, one paused' "$zkverify quorum --servers $servers --timeout 5s" >/dev/null
tests/lab/zklab resume "$lab" "$paused"
tests/lab/zklab down "$lab" >/dev/null

# One lab at a time: the 7-server lab replaces the 5-server one. Its 5 voters listed alone are the
# "5 servers" of the comparison (same lab, same run); the unlisted observers make that run degraded,
# hence -i, but it does the same work per server. Two hyperfine runs in opposite orders, their
# times pooled: neither side always runs on the servers the other just warmed.
echo "== 7 servers (5 voters + 2 observers), $runs runs each"
lab=$work/lab7
tests/lab/zklab up "$lab" --names pzoo-0,pzoo-1,pzoo-2,zoo-0,zoo-1,obs-0,obs-1 --observers 2 >/dev/null
servers7=$(tests/lab/zklab servers "$lab")
voters=$(tr ',' '\n' <<<"$servers7" | head -5 | paste -sd,)
seven=(-n 'zkverify quorum, 7 servers' "$zkverify quorum --servers $servers7"
       -n 'zkverify quorum --no-write, 7 servers' "$zkverify quorum --servers $servers7 --no-write")
five=(-n 'zkverify quorum, its 5 voters' "$zkverify quorum --servers $voters"
      -n 'zkverify quorum --no-write, its 5 voters' "$zkverify quorum --servers $voters --no-write")
warm_up 30 "$zkverify quorum --servers $servers7" "$zkverify quorum --servers $voters" \
  "$zkverify quorum --servers $servers7 --no-write" "$zkverify quorum --servers $voters --no-write"
hyperfine --style basic -N --warmup 3 --runs "$half" -i --export-json "$work/seven-a.json" "${seven[@]}" "${five[@]}" >/dev/null
hyperfine --style basic -N --warmup 3 --runs "$half" -i --export-json "$work/seven-b.json" "${five[@]}" "${seven[@]}" >/dev/null
pool "$work/seven.json" "$work/seven-a.json" "$work/seven-b.json"
cpu_runs=$((runs < 20 ? 20 : runs))
seven_cpu=$(server_cpu_per_check "$lab" "$cpu_runs" "$zkverify quorum --servers $servers7")
five_cpu=$(server_cpu_per_check "$lab" "$cpu_runs" "$zkverify quorum --servers $voters")
seven_nw_cpu=$(server_cpu_per_check "$lab" "$cpu_runs" "$zkverify quorum --servers $servers7 --no-write")
five_nw_cpu=$(server_cpu_per_check "$lab" "$cpu_runs" "$zkverify quorum --servers $voters --no-write")

kazoo_median=$(median_of "$work/healthy.json" 'kazoo script (session, create, sync, get, close per server)')
printf "\nthe 5-server lab's leader answered mntr with %d lines after its runs\n" "$mntr_lines"
printf '\n%-62s %10s %10s\n' "command" "median" "vs kazoo"
for file in healthy shell paused seven; do
  medians "$work/$file.json" | while IFS=$'\t' read -r name median; do
    printf '%-62s %8.1fms %9.2fx\n' "$name" "$(perl -e "print $median*1000")" "$(perl -e "print $median/$kazoo_median")"
  done
done
ratio() {  # NAME7 NAME5: the ratio of their medians in seven.json
  perl -e "printf '%.2f', $(median_of "$work/seven.json" "$1")/$(median_of "$work/seven.json" "$2")"
}
printf '\n%-62s %9sx\n' "7 servers / 5 voters (zkverify quorum)" \
  "$(ratio 'zkverify quorum, 7 servers' 'zkverify quorum, its 5 voters')"
printf '%-62s %9sx\n' "7 servers / 5 voters (zkverify quorum --no-write)" \
  "$(ratio 'zkverify quorum --no-write, 7 servers' 'zkverify quorum --no-write, its 5 voters')"

# Where the 7-server lab's CPU goes per check: the servers' (the lab's JVMs, measured over
# $cpu_runs more runs) and zkverify's own (hyperfine's mean user + system). On this machine they
# share $(nproc) cores, so their sum over the cores is a floor under the wall time.
cores=$(nproc)
printf '\n%-42s %12s %12s %14s %10s\n' "on the 7-server lab, per check" "servers' CPU" "zkverify CPU" "floor (/$cores cores)" "median"
cpu_row() {  # LABEL NAME SERVER_CPU_MS
  local user_system median
  user_system=$(perl -MJSON::PP -0777 -e 'open my $in, "<", $ARGV[0]; my $d = decode_json(do { local $/; <$in> });
    for (@{$d->{results}}) { printf "%.1f", ($_->{user} + $_->{system}) * 1000 if $_->{command} eq $ARGV[1] }' "$work/seven.json" "$2")
  median=$(perl -e "printf '%.1f', $(median_of "$work/seven.json" "$2") * 1000")
  printf '%-42s %10sms %10sms %12sms %8sms\n' "$1" "$3" "$user_system" "$(perl -e "printf '%.1f', ($3 + $user_system) / $cores")" "$median"
}
cpu_row 'quorum, 7 servers' 'zkverify quorum, 7 servers' "$seven_cpu"
cpu_row 'quorum, its 5 voters' 'zkverify quorum, its 5 voters' "$five_cpu"
cpu_row 'quorum --no-write, 7 servers' 'zkverify quorum --no-write, 7 servers' "$seven_nw_cpu"
cpu_row 'quorum --no-write, its 5 voters' 'zkverify quorum --no-write, its 5 voters' "$five_nw_cpu"
if [[ -s $work/warm-up-failures ]]; then  # on a healthy lab every run should have passed
  echo
  cat "$work/warm-up-failures"
fi
