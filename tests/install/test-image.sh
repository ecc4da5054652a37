#!/usr/bin/env bash
# Tests the sidecar's container image made from an existing build (no compile):
#   tests/install/test-image.sh BUILD_DIR [--no-buildah]
# Builds zkverify:<version> with scripts/image.sh BUILD_DIR and exports its filesystem (with
# --no-buildah, or when buildah cannot build here, lays out the same root directly), checks what it
# holds (no shell, a non-root user) and the image's metadata, then runs its zkverify in a chroot as
# that user (containers cannot run on every build machine) against a real three-server lab:
# --version, probe, and serve answering /readyz on loopback. The Kubernetes manifests must name the
# image the script builds. A trap stops the sidecar and the lab whatever happens.
set -euo pipefail

src=$(cd "$(dirname "$0")/../.." && pwd)
usage() { echo "usage: tests/install/test-image.sh BUILD_DIR [--no-buildah]" >&2; exit 64; }
(($# >= 1 && $# <= 2)) || usage
[[ -x $1/zkverify ]] || { echo "test-image.sh: no built $1/zkverify" >&2; exit 64; }
build_dir=$(cd "$1" && pwd)
image_args=()
if (($# == 2)); then [[ $2 == --no-buildah ]] || usage; image_args=(--no-buildah); fi
[[ $(id -u) == 0 ]] || { echo "test-image.sh: chroot needs root" >&2; exit 64; }

work=$(mktemp -d "${TMPDIR:-/tmp}/zkverify-test-image.XXXXXX")
serve_pid=""
cleanup() {
  if [[ -n $serve_pid ]] && kill -0 "$serve_pid" 2>/dev/null; then
    kill -TERM "$serve_pid" 2>/dev/null || true
    sleep 1
    kill -KILL "$serve_pid" 2>/dev/null || true
  fi
  stop_lab
  rm -rf "$work"
}
trap cleanup EXIT
# shellcheck source=tests/install/common.sh
source "$src/tests/install/common.sh"

read_project_version

# --- the image and its filesystem ---
root=$work/root
if ! image=$("$src/scripts/image.sh" "$build_dir" --export "$root" "${image_args[@]}" 2>"$work/image.log" | tail -n 1); then
  cat "$work/image.log" >&2
  fail "scripts/image.sh ${image_args[*]} failed (--no-buildah lays out the root without buildah)"
fi
[[ $image == "zkverify:$version" ]] || fail "image.sh built '$image', want zkverify:$version"
if ((${#image_args[@]} == 0)); then
  inspect() { buildah inspect --type image --format "$1" "$image"; }
  [[ $(inspect '{{index .OCIv1.Config.Labels "org.opencontainers.image.version"}}') == "$version" ]] ||
    fail "the image's org.opencontainers.image.version label is not $version"
  [[ $(inspect '{{.OCIv1.Config.User}}') == 65532:65532 ]] || fail "the image's USER is $(inspect '{{.OCIv1.Config.User}}')"
  [[ $(inspect '{{.OCIv1.Config.Entrypoint}}') == "[zkverify]" ]] || fail "ENTRYPOINT is $(inspect '{{.OCIv1.Config.Entrypoint}}')"
  pass "built $image: label version $version, USER 65532:65532, ENTRYPOINT [zkverify]"
else
  pass "laid out the image's root without buildah"
fi

for sh in bin/sh usr/bin/sh bin/bash usr/bin/bash bin/busybox; do
  [[ ! -e $root/$sh ]] || fail "the image has a shell: /$sh"
done
grep -q '^nonroot:x:65532:65532:' "$root/etc/passwd" || fail "no non-root user 65532 in the image's /etc/passwd"
files=$(cd "$root" && find . -type f | sort)
pass "the image holds $(wc -l <<<"$files") files, no shell: $(tr '\n' ' ' <<<"$files")"

# Runs the image's zkverify as the image's user, confined to its filesystem.
in_image() { chroot --userspec=65532:65532 "$root" zkverify "$@"; }

out=$(in_image --version)
[[ $out == "zkverify $version" ]] || fail "the image's zkverify --version printed '$out'"
pass "chroot: zkverify --version: $out"

# --- against the lab ---
start_lab
rc=0
in_image probe --servers "$servers" --local pzoo-0 >"$work/probe.out" 2>&1 || rc=$?
((rc == 0)) || { cat "$work/probe.out" >&2; fail "the image's zkverify probe exited $rc"; }
pass "chroot: zkverify probe --local pzoo-0: $(head -n 1 "$work/probe.out")"

# By name, as the manifests list the servers: Kubernetes mounts /etc/hosts and /etc/resolv.conf into
# the container, and the image (no NSS modules of its own) must resolve through them.
named=$(sed -E 's/(pzoo-[0-9])=127\.0\.0\.1:/\1=\1.pzoo:/g' <<<"$servers")
[[ $named != "$servers" ]] || fail "could not name the lab's servers in $servers"
printf '127.0.0.1 localhost\n127.0.0.1 pzoo-0.pzoo pzoo-1.pzoo pzoo-2.pzoo\n' >"$root/etc/hosts"
rc=0
in_image probe --servers "$named" --local pzoo-0 >"$work/probe-named.out" 2>&1 || rc=$?
rm -f "$root/etc/hosts"
((rc == 0)) || { cat "$work/probe-named.out" >&2; fail "the image's zkverify probe by host name exited $rc"; }
pass "chroot: zkverify probe with the servers named through /etc/hosts: $(head -n 1 "$work/probe-named.out")"

port=$(perl -MIO::Socket::IP -e 'print IO::Socket::IP->new(Listen => 1, LocalHost => "127.0.0.1", LocalPort => 0)->sockport')
# Started directly (not through in_image's subshell), so $! is the sidecar itself (chroot execs it).
chroot --userspec=65532:65532 "$root" zkverify serve --servers "$servers" --local pzoo-0 \
  --listen "127.0.0.1:$port" --interval 500ms >"$work/serve.out" 2>&1 &
serve_pid=$!
status=""
for _ in $(seq 60); do
  status=$(curl -s -o "$work/readyz" -w '%{http_code}' --max-time 2 "http://127.0.0.1:$port/readyz?verbose" || true)
  [[ $status == 200 ]] && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$work/serve.out" >&2; fail "the image's zkverify serve exited"; }
  sleep 0.5
done
[[ $status == 200 ]] || { cat "$work/serve.out" "$work/readyz" >&2; fail "/readyz answered '$status' for 30 s, not 200"; }
pass "chroot: zkverify serve answers /readyz 200: $(tr '\n' ' ' <"$work/readyz")"
curl -s --max-time 2 "http://127.0.0.1:$port/metrics" | grep -qxF "zkverify_build_info{version=\"$version\"} 1" ||
  fail "the image's /metrics has no zkverify_build_info{version=\"$version\"} 1"
pass "chroot: /metrics says zkverify_build_info{version=\"$version\"} 1"
kill -TERM "$serve_pid"
rc=0
wait "$serve_pid" || rc=$?
serve_pid=""
((rc == 0)) || { cat "$work/serve.out" >&2; fail "zkverify serve exited $rc on SIGTERM"; }
pass "zkverify serve stopped on SIGTERM"
echo "PASS: test-image.sh"
