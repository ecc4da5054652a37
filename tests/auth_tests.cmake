# auth (issue 13, part 1): test sources, relative to tests/.
set(ZKVERIFY_AUTH_UNIT_TESTS)
set(ZKVERIFY_AUTH_INTEGRATION_TESTS)
