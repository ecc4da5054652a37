#!/usr/bin/env bash
# Generates zkverify's man pages and bash completion from the binary's own --help and --version, so
# neither can drift from the options the binary really takes. Run by the build (cmake/install.cmake).
#   gen-docs.sh ZKVERIFY OUTDIR [--no-man]
# Writes OUTDIR/man/zkverify.1.gz and one zkverify-SUBCOMMAND.1.gz per subcommand (help2man), and
# OUTDIR/completion/zkverify (bash). --no-man: the completion only (no help2man on this machine).
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

# Every spelling of every option of `zkverify SUB --help` ("-h,--help" gives -h and --help); with
# --valued, only the options that take a value (a placeholder after the names: DURATION, FILE,
# [NAME=]HOST:PORT,..., text|json...).
option_names() {
  local valued=0
  [[ ${1:-} == --valued ]] && { valued=1; shift; }
  zkverify "$@" --help | help_section Options |
    awk -v valued="$valued" '/^  -/ { if (!valued || $2 ~ /^[][A-Z=:,.]+$/ || $2 ~ /^[a-z]+([|][a-z]+)+$/) { n = split($1, a, ","); for (i = 1; i <= n; i++) print a[i] } }'
}

write_completion() {
  local file=$1 sub
  {
    echo "# bash completion for zkverify. Generated from \`zkverify --help\` by deploy/package/gen-docs.sh"
    echo "# at build time: do not edit."
    echo "_zkverify() {"
    echo "  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} sub='' i"
    echo "  # The subcommand is the first word that is not an option (the top level's take no value)."
    echo "  for ((i = 1; i < COMP_CWORD; i++)); do"
    echo "    [[ \${COMP_WORDS[i]} == -* ]] || { sub=\${COMP_WORDS[i]}; break; }"
    echo "  done"
    echo "  local words valued"
    echo "  case \$sub in"
    echo "    '') words='$(subcommands | tr '\n' ' ')$(option_names | tr '\n' ' ')'; valued='' ;;"
    while read -r sub; do
      echo "    $sub) words='$(option_names "$sub" | tr '\n' ' ')'; valued=' $(option_names --valued "$sub" | tr '\n' ' ')' ;;"
    done < <(subcommands)
    echo "    *) return 0 ;;"
    echo "  esac"
    echo "  # After '--' (step's COMMAND) or after an option that takes a value: bash's default (files)."
    echo "  for ((i = 1; i < COMP_CWORD; i++)); do [[ \${COMP_WORDS[i]} == -- ]] && return 0; done"
    echo "  [[ \$valued == *\" \$prev \"* ]] && return 0"
    echo "  [[ -n \$sub && \$cur != -* ]] && return 0"
    echo "  mapfile -t COMPREPLY < <(compgen -W \"\$words\" -- \"\$cur\")"
    echo "}"
    echo "complete -o default -F _zkverify zkverify"
  } >"$file.tmp"
  bash -n "$file.tmp" || die "the generated completion does not parse"
  mv "$file.tmp" "$file"
}

# One man page: help2man runs PROGRAM --help (PROGRAM is found on PATH).
write_man() {
  local program=$1 name=$2 include=$3 out=$4
  help2man --no-info --no-discard-stderr --section=1 --source="zkverify $version" \
    --version-string="$version" --name="$name" --include="$include" --output="$out.tmp" "$program"
  gzip -9n <"$out.tmp" >"$out"
  rm -f "$out.tmp"
}

write_man_pages() {
  local mandir=$1 wrapdir=$2 sub see_also
  mkdir -p "$mandir" "$wrapdir"
  see_also=$(subcommands | sed 's/.*/.BR zkverify-&(1)/' | paste -sd, | sed 's/,/,\n/g')
  printf '[SEE ALSO]\n%s\n.PP\nThe README in /usr/share/doc/zkverify.\n' "$see_also" >"$wrapdir/top.h2m"
  printf '[SEE ALSO]\n.BR zkverify (1)\n' >"$wrapdir/sub.h2m"
  write_man zkverify "$(summary | sed 's/^zkverify: //')" "$wrapdir/top.h2m" "$mandir/zkverify.1.gz"
  while read -r sub; do
    # help2man takes one program name: a two-line wrapper named zkverify-SUB runs `zkverify SUB`.
    printf '#!/bin/sh\nexec zkverify %s "$@"\n' "$sub" >"$wrapdir/zkverify-$sub"
    chmod +x "$wrapdir/zkverify-$sub"
    PATH="$wrapdir:$PATH" write_man "zkverify-$sub" "$(summary "$sub")" "$wrapdir/sub.h2m" "$mandir/zkverify-$sub.1.gz"
  done < <(subcommands)
}

version=$(zkverify --version | awk '{ print $NF }')
[[ -n $version ]] || die "zkverify --version printed no version"
[[ -n $(subcommands) ]] || die "found no subcommands in zkverify --help"

mkdir -p "$outdir/completion"
write_completion "$outdir/completion/zkverify"
if ((with_man)); then
  rm -rf "$outdir/man"
  write_man_pages "$outdir/man" "$outdir/help2man"
fi
