#!/usr/bin/env bash
# Tests deploy/package/gen-docs.sh's man pages apart from zkverify's own help texts: a fake
# `zkverify` prints fixed ones (a subcommand's ends with an "Examples:" and an "Exit status:"
# paragraph, as the real ones do), and the pages must have EXAMPLES and EXIT STATUS sections, the
# exit status only there (not in DESCRIPTION or OPTIONS), and keep what follows the paragraph.
#   tests/install/test-gen-docs.sh
# Needs help2man. Exit 0 when all passed; the first failure is printed as FAIL: ... and exits 1.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-test-gen-docs.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=tests/install/common.sh
source "$src/tests/install/common.sh"
command -v help2man >/dev/null || fail "help2man is not installed (scripts/install-deps.sh installs it)"

mkdir -p "$work/bin"
cat >"$work/bin/zkverify" <<'FAKE'
#!/usr/bin/env bash
case "$*" in
  --version) echo "zkverify 9.8.7" ;;
  --help) printf '%s\n' "zkverify: a fake for gen-docs.sh's test" "Usage: zkverify [OPTIONS] SUBCOMMAND" "" \
    "Options:" "  -h,--help                   Print this help message and exit" "" \
    "Subcommands:" "  quorum                      Exit 0 only when the ensemble is healthy" \
    "  order                       Print the restart order" ;;
  "quorum --help") cat <<'HELP' ;;
Exit 0 only when the ensemble is healthy
Usage: zkverify quorum [OPTIONS]

Options:
  -h,--help                   Print this help message and exit
  --servers HOST:PORT,... REQUIRED
                              The ensemble

Examples:
  $ zkverify quorum --servers pzoo-0=pzoo-0.pzoo:2181,pzoo-1=pzoo-1.pzoo:2181
  $ zkverify quorum --servers zk:2181 --output json

Exit status:
  0   healthy: safe to go on
  1   degraded
  2   critical
  64  usage error
  70  internal error
  74  I/O error
HELP
  # The paragraph in the middle: what follows it stays in the page.
  "order --help") printf '%s\n' "Print the restart order" "Usage: zkverify order [OPTIONS]" "" \
    "Options:" "  -h,--help                   Print this help message and exit" "" \
    "Exit status:" "  0   printed" "  64  usage error: a bad --servers" "      list, or none" "" \
    "Written by the zkverify fakers." ;;
  "completion bash" | "completion zsh" | "completion fish") echo "# a fake $2 completion" ;;
  *) echo "fake zkverify: unexpected arguments: $*" >&2; exit 64 ;;
esac
FAKE
chmod +x "$work/bin/zkverify"

"$src/deploy/package/gen-docs.sh" "$work/bin/zkverify" "$work/out" >"$work/gen-docs.log" 2>&1 ||
  { cat "$work/gen-docs.log" >&2; fail "gen-docs.sh failed on the fake zkverify"; }
for f in zkverify _zkverify zkverify.fish; do
  [[ -s $work/out/completion/$f ]] || fail "gen-docs.sh wrote no completion/$f"
done
pass "gen-docs.sh: completion/zkverify, _zkverify and zkverify.fish from \`zkverify completion SHELL\`"

# The roff of one section (from its .SH line to the next), of man page $1.
section() { zcat "$work/out/man/$1.1.gz" | awk -v want="$2" '/^\.SH/ { on = ($0 == want); next } on { print }'; }
page() { zcat "$work/out/man/$1.1.gz"; }

status=$(section zkverify-quorum '.SH "EXIT STATUS"')
[[ -n $status ]] || fail "zkverify-quorum.1 has no EXIT STATUS section: $(page zkverify-quorum)"
want=$'.TP\n.B 0\nhealthy: safe to go on\n.TP\n.B 1\ndegraded\n.TP\n.B 2\ncritical\n.TP\n.B 64\nusage error'
want+=$'\n.TP\n.B 70\ninternal error\n.TP\n.B 74\nI/O error'
[[ $status == "$want" ]] || fail "zkverify-quorum.1's EXIT STATUS is [$status], want [$want]"
page zkverify-quorum | grep -qi 'exit status:' && fail "zkverify-quorum.1 still has the help's 'Exit status:' paragraph"
page zkverify-quorum | grep -q '^I/O error' || fail "no I/O error line"
[[ $(page zkverify-quorum | grep -c 'I/O error') == 1 ]] || fail "zkverify-quorum.1 says 'I/O error' more than once"
section zkverify-quorum '.SH EXAMPLES' | grep -qF 'zkverify quorum --servers zk:2181 --output json' ||
  fail "zkverify-quorum.1 has no EXAMPLES section with the help's examples: $(page zkverify-quorum)"
section zkverify-quorum '.SH OPTIONS' | grep -qF -- '\-\-servers' || fail "zkverify-quorum.1's OPTIONS lost --servers"
order=$(page zkverify-quorum | grep '^\.SH' | paste -sd ' ')
[[ $order == *'OPTIONS .SH "EXIT STATUS" .SH EXAMPLES'* ]] || fail "zkverify-quorum.1's sections are in the order [$order]"
pass "zkverify-quorum.1: EXIT STATUS from the help's Exit status paragraph (only there), EXAMPLES from Examples"

status=$(section zkverify-order '.SH "EXIT STATUS"')
want=$'.TP\n.B 0\nprinted\n.TP\n.B 64\nusage error: a bad \\-\\-servers\nlist, or none'
[[ $status == "${want//\\-/-}" || $status == "$want" ]] || fail "zkverify-order.1's EXIT STATUS is [$status], want [$want]"
page zkverify-order | grep -q 'zkverify fakers' || fail "zkverify-order.1 lost the paragraph after Exit status"
[[ -z $(section zkverify '.SH "EXIT STATUS"') ]] || fail "zkverify.1 has an EXIT STATUS its help has not"
page zkverify | grep -q 'zkverify-quorum' || fail "zkverify.1 does not name zkverify-quorum(1) in SEE ALSO"
pass "gen-docs.sh: an Exit status paragraph in the middle of a help, a continued entry, a help without one"
