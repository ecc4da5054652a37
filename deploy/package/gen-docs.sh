#!/usr/bin/env bash
# Generates zkverify's man pages from the binary's own --help and --version, and its completion
# scripts with `zkverify completion SHELL`, so none can drift from the options the binary really
# takes. Run by the build (cmake/install.cmake).
#   gen-docs.sh ZKVERIFY OUTDIR [--no-man]
# Writes OUTDIR/man/zkverify.1.gz and one zkverify-SUBCOMMAND.1.gz per subcommand (help2man; the
# help's "Examples:" paragraph becomes EXAMPLES, its "Exit status:" one EXIT STATUS), and
# OUTDIR/completion/zkverify (bash), _zkverify (zsh), zkverify.fish (fish). --no-man: the
# completions only (no help2man on this machine).
set -euo pipefail

die() { echo "gen-docs: $*" >&2; exit 1; }

(($# >= 2)) || die "usage: gen-docs.sh ZKVERIFY OUTDIR [--no-man]"
zkverify=$(realpath "$1")
outdir=$2
with_man=1
[[ ${3:-} == --no-man ]] && with_man=0
[[ -x $zkverify ]] || die "$zkverify is not an executable"

# The binary is run as plain "zkverify" (found on PATH), so its usage lines name it that way.
bindir=$(dirname "$zkverify")
export PATH="$bindir:$PATH"
[[ $(basename "$zkverify") == zkverify ]] || die "the binary must be named zkverify (got $zkverify)"

# The lines of one section of a CLI11 help text ("Options:", "Subcommands:"), up to the next blank line.
help_section() { awk -v want="$1:" '$0 == want { on = 1; next } on && /^$/ { exit } on { print }'; }

# Subcommand names, in --help order.
subcommands() { zkverify --help | help_section Subcommands | awk '/^  [a-z]/ { print $1 }'; }

# A subcommand's one-line description: the first line of its --help.
summary() { zkverify "$@" --help | head -n 1; }

# The completion scripts, written by the binary from its own command line (`zkverify completion
# SHELL`); each is checked to parse when its shell is installed.
write_completions() {
  local dir=$1 shell file
  mkdir -p "$dir"
  for shell in bash zsh fish; do
    case $shell in
      bash) file=zkverify ;;
      zsh) file=_zkverify ;;
      fish) file=zkverify.fish ;;
    esac
    zkverify completion "$shell" >"$dir/$file.tmp" || die "zkverify completion $shell failed"
    [[ -s $dir/$file.tmp ]] || die "zkverify completion $shell printed nothing"
    if command -v "$shell" >/dev/null; then
      "$shell" -n "$dir/$file.tmp" || die "the generated $shell completion does not parse"
    fi
    mv "$dir/$file.tmp" "$dir/$file"
  done
}

# A help text's "Exit status:" paragraph (up to the next blank line or the end) as man(7) .TP
# entries: "  64  usage error" gives ".TP", ".B 64", "usage error". A line with no code first
# continues the previous entry.
exit_status_entries() {
  awk '/^Exit status: *$/ { on = 1; next }
       on && /^[[:space:]]*$/ { exit }
       on {
         line = $0; sub(/^[[:space:]]+/, "", line); gsub(/\\/, "\\e", line)
         if ($1 ~ /^[0-9]+$/) { sub(/^[0-9]+[[:space:]]*/, "", line); printf ".TP\n.B %s\n", $1 }
         if (line ~ /^[.\047]/) line = "\\&" line
         print line
       }'
}

# A help text without its "Exit status:" paragraph (nor the blank line that ends it), so that help2man
# leaves it out of DESCRIPTION and OPTIONS and the EXIT STATUS section is its only copy.
without_exit_status() {
  awk '/^Exit status: *$/ { skip = 1; next } skip && /^[[:space:]]*$/ { skip = 0; next } !skip { print }'
}

# One man page of PROGRAM, whose --help help2man reads (PROGRAM is found on PATH), with the sections of
# INCLUDE (help2man's include file).
write_man() {
  local program=$1 name=$2 include=$3 out=$4
  help2man --no-info --no-discard-stderr --section=1 --source="zkverify $version" \
    --version-string="$version" --name="$name" --include="$include" --output="$out.tmp" "$program"
  gzip -9n <"$out.tmp" >"$out"
  rm -f "$out.tmp"
}

# The man page of `zkverify ARGS`, named PAGE, with SEE_ALSO (roff). help2man reads PAGE --help: a
# wrapper in $wrapdir/PAGE/ that prints the help text without its Exit status paragraph, which goes
# into an EXIT STATUS section of the include file instead; anything else runs `zkverify ARGS`.
write_page() {
  local page=$1 see_also=$2 help status
  shift 2
  mkdir -p "$wrapdir/$page"
  help=$(zkverify "$@" --help) || die "zkverify $* --help failed"
  without_exit_status <<<"$help" >"$wrapdir/$page/help.txt"
  printf '#!/bin/sh\n[ "$1" = --help ] && exec cat "%s"\nexec "%s" %s "$@"\n' \
    "$wrapdir/$page/help.txt" "$zkverify" "$*" >"$wrapdir/$page/$page"
  chmod +x "$wrapdir/$page/$page"
  status=$(exit_status_entries <<<"$help")
  {
    [[ -z $status ]] || printf '[EXIT STATUS]\n%s\n' "$status"
    printf '[SEE ALSO]\n%s\n' "$see_also"
  } >"$wrapdir/$page/include.h2m"
  PATH="$wrapdir/$page:$PATH" write_man "$page" "$(summary "$@" | sed 's/^zkverify: //')" \
    "$wrapdir/$page/include.h2m" "$mandir/$page.1.gz"
}

write_man_pages() {
  local sub see_also
  mandir=$1 wrapdir=$2
  mkdir -p "$mandir" "$wrapdir"
  see_also=$(subcommands | sed 's/.*/.BR zkverify-&(1)/' | paste -sd, | sed 's/,/,\n/g')
  write_page zkverify "$see_also"$'\n.PP\nThe README in /usr/share/doc/zkverify.'
  while read -r sub; do
    write_page "zkverify-$sub" '.BR zkverify (1)' "$sub"
  done < <(subcommands)
}

version=$(zkverify --version | awk '{ print $NF }')
[[ -n $version ]] || die "zkverify --version printed no version"
[[ -n $(subcommands) ]] || die "found no subcommands in zkverify --help"

write_completions "$outdir/completion"
if ((with_man)); then
  rm -rf "$outdir/man"
  write_man_pages "$outdir/man" "$outdir/help2man"
fi
