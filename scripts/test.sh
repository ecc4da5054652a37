#!/usr/bin/env bash
# The test command: installs what it needs, builds with GCC, runs the unit tests and the integration
# tests against real ZooKeeper ensembles, and the packaging tests; then builds everything again with
# clang under ASan+UBSan (with the fuzz targets), runs the unit tests there and each fuzz target for
# 5 s (the fakes drive every failure path; the integration tests, about 11 minutes of real
# ensembles, run once, which keeps CI under 45 minutes).
#   scripts/test.sh            everything (what CI runs)
#   scripts/test.sh --quick    GCC only: skip the clang+sanitizer build and the fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[[ ${1:-} == --quick ]] && quick=1

scripts/install-deps.sh

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

# run_suite DIR [ctest arguments --] [cmake arguments]
run_suite() {
  local dir=$1; shift
  local ctest_args=()
  if [[ ${1:-} == -LE ]]; then ctest_args=("$1" "$2"); shift 3; fi
  echo "== build $dir $*"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
  echo "== test $dir ${ctest_args[*]}"
  # Unit tests run two at a time; the integration test is RUN_SERIAL (one ensemble at a time).
  (cd "$dir" && ctest -j 2 --output-on-failure "${ctest_args[@]}")
}

run_suite build
# Packaging, from the GCC build just tested (nothing is recompiled): the .deb built, installed (dpkg -i
# under $CI, else into a throwaway root), run against a lab, removed and lintian-checked; the sidecar
# image built with buildah and its filesystem run in a chroot (root) against a lab.
echo "== packaging"
tests/install/test-package.sh build
tests/install/test-image.sh build
if ((!quick)); then
  # clang-14 with ASan+UBSan and the libFuzzer targets in one build: the second compiler's warnings
  # (-Werror), the sanitizers' run of every unit test, and each fuzz target for a few seconds.
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  run_suite build-clang -LE integration -- -DCMAKE_CXX_COMPILER=clang++-14 -DZKVERIFY_SANITIZE=ON -DZKVERIFY_FUZZ=ON
  echo "== fuzz"
  BUILD_DIR=$PWD/build-clang scripts/fuzz.sh 5
fi
