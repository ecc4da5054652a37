#!/usr/bin/env bash
# Builds the Debian package zkverify_<version>_<arch>.deb with cpack (cmake/install.cmake).
#   scripts/package.sh                 configures a clean Release build in a temporary directory,
#                                      builds the binary (not the tests) and packages it
#   scripts/package.sh BUILD_DIR       packages that build (CI: the already-built build/); a BUILD_DIR
#                                      that holds no build yet is configured there as Release first
#   --output DIR                       where the .deb goes (default: the current directory)
# Prints the .deb's path on its last line.
set -euo pipefail

die() { echo "package.sh: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 64; }

src=$(cd "$(dirname "$0")/.." && pwd)
build_dir="" output=$PWD
while (($#)); do
  case $1 in
    --output) (($# >= 2)) || usage; output=$2; shift 2 ;;
    -h | --help) usage ;;
    -*) echo "package.sh: unknown option '$1'" >&2; usage ;;
    *) [[ -z $build_dir ]] || usage; build_dir=$1; shift ;;
  esac
done
mkdir -p "$output"
output=$(cd "$output" && pwd)

for tool in cmake cpack dpkg-shlibdeps fakeroot; do
  command -v "$tool" >/dev/null || die "$tool is not installed (scripts/install-deps.sh installs it)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-package.XXXXXX")
trap 'rm -rf "$work"' EXIT

if [[ -z $build_dir ]]; then
  build_dir=$work/build
fi
if [[ ! -f $build_dir/CMakeCache.txt ]]; then
  # Debian's hardening flags (stack protector, fortify, relro, bindnow), as a Debian package gets
  # them; without -g, since the package's binary is stripped anyway.
  echo "package.sh: configuring a Release build in $build_dir" >&2
  DEB_BUILD_MAINT_OPTIONS=hardening=+all
  export DEB_BUILD_MAINT_OPTIONS
  cxxflags=" $(dpkg-buildflags --get CPPFLAGS) $(dpkg-buildflags --get CXXFLAGS) "
  cmake -S "$src" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS=${cxxflags// -g / }" \
    "-DCMAKE_EXE_LINKER_FLAGS=$(dpkg-buildflags --get LDFLAGS)" >&2
fi
build_dir=$(cd "$build_dir" && pwd)
grep -q '^ZKVERIFY_SANITIZE:BOOL=ON' "$build_dir/CMakeCache.txt" &&
  die "$build_dir is a sanitizer build (ZKVERIFY_SANITIZE=ON): package a normal one"
grep -q '^ZKVERIFY_DOCS:BOOL=OFF' "$build_dir/CMakeCache.txt" &&
  die "$build_dir was configured with ZKVERIFY_DOCS=OFF: the package needs its man pages and completion"

# Only what the package holds: nothing is rebuilt when the build is up to date.
cmake --build "$build_dir" -j "${ZKVERIFY_JOBS:-2}" --target zkverify zkverify_docs zkverify_changelog >&2
[[ -n $(find "$build_dir/docs/man" -name '*.1.gz' 2>/dev/null) ]] ||
  die "$build_dir has no man pages (help2man was missing when it was configured?): install help2man, reconfigure"

(cd "$work" && cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/out" >&2) ||
  die "cpack failed (see its output above)"
debs=("$work"/out/zkverify_*.deb)
if ((${#debs[@]} != 1)) || [[ ! -f ${debs[0]} ]]; then die "cpack made no single zkverify_*.deb"; fi
mv -f "${debs[0]}" "$output/"
echo "$output/$(basename "${debs[0]}")"
