# auth (issue 13, part 1): test sources, relative to tests/.
set(ZKVERIFY_AUTH_UNIT_TESTS unit/auth_test.cpp)
set(ZKVERIFY_AUTH_INTEGRATION_TESTS integration/auth_test.cpp)
