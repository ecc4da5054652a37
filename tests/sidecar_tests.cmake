# zkverify serve and probe (issue 10): test sources, relative to tests/.
set(ZKVERIFY_SIDECAR_UNIT_TESTS unit/sidecar_readiness_test.cpp unit/sidecar_pages_test.cpp unit/sidecar_http_test.cpp)
set(ZKVERIFY_SIDECAR_INTEGRATION_TESTS integration/sidecar_test.cpp)
# The manifests under deploy/ are read by the tests (yamllint, and the sidecar's args run on the lab).
set_source_files_properties(integration/sidecar_test.cpp unit/sidecar_pages_test.cpp PROPERTIES
  COMPILE_DEFINITIONS "ZKVERIFY_SOURCE_DIR=\"${CMAKE_CURRENT_SOURCE_DIR}/..\"")
