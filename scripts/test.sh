#!/usr/bin/env bash
# The test command: installs what it needs; builds exactly as docs/install.md's "From source" says (Release,
# -O3, GCC; with Ninja) and fails on any warning there; then, in two lanes side by side (the integration
# parts mostly wait on JVMs), the unit tests and the integration tests against real ZooKeeper ensembles
# (in parts, one CTest entry each: docs/testing.md) with README's demo, and the packaging tests, from that
# build. From the start, at the lowest priority (nice 19: CPU the build and the tests leave idle), it
# builds zkverify with clang under ThreadSanitizer (the watch, roll and sidecar parts run their
# commands with that zkverify: zero reports), then zkverify and the unit tests under ASan+UBSan with
# warnings as errors (with the fuzz targets), then the unit tests that run threads under TSan, and runs the lint
# (clang-format, clang-tidy on the files whose inputs changed since they last passed, the house rules,
# the docs' links) and each fuzz target for 3 s on the ASan+UBSan build; its output is shown when it
# ends. The unit tests under each sanitizer run in the foreground, side by side, once the lanes are
# done (tests/tsan.supp says what TSan suppresses and why).
#   scripts/test.sh            everything (what CI runs)
#   scripts/test.sh --quick    GCC only: skip the clang builds, clang-tidy and the fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[[ ${1:-} == --quick ]] && quick=1

# phase NAME: a header with the time spent so far and how busy both cores have been since the start
# (every process of the machine), so a slow CI run shows where its minutes went and whether the
# machine was idle for part of them.
read -r _ user nice_ system idle iowait _ </proc/stat
cpu_start=("$((user + nice_ + system))" "$((user + nice_ + system + idle + iowait))")
phase() {
  local busy total user nice_ system idle iowait
  read -r _ user nice_ system idle iowait _ </proc/stat
  busy=$((user + nice_ + system - cpu_start[0])) total=$((user + nice_ + system + idle + iowait - cpu_start[1]))
  echo "== $* (at ${SECONDS}s, cores $((total ? 100 * busy / total : 0))% busy so far)"
}

scripts/install-deps.sh
# The other ZooKeeper lines the lab runs (3.4 from bullseye, 3.9 from trixie), by package name into
# the cache (nothing to fetch once there).
scripts/fetch-zookeeper.sh >/dev/null
# Ninja (scripts/install-deps.sh installs it): the same compiler and flags as a user's build, with
# per-file compile times in each build's .ninja_log. An existing build directory keeps its generator.
export CMAKE_GENERATOR=Ninja

# Every lab the tests start lives below this directory; whatever happens to the test run, the trap
# stops those servers (by pid, through the lab script) and removes their files.
export TMPDIR
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-tests.XXXXXX")
# This script's processes below it (ctest, the test binaries, a `zklab up` under way), each with its
# pid; the command substitution that lists them is left out.
descendants() {
  local child
  for child in $(pgrep -P "$1"); do
    [[ $child == "$BASHPID" ]] && continue
    descendants "$child"
    echo "$child"
  done
}
# Stopped before the labs are cleaned up: a `zklab up` still starting servers when the run is
# stopped (SIGTERM to this script) would start them after its lab's `down`, and nobody would stop them.
stop_descendants() {
  local pids
  pids=$(descendants $$)
  [[ -z $pids ]] && return 0
  kill -TERM $pids 2>/dev/null || true
  for ((tries = 0; tries < 50; tries++)); do  # 5 s, then they are killed
    kill -0 $pids 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL $pids 2>/dev/null || true
}
cleanup() {
  local names
  stop_descendants
  while IFS= read -r names; do
    if [[ -f $(dirname "$names")/netns ]]; then tests/lab/zkpods down "$(dirname "$names")" || true  # and its namespace
    else tests/lab/zklab down "$(dirname "$names")" || true; fi
  done < <(find "$TMPDIR" -maxdepth 4 -type f -name names 2>/dev/null)
  rm -rf "$TMPDIR"
}
trap cleanup EXIT

