# zkverify serve and probe (issue 10): test sources, relative to tests/.
set(ZKVERIFY_SIDECAR_UNIT_TESTS)
set(ZKVERIFY_SIDECAR_INTEGRATION_TESTS)
