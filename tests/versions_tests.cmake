# versions (issue 17): test sources, relative to tests/.
set(ZKVERIFY_VERSIONS_UNIT_TESTS unit/versions_test.cpp)
set(ZKVERIFY_VERSIONS_INTEGRATION_TESTS)