# run_tests LANE [ctest arguments]: the Release build's tests, two at a time (unless a later -j says
# otherwise: the unit tests mostly wait, 23 CPU-s in 97 s two at a time), each integration
# part with its own timeout (one part at a time in a lane: two lanes run side by side). The output goes
# to $TMPDIR/ctest.LANE.log and, each line marked with the lane, to ours. Each test's own output, the
# passed ones' too, goes to a JUnit file: the --durations lines (each integration case and section,
# with its time) are kept from it for slowest_cases (LastTest.log is one per build directory, and
# both lanes' ctest write it).
run_tests() {
  local lane=$1; shift
  phase "lane $lane: test build $*"
  local rc=0
  # --test-output-size-passed: CTest keeps 1 KB of a passed test's output by default, and a part's
  # --durations lines come at the end of pages of it.
  (cd build && ctest -j 2 --no-tests=error --output-on-failure --output-junit "$TMPDIR/junit.$lane.xml" \
    --test-output-size-passed 20000000 "$@") 2>&1 |
    tee -a "$TMPDIR/ctest.$lane.log" | sed -u "s/^/[$lane] /" || rc=$?
  grep -h -E '^[0-9]+\.[0-9]+ s: ' "$TMPDIR/junit.$lane.xml" >>"$TMPDIR/durations" 2>/dev/null || true
  return "$rc"
}
# The 25 integration cases and sections that took longest, near the end of the output (before a
# failure's summary), so that a CI page that keeps only the tail shows where the minutes went.
slowest_cases() {
  [[ -s $TMPDIR/durations ]] || return 0
  echo "== the slowest integration cases and sections (s)"
  sort -rn "$TMPDIR/durations" | head -n 25
}

# On a failure, its assertions once more at the very end, where a CI page that keeps only the tail of
# the output still shows them: each failed CHECK with its expansion and what the case said (INFO).
failure_summary() {
  grep -q ': FAILED:$' "$TMPDIR"/ctest.*.log 2>/dev/null || return 0
  echo "== the failed assertions (from the test output above)"
  grep -h -E -A 30 ': FAILED:$' "$TMPDIR"/ctest.*.log | head -n 200
}

