# shellcheck shell=bash
# Shared by tests/install/test-package.sh and test-image.sh (sourced, not run).
# Needs $src (the source tree) and $work (the test's temporary directory) set by the caller.
# shellcheck disable=SC2154

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok: $*"; }

# The one version: CMakeLists.txt's project(zkverify VERSION x.y.z).
project_version() {
  sed -n 's/^project(zkverify VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt"
}

# Sets $version to the project's version, and checks that the manifests name it.
read_project_version() {
  version=$(project_version)
  [[ -n $version ]] || fail "no project(zkverify VERSION ...) in CMakeLists.txt"
  check_manifest_tags "$version"
}

# Every zkverify image line of the Kubernetes manifests names zkverify:<project version>.
check_manifest_tags() {
  local version=$1 lines bad
  lines=$(grep -hE '^\s*image:\s*\S*zkverify' "$src"/deploy/kubernetes/*.yaml) ||
    fail "no 'image: zkverify:...' line in deploy/kubernetes/*.yaml"
  bad=$(grep -vE "image:\s*zkverify:${version//./\\.}\s*$" <<<"$lines" || true)
  [[ -z $bad ]] || fail "deploy/kubernetes image lines do not name zkverify:$version: $bad"
  pass "deploy/kubernetes/*.yaml name zkverify:$version ($(wc -l <<<"$lines") image lines)"
}

# True when a process this script runs under (e.g. `flock LOCK tests/install/test-image.sh ...`)
# holds the flock on file $1: taking it again would wait for ourselves.
lock_held_by_ancestor() {
  local inode holder pid
  inode=$(stat -c %i "$1" 2>/dev/null) || return 1
  # /proc/locks: "N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END" (one pid per word)
  # shellcheck disable=SC2013
  for holder in $(awk -v ino="$inode" '$2 == "FLOCK" { split($6, a, ":"); if (a[3] == ino) print $5 }' /proc/locks); do
    pid=$$
    while ((pid > 1)); do
      ((pid == holder)) && return 0
      pid=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || break
    done
  done
  return 1
}

# A lab of three servers, under the machine's lab lock (one lab at a time; taken here unless a
# parent process already holds it). Sets $servers. The caller's EXIT trap must call stop_lab.
lab_dir=""
start_lab() {
  local lock=${ZKVERIFY_LAB_LOCK:-/tmp/zkverify-lab.lock}
  if lock_held_by_ancestor "$lock"; then
    echo "the lab lock $lock is held by a parent process: not taking it again"
  else
    exec 9>"$lock"
    echo "waiting for the lab lock $lock (at most 20 minutes)"
    flock -w 1200 9 || fail "the lab lock $lock is still held after 20 minutes"
  fi
  lab_dir=$work/lab
  "$src/tests/lab/zklab" up "$lab_dir" --names pzoo-0,pzoo-1,pzoo-2 >"$work/lab.log" 2>&1 ||
    { cat "$work/lab.log" >&2; fail "the lab did not start"; }
  servers=$("$src/tests/lab/zklab" servers "$lab_dir")
  pass "lab up: $servers"
}

stop_lab() {
  if [[ -n $lab_dir && -f $lab_dir/names ]]; then
    "$src/tests/lab/zklab" down "$lab_dir" >/dev/null 2>&1 || echo "warning: zklab down $lab_dir failed" >&2
  fi
  lab_dir=""
  flock -u 9 2>/dev/null || true
}

# The bash completion FILE offers every subcommand and every option that ZKVERIFY's --help lists.
check_completion() {
  local file=$1 zkverify=$2 sub want got
  complete_words() {
    bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _zkverify
             printf "%s\n" "${COMPREPLY[@]}"' _ "$file" "$@" | sort
  }
  want=$("$zkverify" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' | sort)
  [[ -n $want ]] || fail "no subcommands in zkverify --help"
  got=$(complete_words zkverify "" | grep -v '^-' || true)
  [[ $got == "$want" ]] || fail "completion of 'zkverify ' offers [$got], --help lists [$want]"
  for sub in $want; do
    want=$("$zkverify" "$sub" --help | sed -n '/^Options:/,/^$/p' | grep -oE -- '--[a-z][a-z-]*' | sort -u)
    got=$(complete_words zkverify "$sub" --)
    [[ $got == "$want" ]] || fail "completion of 'zkverify $sub --' offers [$got], its --help lists [$want]"
  done
  [[ $(complete_words zkverify quorum --ser) == --servers ]] || fail "'zkverify quorum --ser' does not complete to --servers"
  [[ -z $(complete_words zkverify quorum --servers "") ]] || fail "completion after --servers is not left to bash (files)"
  [[ $(complete_words zkverify saf) == safe-to-restart ]] || fail "'zkverify saf' does not complete to safe-to-restart"
  pass "bash completion: every subcommand and every option of their --help"
}
