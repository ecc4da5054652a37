# zkverify smoke (issue 11): test sources, relative to tests/.
set(ZKVERIFY_SMOKE_UNIT_TESTS unit/smoke_cases_test.cpp unit/smoke_judge_test.cpp unit/smoke_view_test.cpp unit/junit_test.cpp)
set(ZKVERIFY_SMOKE_INTEGRATION_TESTS integration/smoke_test.cpp)
