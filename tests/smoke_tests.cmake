# zkverify smoke (issue 11): test sources, relative to tests/.
set(ZKVERIFY_SMOKE_UNIT_TESTS)
set(ZKVERIFY_SMOKE_INTEGRATION_TESTS)