# From the start, beside the Release build and then the tests, at the lowest priority so that they get
# the cores when they ask (the background is the longer path: it uses what they leave idle, such as
# the Release build's links and the JVMs' waits). Only what runs is built: first the clang-14 TSan build (zkverify, the unit tests),
# then the ASan+UBSan one (zkverify, the unit tests, the fuzz targets; the second compiler's warnings
# as errors in both). Cheaper flags than a release: -O0 (the tests' own code too), and line tables
# only (what the sanitizers' stacks need): a third less to compile than -O1, and the tests take no
# longer. Both with precompiled headers (cmake/precompiled.cmake; the Release build, without them,
# fails where a file misses an include).
sanitizer_build() {
  local dir=$1; shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -gline-tables-only -DNDEBUG" -DZKVERIFY_TEST_OPTIMIZATION=-O0 \
    -DZKVERIFY_WERROR=ON "$@" >/dev/null
}
# sanitizer_unit_tests DIR NAME: DIR's unit tests (and, in build-clang, the install tests) under its
# sanitizer, into $TMPDIR/NAME.out and NAME.rc, in the foreground after the integration parts (the
# two sanitizers side by side: the tests mostly wait, ASan's took 207 CPU-s in 189 s). Not
# beside them: in the background (at its nice 19) the foreground's JVMs and TSan commands, and the
# background's own clang-tidy, starved them for seconds at a time, and a fake server's answer came
# after the command's deadline (red runs: aa258b2, 518b830, 351cfbd, 06e7207's fresh clone: a roll's
# check got its fakes' srvr after 1.4-2 s, too late for the round trip). In the foreground they get
# the CPU the lint leaves them: all of it when they ask.
sanitizer_unit_tests() {
  local dir=$1 name=$2 filter=(-R '^unit:')
  [[ $dir == build-clang ]] && filter=(-LE integration)
  local rc=0 top=$PWD
  phase "unit tests under $name ($dir)"
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$top/tests/tsan.supp" \
    ctest -j 2 --no-tests=error --output-on-failure "${filter[@]}") >"$TMPDIR/$name.out" 2>&1 || rc=$?
  cp "$TMPDIR/$name.out" "$TMPDIR/ctest.$dir.log"
  echo "$rc" >"$TMPDIR/$name.rc"
}
# The TSan build's zkverify, the ASan+UBSan build, the TSan build's unit tests, each announced by a
# file in $TMPDIR once done (the foreground waits for it), then the lint (clang-tidy) and 3 s of each
# fuzz target.
background_work() {
  set -euo pipefail
  # Its status as a file: the foreground's `wait PID` forgets a job that ended long ago once another
  # process gets its pid (pid_max 32768; 44ccd1f's fresh clone: all passed, and `wait` said 127).
  trap 'echo $? >"$TMPDIR/background.rc"' EXIT
  # setsid made a new session, and with it a new scheduling autogroup (kernel.sched_autogroup_enabled),
  # in which nice only ranks processes against each other: the group as a whole would get half the
  # CPU against the foreground's, starving the servers under test. The group's own nice value makes
  # it yield to them.
  echo 19 >/proc/self/autogroup 2>/dev/null || true
  # A unity build, as the Release one (CMakeLists.txt); not the ASan+UBSan build, below.
  sanitizer_build build-tsan -DZKVERIFY_TSAN=ON
  cmake --build build-tsan -j"$(nproc)" --target zkverify
  milestone "tsan zkverify built" tsan-zkverify-built
  # The ASan+UBSan build before TSan's unit tests: its unit tests take longer (the foreground runs
  # both side by side once the lanes are done).
  # Each file compiled alone: clang-tidy checks them one by one (and so each is seen to compile on
  # its own).
  sanitizer_build build-clang -DZKVERIFY_SANITIZE=ON -DZKVERIFY_FUZZ=ON -DCMAKE_UNITY_BUILD=OFF
  cmake --build build-clang -j"$(nproc)" --target zkverify unit_tests fuzz
  milestone "clang build done" clang-built
  # The unit tests that run threads: the pure ones are left out of this build (tests/CMakeLists.txt).
  cmake --build build-tsan -j"$(nproc)" --target unit_tests
  milestone "tsan build done" tsan-built
  scripts/lint.sh build-clang
  milestone "lint done"
  BUILD_DIR=$PWD/build-clang scripts/fuzz.sh 3
  milestone "fuzz done"
}
# milestone WHAT [STAMP]: a line in the background's log and, as it happens, in ours (descriptor 3);
# STAMP, a file in $TMPDIR, announces a build to the foreground (wait_for_build).
milestone() {
  # Not `tee /dev/fd/3`: that opens our output anew, and truncates it when it is a file.
  echo "== background: $1 (at ${SECONDS}s)"
  echo "== background: $1 (at ${SECONDS}s)" >&3
  [[ -z ${2:-} ]] || touch "$TMPDIR/$2"
}
# wait_for_build STAMP WHAT: until the background announced a build ($TMPDIR/STAMP), at most 40 min;
# its log and exit 1 when it ended without it.
wait_for_build() {
  phase "wait for $2"
  for ((waited = 0; waited < 2400; waited += 5)); do
    [[ -e $TMPDIR/$1 ]] || ! kill -0 "$background" 2>/dev/null && break
    sleep 5
  done
  [[ -e $TMPDIR/$1 ]] && return 0
  tail -n 60 "$TMPDIR/background.log"
  echo "test.sh: $2 did not finish (its log is above)" >&2
  exit 1
}
background=
if ((!quick)); then
  phase "background: build-tsan's zkverify, build-clang (ASan+UBSan, -Werror, fuzz targets), build-tsan's unit tests, the lint, the fuzzing, at nice 19"
  export -f sanitizer_build background_work milestone
  setsid -w nice -n 19 bash -c background_work 3>&1 >"$TMPDIR/background.log" 2>&1 &
  background=$!
fi
stop_background() { [[ -n $background ]] && kill -- "-$background" 2>/dev/null || true; }
# Without errexit here: a report that fails (sort's SIGPIPE once head has its 25 lines: pipefail)
# would end the handler there, before cleanup (ea869e7's fresh clone: $TMPDIR was left behind).
trap 'rc=$?; set +e; stop_background; slowest_cases; ((rc == 0)) || failure_summary; cleanup; exit "$rc"' EXIT

# docs/install.md's from-source commands, as a user runs them: a user's build never fails on a compiler's
# warning (ZKVERIFY_WERROR is off by default), so this one fails on its log instead.
phase "build build (docs/install.md: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
if ! cmake --build build -j"$(nproc)" >build/build.log 2>&1; then
  grep -E -A8 'error' build/build.log | head -150 >&2
  echo "test.sh: the Release build failed (log: build/build.log)" >&2
  exit 1
fi
if grep -q 'warning:' build/build.log; then
  grep -E -A8 'warning:' build/build.log | head -150 >&2
  echo "test.sh: the Release build printed warnings (above); warnings are errors here" >&2
  exit 1
