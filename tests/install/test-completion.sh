#!/usr/bin/env bash
# Tests the completion scripts of a built zkverify in bash, zsh and fish, without installing it and
# without a lab: deploy/package/gen-docs.sh --no-man writes them (`zkverify completion SHELL`), and
# common.sh's checks drive each shell's completion over them (test-package.sh runs the same checks
# on the installed files).
#   tests/install/test-completion.sh ZKVERIFY
# Exit 0 when all passed; the first failure is printed as FAIL: ... and exits 1.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
(($# == 1)) || { echo "usage: tests/install/test-completion.sh ZKVERIFY" >&2; exit 64; }
zkverify=$(realpath "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-test-completion.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/install/common.sh
source "$src/tests/install/common.sh"

"$src/deploy/package/gen-docs.sh" "$zkverify" "$work" --no-man >"$work/gen-docs.log" 2>&1 ||
  { cat "$work/gen-docs.log" >&2; fail "gen-docs.sh --no-man failed"; }
check_shell_completion bash "$work/completion/zkverify" "$zkverify"
check_shell_completion zsh "$work/completion/_zkverify" "$zkverify"
check_shell_completion fish "$work/completion/zkverify.fish" "$zkverify"
