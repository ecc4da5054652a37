#!/usr/bin/env bash
# Tests the .deb made from an existing build (no second compile):
#   tests/install/test-package.sh BUILD_DIR
# Checks `cmake --install BUILD_DIR --prefix P`; builds zkverify_<version>_<arch>.deb with
# scripts/package.sh BUILD_DIR, checks its control fields, Depends (exactly the packages of the
# libraries the binary loads) and stripped binary, installs it (with $CI set: into this machine with
# apt-get install ./FILE, which must plan nothing else; otherwise
# into a throwaway root with dpkg --root), runs the installed `zkverify --version`, its man page and
# bash, zsh and fish completions, and `zkverify quorum` against a real three-server lab (under the lab lock), then
# removes it (dpkg -r) and checks every file `dpkg -L` listed is gone; finally runs lintian.
# Exit 0 when all passed; the first failure is printed as FAIL: ... and exits 1.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
(($# == 1)) || { echo "usage: tests/install/test-package.sh BUILD_DIR" >&2; exit 64; }
[[ -f $1/CMakeCache.txt ]] || { echo "test-package.sh: $1 is not a CMake build directory" >&2; exit 64; }
build_dir=$(cd "$1" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-test-package.XXXXXX")
installed_on_host=0
sudo_cmd=()
[[ $(id -u) == 0 ]] || sudo_cmd=(sudo)
cleanup() {
  stop_lab
  if ((installed_on_host)) && dpkg-query -W zkverify >/dev/null 2>&1; then "${sudo_cmd[@]}" dpkg -r zkverify >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=tests/install/common.sh
source "$src/tests/install/common.sh"

read_project_version
changelog_version=$(sed -n '1s/^zkverify (\([^)]*\)).*/\1/p' "$src/deploy/package/changelog")
[[ $changelog_version == "$version" ]] ||
  fail "deploy/package/changelog's newest entry is $changelog_version, the project is $version: add an entry"

# --- cmake --install, from the same build ---
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "cmake --install $build_dir --prefix $prefix failed"; }
for f in bin/zkverify share/man/man1/zkverify.1.gz share/man/man1/zkverify-quorum.1.gz \
  share/bash-completion/completions/zkverify share/zsh/vendor-completions/_zkverify \
  share/fish/vendor_completions.d/zkverify.fish share/doc/zkverify/README.md share/doc/zkverify/LICENSE; do
  [[ -s $prefix/$f ]] || fail "cmake --install put no $f under the prefix"
done
[[ $("$prefix/bin/zkverify" --version) == "zkverify $version" ]] || fail "the installed binary's --version is not $version"
zcat "$prefix/share/man/man1/zkverify-quorum.1.gz" | grep -qF -- '\-\-servers' ||
  fail "zkverify-quorum.1 does not document --servers (it should come from --help)"
pass "cmake --install --prefix: the binary, man pages from --help, bash, zsh and fish completions, README and LICENSE"

# --- the package ---
deb=$("$src/scripts/package.sh" "$build_dir" --output "$work" 2>"$work/package.log" | tail -n 1) ||
  { cat "$work/package.log" >&2; fail "scripts/package.sh $build_dir failed"; }
arch=$(dpkg --print-architecture)
[[ $(basename "$deb") == "zkverify_${version}_${arch}.deb" ]] || fail "package named $(basename "$deb"), want zkverify_${version}_${arch}.deb"
pass "built $(basename "$deb")"

field() { dpkg-deb -f "$deb" "$1"; }
[[ $(field Package) == zkverify ]] || fail "Package: $(field Package)"
[[ $(field Version) == "$version" ]] || fail "Version: $(field Version), want $version"
for f in Section Maintainer Description Homepage; do
  [[ -n $(field "$f") ]] || fail "the package has no $f field"
done
depends=$(field Depends)
[[ $depends == *libzookeeper-mt2* ]] || fail "Depends lacks libzookeeper-mt2: $depends"
# Exactly the packages that own the libraries the binary links (its NEEDED entries; what those load
# in turn is their packages' own dependencies), found here independently of dpkg-shlibdeps: nothing
# it does not need, nothing missing.
depended=$(sed 's/([^)]*)//g; s/|[^,]*//g; s/,/\n/g; s/ //g' <<<"$depends" | sort -u)
needed=$(readelf -d "$build_dir/zkverify" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
loaded=$(ldd "$build_dir/zkverify" | awk -v needed="$needed" 'BEGIN { split(needed, n, "\n"); for (i in n) want[n[i]] = 1 }
  /=>/ && ($1 in want) {print $3}' | while read -r lib; do
  dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "/usr$lib" 2>/dev/null ||
    fail "no package owns $lib, which zkverify loads"
done | cut -d: -f1 | sort -u)
[[ $depended == "$loaded" ]] || fail "Depends names [$(paste -sd' ' <<<"$depended")], the linked libraries' packages are [$(paste -sd' ' <<<"$loaded")]"
pass "control: Version $version, Section $(field Section), Depends: $depends (exactly the linked libraries' packages)"

mkdir "$work/contents"
dpkg-deb -x "$deb" "$work/contents"
readelf -S "$work/contents/usr/bin/zkverify" | grep -qE '\.(symtab|debug_info)' &&
  fail "usr/bin/zkverify in the package is not stripped"
pass "the packaged binary is stripped ($(stat -c %s "$work/contents/usr/bin/zkverify") bytes)"

# --- install ---
if [[ -n ${CI:-} ]]; then
  dpkg-query -W zkverify >/dev/null 2>&1 && fail "zkverify is already installed on this machine; dpkg -r zkverify first"
  dpkg_root=("${sudo_cmd[@]}" dpkg)
  # As a user would: apt-get, which must want to install this package and nothing else here (its
  # Depends are already on a machine that built it).
  planned=$(apt-get install --simulate --no-download "$deb" 2>&1 | sed -n 's/^Inst \([^ ]*\).*/\1/p')
  [[ $planned == zkverify ]] || fail "apt-get would install [$(paste -sd' ' <<<"$planned")], want [zkverify]"
  "${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$work/dpkg.log" 2>&1 ||
    { cat "$work/dpkg.log" >&2; fail "apt-get install $deb failed"; }
  installed_on_host=1
  root=/
  pass "installed with apt-get install ./$(basename "$deb") (it planned zkverify alone)"
else
  # A throwaway root with a dpkg database of its own; the libraries come from this machine (the
  # package's Depends are checked against it with dpkg-query instead).
  root=$work/root
  mkdir -p "$root"/var/lib/dpkg/{info,updates,triggers,alternatives}
  touch "$root"/var/lib/dpkg/{status,available}
  dpkg_root=(dpkg --root="$root" --force-depends --force-script-chrootless)
  "${dpkg_root[@]}" -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg --root -i failed"; }
  # shellcheck disable=SC2013 # package names, one per word
  for dep in $(sed 's/([^)]*)//g; s/,/ /g; s/|[^,]*//g' <<<"$depends"); do
    dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q "install ok installed" ||
      fail "Depends names $dep, which is not installed here"
  done
  pass "installed into the throwaway root $root (dpkg --root)"
fi
zkverify=${root%/}/usr/bin/zkverify

out=$("$zkverify" --version)
[[ $out == "zkverify $version" ]] || fail "installed zkverify --version printed '$out', want 'zkverify $version'"
pass "zkverify --version: $out"
for sub in "" $("$zkverify" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p'); do
  page=${root%/}/usr/share/man/man1/zkverify${sub:+-$sub}.1.gz
  zcat "$page" | grep -q '^\.TH' || fail "no man page $page"
done
pass "a man page for zkverify and for each subcommand"
check_completion "${root%/}/usr/share" "$zkverify"
for f in README.md copyright changelog.gz; do
  [[ -f ${root%/}/usr/share/doc/zkverify/$f ]] || fail "no /usr/share/doc/zkverify/$f"
done
pass "/usr/share/doc/zkverify: README.md, copyright, changelog.gz"

start_lab
rc=0
"$zkverify" quorum --servers "$servers" >"$work/quorum.out" 2>&1 || rc=$?
((rc == 0)) || { cat "$work/quorum.out" >&2; fail "the installed zkverify quorum exited $rc against the lab"; }
pass "installed zkverify quorum against the lab: $(head -n 1 "$work/quorum.out")"
stop_lab

# --- remove ---
"${dpkg_root[@]}" -L zkverify >"$work/listed"
"${dpkg_root[@]}" -r zkverify >"$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log" >&2; fail "dpkg -r failed"; }
installed_on_host=0
left=()
while read -r path; do
  [[ $path == /. ]] && continue
  target=${root%/}$path
  if [[ -d $target && ! -L $target ]]; then
    # A directory stays while something else is in it, or while another package owns it (fish-common
    # ships /usr/share/fish/vendor_completions.d empty: it stays, emptied, when zkverify goes).
    if [[ -z $(ls -A "$target") ]] && ! "${dpkg_root[@]}" -S "$path" >/dev/null 2>&1; then
      left+=("$path (empty directory)")
    fi
  elif [[ -e $target || -L $target ]]; then
    left+=("$path")
  fi
done <"$work/listed"
((${#left[@]} == 0)) || fail "dpkg -r left behind: ${left[*]}"
pass "dpkg -r removed all $(grep -vc '^/\.$' "$work/listed") paths dpkg -L listed"

# --- lintian ---
rc=0
lintian --fail-on error "$deb" >"$work/lintian.out" 2>&1 || rc=$?
sed -i '/^running with root privileges is not recommended!$/d' "$work/lintian.out"
((rc == 0)) || { cat "$work/lintian.out" >&2; fail "lintian reports errors (exit $rc)"; }
if [[ -s $work/lintian.out ]]; then
  echo "lintian (no error):"; sed 's/^/  /' "$work/lintian.out"
else
  pass "lintian: clean"
fi
echo "PASS: test-package.sh"
