#!/usr/bin/env bash
# Builds the sidecar's container image zkverify:<project version> (deploy/container/Containerfile)
# with Debian's buildah, from a built binary:
#   scripts/image.sh [BUILD_DIR] [--export DIR] [--no-buildah]
#   BUILD_DIR      the build whose zkverify goes in (default: build); it is copied stripped
#   --export DIR   also write the image's filesystem to DIR (an empty or new directory), to test it
#                  with chroot where containers cannot run
#   --no-buildah   do not build an image: only lay out its root filesystem (needs --export); the
#                  same files the image holds, for machines where buildah cannot work
# The root filesystem: usr/bin/zkverify, every library `ldd` lists at the path it lists it, the
# dynamic loader, etc/passwd and etc/group (root and nonroot 65532), etc/nsswitch.conf, tmp/.
set -euo pipefail

die() { echo "image.sh: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2; exit 64; }

src=$(cd "$(dirname "$0")/.." && pwd)
build_dir=build export_dir="" use_buildah=1 build_dir_given=0
while (($#)); do
  case $1 in
    --export) (($# >= 2)) || usage; export_dir=$2; shift 2 ;;
    --no-buildah) use_buildah=0; shift ;;
    -h | --help) usage ;;
    -*) echo "image.sh: unknown option '$1'" >&2; usage ;;
    *) ((!build_dir_given)) || usage; build_dir=$1; build_dir_given=1; shift ;;
  esac
done
((use_buildah)) || [[ -n $export_dir ]] || die "--no-buildah builds no image: give --export DIR"
[[ $build_dir == /* ]] || build_dir=$src/$build_dir
binary=$build_dir/zkverify
[[ -x $binary ]] || die "no built binary $binary (build first: cmake --build $build_dir --target zkverify)"

# The version from one place: CMakeLists.txt's project(), which the binary must report too.
version=$(sed -n 's/^project(zkverify VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[[ $("$binary" --version) == "zkverify $version" ]] ||
  die "$binary reports '$("$binary" --version)' but CMakeLists.txt says $version: rebuild it"
image=zkverify:$version

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-image.XXXXXX")
container=""
cleanup() {
  [[ -n $container ]] && buildah rm "$container" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

# Lays out the image's root filesystem in $1.
make_rootfs() {
  local root=$1 lib
  mkdir -p "$root/usr/bin" "$root/etc" "$root/tmp"
  chmod 1777 "$root/tmp"
  strip --strip-unneeded -o "$root/usr/bin/zkverify" "$binary"
  # ldd lists "name => /path (addr)" for each library and "/path (addr)" for the loader.
  for lib in $(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  [[ -n $(ldd "$binary" | awk '$1 ~ /^\//') ]] || die "ldd lists no dynamic loader for $binary"
  ldd "$binary" | grep -q 'not found' && die "ldd: a library of $binary is not found"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:zkverify:/tmp:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
  # glibc resolves names without a libnss_* of its own since 2.34 (files and dns are built in).
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
}

make_rootfs "$work/context/rootfs"
cp "$src/deploy/container/Containerfile" "$work/context/"

if ((use_buildah)); then
  command -v buildah >/dev/null || die "buildah is not installed (scripts/install-deps.sh installs it); --no-buildah lays out the root filesystem only"
  echo "image.sh: building $image with buildah" >&2
  previous=$(buildah inspect --type image --format '{{.FromImageID}}' "$image" 2>/dev/null || true)
  buildah bud --quiet --layers=false --build-arg "VERSION=$version" -t "$image" \
    -f "$work/context/Containerfile" "$work/context" >&2 || die "buildah bud failed"
  label=$(buildah inspect --type image --format '{{index .OCIv1.Config.Labels "org.opencontainers.image.version"}}' "$image")
  [[ $label == "$version" ]] || die "$image's org.opencontainers.image.version label is '$label', want $version"
  # The image this tag named before is left untagged: remove it, unless something still uses it.
  current=$(buildah inspect --type image --format '{{.FromImageID}}' "$image")
  if [[ -n $previous && $previous != "$current" ]]; then buildah rmi "$previous" >/dev/null 2>&1 || true; fi
  echo "image.sh: built $image" >&2
fi

if [[ -n $export_dir ]]; then
  mkdir -p "$export_dir"
  [[ -z $(ls -A "$export_dir") ]] || die "--export $export_dir is not empty"
  if ((use_buildah)); then
    # The image's own filesystem, as a container of it sees it.
    container=$(buildah from --quiet "$image")
    mount=$(buildah mount "$container")
    cp -a "$mount/." "$export_dir/"
    buildah umount "$container" >/dev/null
    echo "image.sh: exported $image's filesystem to $export_dir" >&2
  else
    cp -a "$work/context/rootfs/." "$export_dir/"
    echo "image.sh: laid out the image's root filesystem in $export_dir (no image built)" >&2
  fi
fi
echo "$image"
