# hostile (issue 13, parts 2-3): test sources, relative to tests/.
set(ZKVERIFY_HOSTILE_UNIT_TESTS unit/hostile_peers_test.cpp unit/fuzz_regressions_test.cpp)
set(ZKVERIFY_HOSTILE_INTEGRATION_TESTS)
