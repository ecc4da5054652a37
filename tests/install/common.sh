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

# What each shell's completion offers for LINE (as a Tab at its end would), one a line, sorted.
# bash: the script's _zkverify called as bash calls it (COMP_LINE, COMP_POINT, COMP_WORDS).
complete_bash() {
  bash -c 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}; read -ra COMP_WORDS <<<"$2"
           [[ $2 == *" " ]] && COMP_WORDS+=("")
           COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _zkverify; printf "%s\n" "${COMPREPLY[@]}"' _ "$1" "$2" |
    sed '/^$/d' | sort -u
}
# zsh: its completion system on a pseudo-terminal, with the script's directory first on fpath.
complete_zsh() {
  ZKC_COMPDUMP=$work/zcompdump timeout 20 zsh -f "$src/tests/install/zsh-complete.zsh" "$(dirname "$1")" "$2" |
    sort -u
}
# fish: the script sourced, then `complete -C` (no user configuration; its own config and data
# directories in $work, so that nothing is made in the user's home).
complete_fish() {
  XDG_CONFIG_HOME=$work/fish-config XDG_DATA_HOME=$work/fish-data timeout 20 fish --no-config -c 'source $argv[1]; and complete -C $argv[2]' "$1" "$2" | cut -f 1 | sort -u
}

# The facts every shell's completion must show, for the script FILE of SHELL (bash, zsh, fish):
# every subcommand and every option of every subcommand that ZKVERIFY's --help lists; --output's
# words; server names from the --servers value on the line; nothing of ours after --; the hidden
# `completion` command never.
check_shell_completion() {
  local shell=$1 file=$2 zkverify=$3 sub want got ours line
  [[ -s $file ]] || fail "no $shell completion $file"
  command -v "$shell" >/dev/null || fail "$shell is not installed (scripts/install-deps.sh installs it)"
  offers() { "complete_$shell" "$file" "$1"; }
  want=$("$zkverify" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p' | sort)
  [[ -n $want ]] || fail "no subcommands in zkverify --help"
  ours=$want
  got=$(offers "zkverify " | grep -v '^-' || true)
  [[ $got == "$want" ]] || fail "$shell: 'zkverify ' offers [$got], --help lists [$want]"
  for sub in $want; do
    want=$("$zkverify" "$sub" --help | sed -n '/^Options:/,/^$/p' | awk '/^  -/ { print $1 }' | tr , '\n' | sort -u)
    ours+=$'\n'$want
    got=$(offers "zkverify $sub -")
    [[ $got == "$want" ]] || fail "$shell: 'zkverify $sub -' offers [$got], its --help lists [$want]"
  done
  [[ $(offers "zkverify quorum --ser") == --servers ]] || fail "$shell: 'zkverify quorum --ser' does not complete to --servers"
  [[ $(offers "zkverify saf") == safe-to-restart ]] || fail "$shell: 'zkverify saf' does not complete to safe-to-restart"
  [[ -z $(offers "zkverify comp") ]] || fail "$shell: the hidden 'completion' command is offered"
  got=$(offers "zkverify quorum --output " | paste -sd ' ')
  [[ $got == "json text" ]] || fail "$shell: 'zkverify quorum --output ' offers [$got], not [json text]"
  got=$(offers "zkverify step --servers a=h:1,b=h:2 --restart " | paste -sd ' ')
  [[ $got == "a b" ]] || fail "$shell: 'step --servers a=h:1,b=h:2 --restart ' offers [$got], not [a b]"
  got=$(offers "zkverify safe-to-restart --servers a=h:1,h:2 " | paste -sd ' ')
  [[ $got == "a h:2" ]] || fail "$shell: 'safe-to-restart --servers a=h:1,h:2 ' offers [$got], not [a h:2]"
  line="zkverify step --servers a=h:1 --restart a --"
  got=$(offers "$line --" | grep -Fxf <(sort -u <<<"$ours") || true)
  [[ -z $got ]] || fail "$shell: '$line --' offers zkverify's own [$got] after --"
  offers "$line ech" | grep -qx echo || fail "$shell: '$line ech' does not offer the command echo"
  pass "$shell completion: every subcommand and option of --help, values of --output and server names, commands after --"
}

# The installed completions under SHARE (PREFIX/share) for ZKVERIFY, in each shell.
check_completion() {
  local share=$1 zkverify=$2
  check_shell_completion bash "$share/bash-completion/completions/zkverify" "$zkverify"
  check_shell_completion zsh "$share/zsh/vendor-completions/_zkverify" "$zkverify"
  check_shell_completion fish "$share/fish/vendor_completions.d/zkverify.fish" "$zkverify"
}
