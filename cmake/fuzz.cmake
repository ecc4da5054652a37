# libFuzzer targets (issue 13): -DZKVERIFY_FUZZ=ON with clang.
option(ZKVERIFY_FUZZ "Build the libFuzzer targets (fuzz_*); needs clang" OFF)
