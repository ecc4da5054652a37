#!/usr/bin/env bash
# Installs zkverify's build and test dependencies from Debian's packages.
# Idempotent: does nothing (and needs no network) when everything is present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build clang-14 clang-format-14 clang-tidy-14
  libzookeeper-mt-dev libssl-dev openssl libsasl2-dev libsasl2-modules libboost-dev libcli11-dev libfmt-dev catch2 nlohmann-json3-dev
  # the real server for integration tests, and the tools the lab and benchmark use
  zookeeper default-jre-headless netcat-openbsd hyperfine curl procps perl
  # a real Kerberos realm for SASL GSSAPI tests (tests/lab/zklab up --kerberos: its own KDC), and
  # Cyrus SASL's GSSAPI mechanism
  krb5-kdc krb5-admin-server libsasl2-modules-gssapi-mit
  # when zkverify's own Kerberos credentials expire (probes/kerberos.cpp)
  libkrb5-dev
  # real Kafka-broker clients in tests (tests/lab/ZkBroker.java, run from source: the JDK's compiler)
  openjdk-17-jdk-headless
  # the stacks of a zkverify that a test caught hanging, in the test's failure message
  gdb
  # the Kubernetes-shaped lab (tests/lab/zkpods): a network namespace, its partitions, setpriv
  iproute2 iptables util-linux
  # real consumers in tests: a Prometheus that scrapes the sidecar, a browser for its page, a JUnit
  # reader and a schema validator for smoke's XML, a Python client for the benchmark, a YAML linter
  prometheus chromium python3-junitparser libxml2-utils python3-kazoo python3-jsonschema yamllint
  # fuzzing (clang-14 with libFuzzer); packaging: a man page, the .deb checker, the container tools
  libfuzzer-14-dev help2man lintian dpkg-dev fakeroot buildah podman
  # the shells whose completion scripts are generated, parsed and tested (bash is essential)
  zsh fish
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
# --no-install-recommends keeps zookeeperd (a system service) out: the lab starts its own servers.
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
