#!/usr/bin/env bash
# Fetches the ZooKeeper server lines that Debian 12 does not ship, by package name, from Debian's
# other suites: 3.4 is bullseye's libzookeeper-java, 3.9 trixie's (3.8 is bookworm's own `zookeeper`,
# installed by scripts/install-deps.sh). Each runs on bookworm's Java 17 and jars (tests/lab/zklab
# builds the classpath).
#
#   scripts/fetch-zookeeper.sh [LINE...]     LINE: 3.4 or 3.9, or a version of one (3.4.13, 3.9.3);
#                                            default both. Prints each line's directory, one per line:
#                                            CACHE/zookeeper/VERSION (usr/share/java/zookeeper-VERSION.jar
#                                            inside, as the package lays it out).
#
# Nothing of the system's apt configuration changes: apt-get runs with a sources list of its own
# (the suite, on the mirror that /etc/apt names for bookworm), its own lists and cache, under
# CACHE=${ZKVERIFY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zkverify}. A line already fetched needs
# no network. Fails naming the package when it cannot be fetched.
set -euo pipefail

cache=${ZKVERIFY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/zkverify}
die() { echo "fetch-zookeeper: $*" >&2; exit 1; }

# The suite that ships each line, and the version prefix its package must have.
suite_of() {
  case $1 in
    3.4 | 3.4.*) echo bullseye ;;
    3.9 | 3.9.*) echo trixie ;;
    3.8 | 3.8.*) die "3.8 is bookworm's own: apt-get install zookeeper (scripts/install-deps.sh does)" ;;
    *) die "no Debian suite ships ZooKeeper '$1' (lines: 3.4 from bullseye, 3.8 from bookworm, 3.9 from trixie)" ;;
  esac
}

# The URI of the Debian archive that the system's own apt sources name for bookworm.
mirror() {
  local uri
  uri=$(awk '/^URIs:/ { uris = $2 } /^Suites:/ && / bookworm( |$)/ && uris !~ /security/ { print uris; exit }' \
    /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [[ -n $uri ]] || uri=$(awk '$1 == "deb" && $0 ~ / bookworm( |$)/ && $0 !~ /security/ {
      for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list 2>/dev/null || true)
  [[ -n $uri ]] || die "no bookworm archive in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
  echo "$uri"
}

# A directory already fetched for the line (version prefix), if any.
fetched() {
  local dir
  for dir in "$cache"/zookeeper/"$1"*; do
    [[ -f $dir/.complete ]] && { echo "$dir"; return 0; }
  done
  return 1
}

fetch() {
  local line=$1 suite; suite=$(suite_of "$line")
  local apt=$cache/apt/$suite
  mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/download"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main" >"$apt/sources.list"
  local -a options=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=- \
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt" -o "Dir::Cache::archives=$apt/archives" \
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
  timeout 300 apt-get -qq "${options[@]}" update >"$apt/update.log" 2>&1 ||
    die "cannot read $suite's package list (libzookeeper-java): see $apt/update.log"
  rm -f "$apt/download"/*.deb
  (cd "$apt/download" && timeout 300 apt-get -qq "${options[@]}" download "libzookeeper-java/$suite") \
    >"$apt/download.log" 2>&1 || die "cannot download libzookeeper-java from $suite: see $apt/download.log"
  local deb; deb=$(ls "$apt/download"/libzookeeper-java_*.deb)
  local version; version=$(dpkg-deb -f "$deb" Version)
  version=${version%%-*}
  [[ $version == "$line"* ]] || die "$suite's libzookeeper-java is $version, not $line"
  local dir=$cache/zookeeper/$version
  rm -rf "$dir.partial"
  mkdir -p "$cache/zookeeper"
  dpkg-deb -x "$deb" "$dir.partial"
  [[ -f $dir.partial/usr/share/java/zookeeper-$version.jar ]] ||
    die "libzookeeper-java $version from $suite has no usr/share/java/zookeeper-$version.jar"
  touch "$dir.partial/.complete"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
  echo "$dir"
}

(($#)) || set -- 3.4 3.9
for line in "$@"; do
  suite_of "$line" >/dev/null
  fetched "$line" || fetch "$line"
done
