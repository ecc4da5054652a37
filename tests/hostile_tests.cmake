# hostile (issue 13, parts 2-3): test sources, relative to tests/.
set(ZKVERIFY_HOSTILE_UNIT_TESTS)
set(ZKVERIFY_HOSTILE_INTEGRATION_TESTS)
