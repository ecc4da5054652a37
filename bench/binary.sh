# Sourced by the benchmarks: the dependencies installed, and $zkverify, the binary they time: $ZKVERIFY
# when given (a Release build already made), else a Release build of this tree in build-bench.
scripts/install-deps.sh
zkverify=${ZKVERIFY:-}
if [[ -z $zkverify ]]; then
  cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-bench -j "$(nproc)" --target zkverify >/dev/null
  zkverify=$PWD/build-bench/zkverify
fi
zkverify=$(realpath "$zkverify")
