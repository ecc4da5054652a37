# zkverify smoke (issue 11): sources by library. Paths are relative to the top source directory.
set(ZKVERIFY_SMOKE_MODEL_SOURCES verifier/judge/smoke_judge.cpp verifier/render/junit.cpp verifier/render/smoke_view.cpp)
set(ZKVERIFY_SMOKE_PROBES_SOURCES probes/smoke_cases.cpp)
set(ZKVERIFY_SMOKE_COMMANDS_SOURCES verifier/commands/smoke.cpp)