fi

# Then two lanes side by side: the parts mostly wait on JVMs (one part took 58 CPU-s in 132 s), and
# one after the other they left half the run's time to the background alone. Each lane runs one
# ensemble at a time.
#   lane a: the unit and install tests, four at a time (beside one part: they need no idle machine, no test races a
#           thread against the code under test, scripts/stress-tests.sh holds them to it), the parts
#           but four, then the packaging tests: from the GCC build just tested (nothing is
#           recompiled): the .deb built, installed (dpkg -i under $CI, else into a throwaway root),
#           run against a lab, removed and lintian-checked; the sidecar image built with buildah and
#           its filesystem run in a chroot (root) against a lab;
#   lane b: the membership part (the longest), then the parts whose commands keep threads busy for
#           long (watch and step, roll, the sidecar), once, with the TSan build's zkverify
#           (ZKVERIFY_TEST_BIN: a data race aborts the command and fails its case; the same source as
#           the Release binary, which the other parts and the packaging run), built first in the
#           background for them; then the live alerting test.
# A lane stops at its first failed phase; the run fails when either lane did.
tsan_parts='^integration: (watch|roll|sidecar)$'
lane_b_first='^integration: membership$' lane_b_last='^integration: alerts'
lane_a() {
  run_tests a -LE integration -j 4 && run_tests a -L integration -E "$tsan_parts|$lane_b_first|$lane_b_last" &&
    phase "lane a: packaging" && tests/install/test-package.sh build && tests/install/test-image.sh build
}
lane_b() {
  run_tests b -R "$lane_b_first" || return
  if ((quick)); then
    run_tests b -R "$tsan_parts" || return
  else
    wait_for_build tsan-zkverify-built "the TSan build's zkverify"
    ZKVERIFY_TEST_BIN=$PWD/build-tsan/zkverify \
      TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
      run_tests b -R "$tsan_parts" || return
  fi
  run_tests b -R "$lane_b_last"
}
# Each lane's status as a file (as the background's, below: a `wait` may come late).
(rc=0; lane_a || rc=$?; echo "$rc" >"$TMPDIR/lane-a.rc") 2>&1 | sed -u '/^\[a\] /!s/^/[a] /' &
lanes=($!)
(rc=0; lane_b || rc=$?; echo "$rc" >"$TMPDIR/lane-b.rc") 2>&1 | sed -u '/^\[b\] /!s/^/[b] /' &
lanes+=($!)
wait "${lanes[@]}" || true
phase "both lanes done"
for lane in a b; do
  [[ $(cat "$TMPDIR/lane-$lane.rc" 2>/dev/null) == 0 ]] || { echo "test.sh: lane $lane failed (above)" >&2; exit 1; }
done

if ((quick)); then
  scripts/lint.sh
  phase "done"
  exit 0
fi
# The sanitizers' unit tests (and the install tests on the ASan build's binary: the integration tests
# run once, above), side by side, each once its build is there.
wait_for_build clang-built "the ASan+UBSan build"
sanitizer_unit_tests build-clang asan-unit &
asan_unit=$!
wait_for_build tsan-built "the TSan build's unit tests"
sanitizer_unit_tests build-tsan tsan-unit
wait "$asan_unit" || true  # its status is in $TMPDIR/asan-unit.rc
phase "wait for the background's lint and fuzzing"
for ((waited = 0; waited < 2400; waited += 5)); do
  [[ -e $TMPDIR/background.rc ]] && break
  sleep 5
done
status=$(cat "$TMPDIR/background.rc" 2>/dev/null || echo "none: it did not end within 40 minutes")
background=
grep -E '^(== |fuzz|lint)' "$TMPDIR/background.log" || true
if [[ $status != 0 ]]; then
  tail -n 60 "$TMPDIR/background.log"
  echo "test.sh: the clang builds, the lint or the fuzzing failed (exit $status; its log is above)" >&2
  exit 1
fi
# The sanitizers' unit tests: the whole output of a failed run, else its summary.
status=0
for out in asan-unit tsan-unit; do
  if [[ $(cat "$TMPDIR/$out.rc" 2>/dev/null) != 0 ]]; then cat "$TMPDIR/$out.out"; status=1
  else grep -E '^([0-9]+% tests passed|Total Test time)' "$TMPDIR/$out.out"; fi
done
((status == 0)) || exit 1
phase "done"
