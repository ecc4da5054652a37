#!/usr/bin/env zsh
# Prints, one a line, the matches zsh's completion system offers for LINE (a Tab typed at its end),
# with the completion functions of DIR first on fpath:
#   zsh -f tests/install/zsh-complete.zsh DIR LINE
# zsh's own completion code runs: an interactive zsh on a pseudo-terminal (zpty) loads compinit and
# DIR's functions; its compadd is wrapped to print each match it is asked to add, after matching
# against the word on the line, as a real Tab would. The caller bounds the time (timeout). With
# $ZKC_COMPDUMP set, compinit keeps its dump there (a second run skips scanning fpath: 1 s or more).
emulate -L zsh
zmodload zsh/zpty || { print -u2 "zsh-complete: no zsh/zpty module"; exit 2; }
(($# == 2)) || { print -u2 "usage: zsh-complete.zsh DIR LINE"; exit 2; }
dir=${1:A} line=$2
if [[ -n $ZKC_COMPDUMP ]]; then dump="-d ${(q)ZKC_COMPDUMP}"; else dump=-D; fi

# Sourced by the interactive zsh. The markers are printed, never typed, so the terminal's echo of
# what we type cannot be mistaken for them.
setup=$(mktemp) || exit 2
trap 'rm -f $setup; zpty -d z 2>/dev/null' EXIT
cat >$setup <<EOF
PROMPT='' RPROMPT=''
fpath=(${(q)dir} \$fpath)
autoload -Uz compinit && compinit -u $dump
bindkey '^I' complete-word
zstyle ':completion:*' list-prompt ''
zstyle ':completion:*' insert-tab false
compadd() {
  # The calls that only ask (-O, -A, -D: into an array) or that add nothing to the list are passed on.
  if [[ \${@[1,(i)--]} == *\ -[OAD]\ * || \${@[1,(i)--]} == -[OAD]\ * ]]; then builtin compadd "\$@"; return; fi
  local -a __zkc_hits
  builtin compadd -O __zkc_hits "\$@"
  local hit
  for hit in \$__zkc_hits; do print -r -- "ZKC-HIT:\$hit"; done
  builtin compadd "\$@"
}
zkc_end() { print -r -- "ZKC-END"; }
comppostfuncs=(zkc_end)
print -r -- "ZKC-READY"
EOF

zpty z zsh -f -i
zpty -w z "source ${(q)setup}"
zpty -r z out '*ZKC-READY*' || { print -u2 "zsh-complete: the shell did not start"; exit 2; }
zpty -w -n z "$line"$'\t'
zpty -r z out '*ZKC-END*' || { print -u2 "zsh-complete: no completion ended"; exit 2; }
for l in ${(f)out}; do
  l=${l%$'\r'}
  [[ $l == *ZKC-HIT:* ]] && print -r -- ${l#*ZKC-HIT:}
done
exit 0
