#!/usr/bin/env bash
# The test command: installs what it needs; builds exactly as docs/install.md's "From source" says (Release,
# -O3, GCC) and fails on any warning there; runs the unit tests, the integration tests against real
# ZooKeeper ensembles and the packaging tests from that build; then builds everything again with
# clang under ASan+UBSan with warnings as errors (with the fuzz targets), runs the unit tests
# there, the lint (clang-format, clang-tidy, the house rules, the docs' links) and each fuzz target
# for 5 s. The integration tests, 24-26 minutes of real ensembles on a brand-new 2-core machine, run
# once. The whole run took 47-54 min there (docs/testing.md), over CI's 45-minute target.
# They mostly wait on JVMs, so the clang build and clang-tidy (CPU alone) run beside them at the
# lowest priority (nice 19), and their output is shown when they end.
#   scripts/test.sh            everything (what CI runs)
#   scripts/test.sh --quick    GCC only: skip the clang+sanitizer build, clang-tidy and the fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[[ ${1:-} == --quick ]] && quick=1

# phase NAME: a header with the time spent so far, so a slow CI run shows where its minutes went.
phase() { echo "== $* (at ${SECONDS}s)"; }

scripts/install-deps.sh
# The other ZooKeeper lines the lab runs (3.4 from bullseye, 3.9 from trixie), by package name into
# the cache (nothing to fetch once there).
scripts/fetch-zookeeper.sh >/dev/null

# Every lab the tests start lives below this directory; whatever happens to the test run, the trap
# stops those servers (by pid, through the lab script) and removes their files.
export TMPDIR
TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-tests.XXXXXX")
cleanup() {
  local names
  for names in "$TMPDIR"/*/lab/names; do
    [[ -e $names ]] && tests/lab/zklab down "$(dirname "$names")" || true
  done
  rm -rf "$TMPDIR"
}
trap cleanup EXIT

# run_tests DIR [ctest arguments]: unit tests two at a time; the integration test is RUN_SERIAL
# (one ensemble at a time).
run_tests() {
  local dir=$1; shift
  phase "test $dir $*"
  (cd "$dir" && ctest -j 2 --output-on-failure "$@")
}

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
# The unit and install tests first, on an idle machine: some of them time fake peers and sessions
# closing on worker threads, and a loaded machine has crashed one at its teardown (a watch on fakes).
run_tests build -LE integration

# Beside the integration tests, at the lowest priority so that the servers and clients get the cores when
# they ask: the clang-14 build with ASan+UBSan and the libFuzzer targets (the second compiler's
# warnings, as errors), then the lint with clang-tidy on its compile commands. Only what runs here is
# built (the integration tests run on the GCC build).
background=
if ((!quick)); then
  phase "background: build build-clang (clang-14, ASan+UBSan, -Werror, fuzz targets) and the lint, at nice 19"
  setsid -w nice -n 19 bash -c '
    set -euo pipefail
    cmake -S . -B build-clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-14 \
      -DZKVERIFY_WERROR=ON -DZKVERIFY_SANITIZE=ON -DZKVERIFY_FUZZ=ON >/dev/null
    cmake --build build-clang -j"$(nproc)" --target zkverify unit_tests fuzz
    echo "== clang build done (at ${SECONDS}s of its own)"
    scripts/lint.sh build-clang
    echo "== lint done (at ${SECONDS}s of its own)"' >"$TMPDIR/background.log" 2>&1 &
  background=$!
fi
stop_background() { [[ -n $background ]] && kill -- "-$background" 2>/dev/null || true; }
trap 'stop_background; cleanup' EXIT

run_tests build -L integration

# Packaging, from the GCC build just tested (nothing is recompiled): the .deb built, installed (dpkg -i
# under $CI, else into a throwaway root), run against a lab, removed and lintian-checked; the sidecar
# image built with buildah and its filesystem run in a chroot (root) against a lab.
phase packaging
tests/install/test-package.sh build
tests/install/test-image.sh build

if ((quick)); then
  scripts/lint.sh
  phase "done"
  exit 0
fi
phase "wait for the background's clang build and lint"
status=0
wait "$background" || status=$?
background=
tail -n 60 "$TMPDIR/background.log"
if ((status != 0)); then
  echo "test.sh: the clang build or the lint failed (exit $status; its log is above)" >&2
  exit 1
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_tests build-clang -LE integration
phase fuzz
BUILD_DIR=$PWD/build-clang scripts/fuzz.sh 5
phase "done"
